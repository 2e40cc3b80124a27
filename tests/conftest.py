from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# No real AWS, ever: fake credentials and a pinned region before anything creates a client.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "MOTO_ACCOUNT_ID": "111111111111",
        "POWERTOOLS_METRICS_NAMESPACE": "Reminders",
        "POWERTOOLS_SERVICE_NAME": "reminders",
        "POWERTOOLS_DEV": "false",
    }
)
os.environ.pop("AWS_ENDPOINT_URL", None)

# The one DynamoDB backend switch: the DynamoDB contract suites (store, health, rate limiter) run
# on each of these. dynalite (npm, pinned in package.json) is a DynamoDB nobody here wrote.
DYNAMODB_BACKENDS = tuple(
    f"dynamodb-{b.strip()}" for b in os.environ.get("REMINDERS_TEST_DYNAMODB", "moto,dynalite").split(",")
)
DYNALITE = Path(__file__).resolve().parents[1] / "node_modules" / ".bin" / "dynalite"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def skip_if_moto_only(request: pytest.FixtureRequest) -> None:
    """On dynalite: skip a case marked ``moto_only(reason)`` (it needs what dynalite lacks)."""
    mark = request.node.get_closest_marker("moto_only")
    if mark is not None:
        pytest.skip(f"moto only: {mark.args[0] if mark.args else mark.kwargs['reason']}")


@pytest.fixture(scope="session")
def _dynalite() -> Iterator[str]:
    """dynalite on 127.0.0.1 for the session (in memory); its endpoint URL. Tables stay CREATING
    for 50 ms, as on AWS for longer: tests must wait for them (``table_exists``)."""
    if not DYNALITE.exists():
        raise RuntimeError(f"{DYNALITE} missing: run `make install` (npm ci) or REMINDERS_TEST_DYNAMODB=moto")
    port = _free_port()
    ms = ["--createTableMs", "50", "--deleteTableMs", "50", "--updateTableMs", "50"]
    proc = subprocess.Popen(
        [str(DYNALITE), "--host", "127.0.0.1", "--port", str(port), *ms],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):  # up when it accepts a connection (node starts in well under a second)
            if proc.poll() is not None:
                raise RuntimeError(f"dynalite exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("dynalite did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()  # by its pid: only the process this fixture started
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """moto in-process with the stack's resources; the runtime wired to them (fresh per test)."""
    from moto import mock_aws
    from reminders import runtime
    from reminders_ops.local.faithful import faithful_moto

    from tests.support.aws import create_resources

    faithful_moto()  # a batch's records run on concurrent threads: atomic conditional writes
    with mock_aws():
        env = create_resources()
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REMINDERS_RETRY_BASE_SECONDS", "2")
        monkeypatch.setenv("REMINDERS_RETRY_THROTTLE_BASE_SECONDS", "2")
        runtime.reset()
        yield env
        runtime.reset()


@pytest.fixture
def receiver() -> Iterator[Any]:
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders_ops.local.receiver import WebhookReceiver

    with WebhookReceiver(DEV_WEBHOOK_SECRET) as r:
        yield r
