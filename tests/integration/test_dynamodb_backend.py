"""The tiers' DynamoDB backend switch (tests/conftest.py) is real: on ``dynamodb-dynalite`` the
functions' client and the tests' own boto3 reach dynalite, and moto holds no table at all; every
test starts with an empty table (dynalite lives for the session: its tables are dropped after each)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from moto.backends import get_backend
from reminders import runtime


@pytest.mark.parametrize("run", [1, 2])  # the second run finds no item of the first
def test_the_functions_and_the_tests_reach_the_backend_the_run_names(
    aws: dict[str, str], request: pytest.FixtureRequest, run: int
) -> None:
    backend = request.node.callspec.params["aws"]
    functions: Any = runtime._client("dynamodb")
    tests: Any = boto3.client("dynamodb")
    moto_tables = get_backend("dynamodb")["111111111111"]["us-east-1"].tables
    for client in (functions, tests):
        assert client.list_tables()["TableNames"] == ["reminders"]
    assert tests.scan(TableName="reminders", Limit=1)["Items"] == []  # fresh: nothing of a former test
    tests.put_item(
        TableName="reminders", Item={"pk": {"S": "leftover"}, "sk": {"S": "x"}}
    )  # the next run's check
    if backend == "dynamodb-dynalite":
        assert functions.meta.endpoint_url.startswith("http://127.0.0.1:")
        assert tests.meta.endpoint_url == functions.meta.endpoint_url
        assert dict(moto_tables) == {}  # nothing of the run landed in moto's DynamoDB
    else:
        assert functions.meta.endpoint_url == "https://dynamodb.us-east-1.amazonaws.com"
        assert set(moto_tables) == {"reminders"}


def test_the_support_listing_queries_the_backend_the_run_names_when_a_former_test_cached_it(
    aws: dict[str, str],
) -> None:
    former = runtime.attention_index()  # as a former test (on the other backend) left it
    runtime.reset()  # what the ``aws`` fixture does between tests
    assert runtime.attention_index() is not former
    assert runtime.attention_index().client is runtime._client("dynamodb")


def test_reset_forgets_every_cached_factory_when_a_test_switches_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every cached factory of the runtime holds a client or something built on one: reset() must
    clear each, or a test on dynalite talks to the client a former test on moto cached."""
    cached = {
        name: f
        for name, f in vars(runtime).items()
        if hasattr(f, "cache_clear") and getattr(f, "__module__", None) == runtime.__name__
    }
    cleared: set[str] = set()
    for name, f in cached.items():
        monkeypatch.setattr(f, "cache_clear", lambda name=name: cleared.add(name))
    runtime.reset()
    assert cached and set(cached) - cleared == set()


def test_dynalite_does_not_outlive_a_test_session_when_it_is_terminated() -> None:
    import contextlib
    import os
    import subprocess
    import sys
    import time

    code = (
        "import sys; from tests.conftest import _free_port, start_dynalite; "
        "print(start_dynalite(_free_port()).pid, flush=True); sys.stdin.read()"
    )
    session = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert session.stdout is not None
    child = int(session.stdout.readline())
    session.terminate()  # as `timeout` or a CI runner ends a run: no teardown runs
    session.wait()
    end = time.monotonic() + 10  # a poll for the awaited state; the bound only ends a broken run
    try:
        while time.monotonic() < end:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise AssertionError("dynalite survived its session")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, 9)  # only the process this test's session started
