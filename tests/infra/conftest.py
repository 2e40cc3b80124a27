"""Synthesize the stack once per test session and share it.

Synthesis starts a jsii/Node runtime and takes ~15 s, so it happens once: under pytest-xdist the
first worker synthesizes into a directory all workers share (guarded by a file lock) and the
others read the result.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Quiet, offline jsii/CDK, as `make` sets it.
for _key, _value in {
    "CDK_DISABLE_CLI_TELEMETRY": "1",
    "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
}.items():
    os.environ.setdefault(_key, _value)
STACK = "RemindersStack"


@dataclass(frozen=True)
class Synthesized:
    outdir: Path
    template: dict[str, Any]
    context: dict[str, Any]
    #: the RuntimeError synthesis raised (cdk-nag failures), or None
    error: str | None
    #: CDK's policy validation report (cdk-nag findings), when written
    report: dict[str, Any] | None

    @property
    def template_path(self) -> Path:
        return self.outdir / f"{STACK}.template.json"

    @property
    def resources(self) -> dict[str, Any]:
        resources: dict[str, Any] = self.template["Resources"]
        return resources


def cdk_json_context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]
    return context


def _synthesize(outdir: Path) -> None:
    from infra.app import build_app

    app, _ = build_app(cdk_json_context(), str(outdir))
    error = None
    try:
        app.synth()
    except RuntimeError as exc:  # cdk-nag findings fail synthesis; the template is still written
        error = str(exc)
    (outdir / "synth-result.json").write_text(json.dumps({"error": error}))


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[Synthesized]:
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent
    outdir = shared / "infra-cdk.out"
    with open(shared / "infra-synth.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (outdir / "synth-result.json").exists():
                outdir.mkdir(exist_ok=True)
                _synthesize(outdir)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    result = json.loads((outdir / "synth-result.json").read_text())
    report_path = outdir / "validation-report.json"
    yield Synthesized(
        outdir=outdir,
        template=json.loads((outdir / f"{STACK}.template.json").read_text()),
        context=cdk_json_context(),
        error=result["error"],
        report=json.loads(report_path.read_text()) if report_path.exists() else None,
    )


@pytest.fixture(scope="session")
def template(synthesized: Synthesized) -> Any:
    """``aws_cdk.assertions.Template`` of the synthesized stack."""
    from aws_cdk.assertions import Template

    return Template.from_json(synthesized.template)


@pytest.fixture(scope="session")
def logical_ids(synthesized: Synthesized) -> dict[str, str]:
    """Construct id (``EmailQueue``, ``ApiFunction`` ...) -> logical id, for unique construct ids."""
    from reminders_ops.provision import construct_name

    names: dict[str, list[str]] = {}
    for lid, resource in synthesized.resources.items():
        names.setdefault(construct_name(lid, resource), []).append(lid)
    return {name: lids[0] for name, lids in names.items() if len(lids) == 1}


@pytest.fixture(autouse=True)
def _no_real_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
