from __future__ import annotations

import os
import socket
import subprocess
import sys
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
_REAL_SLEEP = time.sleep  # before any test patches it (the proof tier's ``no_sleep``)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: Why a test is ``moto_only`` in the tiers (what dynalite 4.0.0 lacks).
NO_TRANSACTIONS = "dynalite has no TransactWriteItems (an endpoint's uses and events are transactions)"
NO_STREAMS = "dynalite has no DynamoDB Streams (the table's stream feeds this path)"


def skip_if_moto_only(request: pytest.FixtureRequest) -> None:
    """On dynalite: skip a case marked ``moto_only(reason)`` (it needs what dynalite lacks)."""
    mark = request.node.get_closest_marker("moto_only")
    if mark is not None:
        pytest.skip(f"moto only: {mark.args[0] if mark.args else mark.kwargs['reason']}")


def start_dynalite(port: int) -> subprocess.Popen[bytes]:
    """dynalite on 127.0.0.1:``port`` (in memory), a child of this process."""
    ms = ["--createTableMs", "50", "--deleteTableMs", "50", "--updateTableMs", "50"]
    return subprocess.Popen(
        [str(DYNALITE), "--host", "127.0.0.1", "--port", str(port), *ms],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the session's process ends however it ends (a killed
    run runs no teardown)."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (in memory)


@pytest.fixture(scope="session")
def _dynalite() -> Iterator[str]:
    """dynalite on 127.0.0.1 for the session (in memory); its endpoint URL. Tables stay CREATING
    for 50 ms, as on AWS for longer: tests must wait for them (``table_exists``)."""
    if not DYNALITE.exists():
        raise RuntimeError(f"{DYNALITE} missing: run `make install` (npm ci) or REMINDERS_TEST_DYNAMODB=moto")
    port = _free_port()
    proc = start_dynalite(port)
    try:
        for _ in range(300):  # up when it accepts a connection (node starts in well under a second)
            if proc.poll() is not None:
                raise RuntimeError(f"dynalite exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                _REAL_SLEEP(0.05)
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


#: The tiers whose ``aws`` fixture runs once per DynamoDB backend: DynamoDB on that backend (dynalite
#: by ``AWS_ENDPOINT_URL_DYNAMODB``: in-process moto lets a request to another endpoint through), every
#: other service on in-process moto.
DYNAMODB_TIERS = ("integration", "proof")
#: Within those tiers, `make test` runs these modules on dynalite too: the ones whose claims rest on
#: DynamoDB's semantics (conditional writes racing, numbers, item sizes, queries and their pages,
#: the proof matrix); the whole tiers on dynalite cost far more than the ~5 minutes allowed
#: (``REMINDERS_TEST_DYNALITE_TIERS=all`` runs every module of them on dynalite).
DYNALITE_MODULES = frozenset(
    {
        "integration/test_api.py",
        "integration/test_concurrent_records.py",
        "integration/test_delivery_flow.py",
        "integration/test_dynamodb_backend.py",
        "integration/test_endpoint_lookup_reads.py",
        "integration/test_review24_numbers.py",
        "integration/test_suppression_keyed_api.py",
        "integration/test_unreadable_numbers.py",
        "proof/test_lost_answers.py",
        "proof/test_matrix.py",
        "proof/test_matrix_health.py",
        "proof/test_matrix_retry.py",
        "proof/test_never_twice.py",
        "proof/test_nothing_lost.py",
        "proof/test_parked_copies.py",
        "proof/test_support_listing.py",
    }
)
_TESTS = Path(__file__).resolve().parent


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "aws" not in metafunc.fixturenames:
        return
    rel = metafunc.definition.path.resolve().relative_to(_TESTS)
    if rel.parts[0] not in DYNAMODB_TIERS:
        return
    every = os.environ.get("REMINDERS_TEST_DYNALITE_TIERS") == "all"
    chosen = every or rel.as_posix() in DYNALITE_MODULES
    metafunc.parametrize("aws", DYNAMODB_BACKENDS if chosen else ("dynamodb-moto",), indirect=True)


def drop_tables(endpoint: str) -> None:
    """Delete every table at ``endpoint`` and wait until each is gone (the next test's are fresh)."""
    import boto3

    ddb = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
    names = ddb.list_tables()["TableNames"]
    for name in names:
        ddb.delete_table(TableName=name)
    for name in names:
        ddb.get_waiter("table_not_exists").wait(
            TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 600}
        )


@pytest.fixture
def aws(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """moto in-process with the stack's resources; the runtime wired to them (fresh per test). In
    the DYNAMODB_TIERS once per backend: on ``dynamodb-dynalite`` the table lives in dynalite (fresh:
    every table is dropped after the test) and a ``moto_only`` case is skipped."""
    from moto import mock_aws
    from reminders import runtime
    from reminders_ops.local.faithful import faithful_moto

    from tests.support.aws import create_resources

    backend = getattr(request, "param", "dynamodb-moto")
    endpoint = None
    if backend == "dynamodb-dynalite":
        skip_if_moto_only(request)
        endpoint = request.getfixturevalue("_dynalite")
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
    elif backend != "dynamodb-moto":
        raise ValueError(backend)
    faithful_moto()  # a batch's records run on concurrent threads: atomic conditional writes
    try:
        with mock_aws():
            with pytest.MonkeyPatch.context() as waits:  # waiting for ACTIVE is the test's set-up
                waits.setattr(time, "sleep", _REAL_SLEEP)
                env = create_resources()
            for k, v in env.items():
                monkeypatch.setenv(k, v)
            monkeypatch.setenv("REMINDERS_RETRY_BASE_SECONDS", "2")
            monkeypatch.setenv("REMINDERS_RETRY_THROTTLE_BASE_SECONDS", "2")
            runtime.reset()
            yield env
            runtime.reset()
    finally:
        if endpoint is not None:
            with pytest.MonkeyPatch.context() as waits:
                waits.setattr(time, "sleep", _REAL_SLEEP)
                drop_tables(endpoint)


@pytest.fixture
def receiver() -> Iterator[Any]:
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders_ops.local.receiver import WebhookReceiver

    with WebhookReceiver(DEV_WEBHOOK_SECRET) as r:
        yield r
