"""Each function logs what it runs on at cold start and its clients' settings after the first call."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger
from botocore.config import Config
from reminders import runtime
from reminders.handlers import coldstart


@pytest.fixture
def out(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """A fresh process: the function's logger writes here."""
    stream = io.StringIO()
    # INFO whatever the environment says: this test reads the INFO lines a cold start writes.
    logger = Logger(service=f"coldstart-{uuid.uuid4().hex}", stream=stream, level="INFO")
    monkeypatch.setattr(runtime, "logger", lambda: logger)
    coldstart.reset()
    yield stream
    coldstart.reset()


def logged(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]


def test_cold_start_logs_powertools_version_then_client_settings_once(
    out: io.StringIO,
) -> None:
    clients = []

    @coldstart.reported
    def handler(event: Any, context: Any) -> str:
        # Clients are made in one place (adapters/clients.make_client), which keeps the list the
        # log reads (no scan of the garbage collector's objects at cold start).
        from reminders.adapters import clients as made

        client = boto3.client(
            "sqs",
            region_name="us-east-1",
            config=Config(retries={"mode": "standard", "total_max_attempts": 2}, connect_timeout=2),
        )
        made.MADE.append(client)
        clients.append(client)
        return "ok"

    assert handler({}, None) == "ok"
    assert handler({}, None) == "ok"
    lines = logged(out)
    assert [line["action"] for line in lines] == ["cold_start", "client_settings"]
    assert lines[0]["powertools_version"] == version("aws-lambda-powertools")
    sqs = [c for c in lines[1]["clients"] if c["service"] == "sqs"]
    assert {"service": "sqs", "retry_mode": "standard", "max_attempts": 2, "connect_timeout": 2} in [
        {k: c[k] for k in ("service", "retry_mode", "max_attempts", "connect_timeout")} for c in sqs
    ]
    assert all("read_timeout" in c for c in sqs)


def test_client_settings_are_logged_even_when_the_first_call_fails(
    out: io.StringIO,
) -> None:
    @coldstart.reported
    def handler(event: Any, context: Any) -> str:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        handler({}, None)
    assert [line["action"] for line in logged(out)] == ["cold_start", "client_settings"]
