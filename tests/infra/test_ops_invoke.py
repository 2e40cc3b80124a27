"""`make invoke` / `reminders invoke`: sam local invoke with a container runtime, else in-process."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from reminders_ops import cli, invoke

from .conftest import ROOT, Synthesized


@pytest.fixture
def fresh_runtime() -> Iterator[None]:
    """The in-process invocation caches clients bound to its moto backend: forget them afterwards."""
    yield
    from reminders import runtime

    reset = getattr(runtime, "reset", None)
    if reset is not None:
        reset()


def test_without_a_container_runtime_it_invokes_in_process_and_says_so(
    fresh_runtime: None,
    synthesized: Synthesized,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(invoke, "container_runtime", lambda: "docker not found")
    event = ROOT / "events" / "api-health.json"
    code = cli.main(
        ["invoke", "--function", "Api", "--event", str(event), "--template", str(synthesized.template_path)]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert "mode: in-process (docker not found)" in err
    result = json.loads(out[out.index("{\n") :])
    assert result["statusCode"] == 200


def test_with_a_prepared_engine_it_runs_sam_local_invoke_against_moto_on_the_bridge(
    synthesized: Synthesized, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(invoke, "container_runtime", lambda: None)
    monkeypatch.setattr(invoke, "invoke_in_container", lambda *a: calls.append(a) or 0)
    event = "events/webhook-delivery-batch.json"
    template = str(synthesized.template_path)
    assert cli.main(["invoke", "-f", "WebhookDelivery", "-e", event, "-t", template]) == 0
    logical_id = next(
        lid
        for lid, r in synthesized.resources.items()
        if r["Metadata"]["aws:cdk:path"].endswith("/WebhookDeliveryFunction/Resource")
    )
    ((_, path, spec, _event),) = calls
    assert (str(path), spec.logical_id) == (template, logical_id)
    assert "mode: sam local invoke (container)" in capsys.readouterr().err


def test_a_container_runtime_needs_sam_and_a_working_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invoke.shutil, "which", lambda name: None)
    assert invoke.container_runtime() == "sam CLI not found"
    monkeypatch.setattr(invoke.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.delenv("REMINDERS_SAM_IMAGE", raising=False)
    assert invoke.container_runtime() == "no prepared stand-in Lambda image (tests/sam/run.sh)"
    monkeypatch.setenv("REMINDERS_SAM_IMAGE", "standin:arm64")

    class Failed:
        returncode = 1

    monkeypatch.setattr(invoke.subprocess, "run", lambda *a, **k: Failed())
    assert invoke.container_runtime() == "`docker info` failed (no running container runtime)"


def test_the_context_counts_down_from_the_function_timeout() -> None:
    context = invoke.LocalLambdaContext(
        function_name="f",
        memory_limit_in_mb=256,
        invoked_function_arn="arn:aws:lambda:r:1:function:f",
        timeout_seconds=2,
    )
    first = context.get_remaining_time_in_millis()
    assert 1900 < first <= 2000
    time.sleep(0.05)
    assert context.get_remaining_time_in_millis() < first
    assert context.aws_request_id and context.log_group_name == "/aws/lambda/f"


def test_cli_lists_the_invoke_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "invoke" in capsys.readouterr().out
