"""The SnapStart option (issue 32.2; context ``reminders:snapStart``, off by default): every function
snapshots its published versions, and every invoker calls the ``live`` alias (SnapStart serves only
versions and aliases, never ``$LATEST``). Synthesized with the option on, cdk-nag included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import STACK, Synthesized, cdk_json_context


def _of_type(resources: dict[str, Any], kind: str) -> dict[str, Any]:
    return {lid: r for lid, r in resources.items() if r["Type"] == kind}


@pytest.fixture(scope="module")
def snap(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("snapstart-cdk.out")
    app, _ = build_app({**cdk_json_context(), "reminders:snapStart": "true"}, str(outdir))
    error = None
    try:
        app.synth()
    except RuntimeError as exc:  # cdk-nag findings fail synthesis
        error = str(exc)
    report = outdir / "validation-report.json"
    return {
        "error": error,
        "template": json.loads((outdir / f"{STACK}.template.json").read_text()),
        "report": json.loads(report.read_text()) if report.exists() else None,
    }


def test_snapstart_is_off_when_the_option_is_not_given(synthesized: Synthesized) -> None:
    resources = synthesized.resources
    functions = _of_type(resources, "AWS::Lambda::Function")
    assert functions
    assert all("SnapStart" not in f["Properties"] for f in functions.values())
    assert _of_type(resources, "AWS::Lambda::Alias") == {}
    assert _of_type(resources, "AWS::Lambda::Version") == {}


def test_every_function_snapshots_its_published_versions_when_snapstart_is_on(snap: dict[str, Any]) -> None:
    resources = snap["template"]["Resources"]
    functions = _of_type(resources, "AWS::Lambda::Function")
    ours = {
        lid
        for lid, f in functions.items()
        if str(f["Properties"].get("Handler", "")).startswith("reminders.")
    }
    assert len(ours) == 9
    for lid in ours:
        assert functions[lid]["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}, lid
        assert functions[lid]["Properties"]["Runtime"] in ("python3.12", "python3.13"), lid  # 3.12+ only
    versions = _of_type(resources, "AWS::Lambda::Version")
    aliases = _of_type(resources, "AWS::Lambda::Alias")
    assert {v["Properties"]["FunctionName"]["Ref"] for v in versions.values()} == ours
    assert {a["Properties"]["FunctionName"]["Ref"] for a in aliases.values()} == ours
    assert {a["Properties"]["Name"] for a in aliases.values()} == {"live"}


def test_every_invoker_calls_the_alias_when_snapstart_is_on(snap: dict[str, Any]) -> None:
    """$LATEST would run without the snapshot: mappings, integrations, rule targets, permissions and
    asynchronous-invoke settings all name the alias."""
    resources = snap["template"]["Resources"]
    aliases = set(_of_type(resources, "AWS::Lambda::Alias"))
    functions = set(_of_type(resources, "AWS::Lambda::Function"))

    def target(value: Any) -> str:
        text = json.dumps(value)
        named = {lid for lid in aliases | functions if f'"{lid}"' in text}
        assert len(named) == 1, text
        return named.pop()

    mappings = _of_type(resources, "AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 5  # dispatch, email, webhook; the receipts and opevents streams
    for lid, m in mappings.items():
        assert target(m["Properties"]["FunctionName"]) in aliases, lid
    integrations = _of_type(resources, "AWS::ApiGatewayV2::Integration")
    assert len(integrations) == 2
    for lid, i in integrations.items():
        assert target(i["Properties"]["IntegrationUri"]) in aliases, lid
    rules = [r for r in _of_type(resources, "AWS::Events::Rule").values() if "Targets" in r["Properties"]]
    lambda_targets = [
        t
        for r in rules
        for t in r["Properties"]["Targets"]
        if "Lambda" in json.dumps(t) or "Function" in json.dumps(t)
    ]
    assert lambda_targets
    for t in lambda_targets:
        if any(f'"{lid}"' in json.dumps(t["Arn"]) for lid in aliases | functions):
            assert target(t["Arn"]) in aliases
    for lid, p in _of_type(resources, "AWS::Lambda::Permission").items():
        assert target(p["Properties"]["FunctionName"]) in aliases, lid
    configs = _of_type(resources, "AWS::Lambda::EventInvokeConfig")
    assert len(configs) == 2  # the tick and the SES events function
    for lid, c in configs.items():
        qualifier = c["Properties"]["Qualifier"]
        assert qualifier == "live" or target(qualifier) in aliases, lid


def test_snapstart_synthesis_has_no_unacknowledged_nag_findings(snap: dict[str, Any]) -> None:
    assert snap["error"] is None, snap["error"]
    violations: list[Any] = []
    for report in (snap["report"] or {}).get("pluginReports", []):
        violations += report.get("violations", [])
    assert violations == []


def test_docs_state_the_snapstart_option_cost_and_caveats() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "deploying.md").read_text().lower()
    for needed in ("reminders:snapstart", "3.12", "unmeasured", "restore", "uniqueness", "cost"):
        assert needed in text, needed
