"""The `sam local invoke` driver's fixtures: a moto server on the docker bridge gateway (the only
address besides 127.0.0.1 we serve on), the template's resources provisioned in it, and the engine
tests/sam/run.sh prepared. Collected only under run.sh (REMINDERS_SAM_IMAGE set), so the default
`pytest -n 2` run does not run these twice; under run.sh a missing engine fails, never skips."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "cdk.out" / "RemindersStack.template.json"
LOCAL_TEMPLATE = ROOT / "cdk.out" / "RemindersStack.sam-local.template.json"

if not os.environ.get("REMINDERS_SAM_IMAGE"):
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def sam() -> Any:
    from reminders_ops.samlocal import SamLocal

    return SamLocal.from_environment()


@pytest.fixture(scope="session")
def template() -> dict[str, Any]:
    if not TEMPLATE.is_file():
        pytest.fail(f"{TEMPLATE} is missing: make synth")
    loaded: dict[str, Any] = json.loads(TEMPLATE.read_text())
    return loaded


@pytest.fixture(scope="session")
def local_template(sam: Any, template: dict[str, Any]) -> Path:
    from reminders_ops.samlocal import EMULATED_TIMEOUT_SECONDS, LOCAL_ONLY_VARIABLES

    path = sam.write_template(template, LOCAL_TEMPLATE)
    print(
        f"\n[sam] template: {path.name}, a copy of {TEMPLATE.name} that declares "
        f"{', '.join(LOCAL_ONLY_VARIABLES)} (SAM passes only declared variables)"
        + (
            f" and raises every Timeout to {EMULATED_TIMEOUT_SECONDS} s: {sam.arch} runs under emulation here"
            if sam.emulated
            else "; timeouts as deployed"
        )
    )
    return path


@pytest.fixture(scope="session")
def emulator(sam: Any) -> Iterator[Any]:
    from reminders_ops.local.emulator import Emulator

    # moto fixed its account when it was imported (tests/conftest.py sets MOTO_ACCOUNT_ID first).
    account = os.environ.get("MOTO_ACCOUNT_ID", "123456789012")
    server = Emulator(account_id=account, region=sam.region, host=sam.gateway).start()
    yield server
    server.stop()


@pytest.fixture
def stack(emulator: Any, template: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A clean moto (reset) with the template's resources; this process's clients point at it."""
    from reminders import runtime
    from reminders_ops.provision import AwsClients, provision

    urllib.request.urlopen(urllib.request.Request(f"{emulator.endpoint}/moto-api/reset", method="POST"))
    for key, value in emulator.environment().items():
        monkeypatch.setenv(key, value)
    runtime.reset()
    yield provision(template, AwsClients.create(endpoint_url=emulator.endpoint, region_name=emulator.region))
    runtime.reset()
