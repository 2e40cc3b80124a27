"""Endpoint health through the API on moto with the real local receiver (issue 16): an endpoint
failing broadly is held (GET /endpoints/{id} says so, with its backlog and last error class), a
probe that the receiver answers resumes it; ``webhook-delivery: disable`` disables it, its other
deliveries dead-letter ``endpoint_disabled`` unsent, and POST /endpoints/{id}/enable + a DLQ redrive
delivers them once."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.handlers.delivery import webhook_handler
from reminders_ops.cli import dlq
from reminders_ops.local.receiver import Behaviour

from tests.conftest import NO_TRANSACTIONS
from tests.support.lambda_runtime import call_api, invoke_batch, receive


@pytest.fixture
def fast_health(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Two failures in a row hold an endpoint; probes due at once (real time, no 60 s waits)."""
    monkeypatch.setenv("REMINDERS_HEALTH_ALL_FAILED_SECONDS", "0")
    monkeypatch.setenv("REMINDERS_HEALTH_ALL_FAILED_MIN_SENDS", "2")
    monkeypatch.setenv("REMINDERS_HEALTH_PROBE_BASE_SECONDS", "0")
    monkeypatch.setenv("REMINDERS_HEALTH_CACHE_SECONDS", "0")
    runtime.reset()
    return aws


def _endpoint(receiver: Any) -> str:
    status, body = call_api("POST", "/endpoints", {"account_id": "acct-1", "url": receiver.url + "/hooks"})
    assert status == 201, body
    receiver.use_secret(body["secret"])
    return str(body["id"])


def _reminder(endpoint_id: str, n: int) -> str:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": f"renewal:acct-1:health-{n}",
            "account_id": "acct-1",
            "kind": "renewal",
            "due_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat(),
            "channels": [{"type": "webhook", "endpoint_id": endpoint_id}],
            "template": {"id": "renewal", "version": 1},
            "data": {"plan": "pro"},
        },
    )
    assert status == 201, body
    return str(body["deliveries"][0]["key"])


def _pump(aws: dict[str, str], until: Any, seconds: float = 60.0) -> None:
    sqs = boto3.client("sqs")
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, "not settled in time"
        msgs = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
        if msgs:
            invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], msgs)
        else:
            time.sleep(0.2)


def _health(endpoint_id: str) -> dict[str, Any]:
    status, body = call_api("GET", f"/endpoints/{endpoint_id}")
    assert status == 200, body
    return dict(body["health"])


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_a_failing_endpoint_is_held_shown_by_the_api_and_a_probe_resumes_it(
    fast_health: dict[str, str], receiver: Any
) -> None:
    ep = _endpoint(receiver)
    assert _health(ep)["state"] == "active"
    receiver.state.default = Behaviour(503)
    keys = [_reminder(ep, n) for n in range(3)]
    _pump(fast_health, lambda: _health(ep)["state"] == "held")
    h = _health(ep)
    assert h["why"] == "all_failed_60s" and h["last_error_class"] == "transient"
    assert h["backlog"] == 3 and h["oldest_pending_age_seconds"] > 0 and h["recent_success_ratio"] == 0.0
    receiver.state.default = Behaviour(200)
    _pump(fast_health, lambda: all(receiver.state.accepted[k] == 1 for k in keys))
    h = _health(ep)
    assert (h["state"], h["why"], h["transitions"]) == ("active", "probe_succeeded", 2)
    assert max(receiver.state.accepted.values()) == 1


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_a_receiver_disables_its_endpoint_and_enable_then_redrive_delivers(
    aws: dict[str, str], receiver: Any
) -> None:
    ep = _endpoint(receiver)
    receiver.state.default = Behaviour(503, steering="disable")
    first = _reminder(ep, 0)
    _pump(aws, lambda: _health(ep)["state"] == "disabled")
    assert _health(ep)["why"] == "receiver_disable"
    second = _reminder(ep, 1)
    sqs = boto3.client("sqs")
    _pump(aws, lambda: len(dlq.peek(sqs, aws["WEBHOOK_DLQ_URL"])) == 2)
    assert {m.reason for m in dlq.peek(sqs, aws["WEBHOOK_DLQ_URL"])} == {"endpoint_disabled"}
    assert receiver.state.posts[second] == 0  # never sent while disabled
    status, body = call_api("POST", f"/endpoints/{ep}/enable")
    assert status == 200 and body["health"]["state"] == "active" and body["health"]["why"] == "operator"
    receiver.state.default = Behaviour(200)
    dlq.redrive(sqs, aws["WEBHOOK_DLQ_URL"], aws["WEBHOOK_QUEUE_URL"], max_messages=10, sleep=lambda _s: None)
    _pump(aws, lambda: receiver.state.accepted[first] == 1 and receiver.state.accepted[second] == 1)
    status, body = call_api("POST", f"/endpoints/{ep}/disable")
    assert status == 200 and (body["health"]["state"], body["health"]["why"]) == ("disabled", "operator")


def test_enable_and_disable_are_tenant_scoped_and_name_a_bad_id(aws: dict[str, str], receiver: Any) -> None:
    ep = _endpoint(receiver)
    status, _ = call_api("POST", f"/endpoints/{ep}/disable", principal="arn:aws:iam::111111111111:role/other")
    assert status in (403, 404)
    assert _health(ep)["state"] == "active"  # nothing written
    status, body = call_api("POST", "/endpoints/not-an-id/enable")
    assert status == 422, body


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_the_cli_lists_shows_disables_and_enables_endpoints(
    fast_health: dict[str, str],
    receiver: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``reminders endpoints list|show|enable|disable`` on the table the stack's outputs name."""
    from reminders_ops import cli
    from reminders_ops.stackrefs import StackTarget

    monkeypatch.setattr(StackTarget, "outputs", lambda self: {"TableName": fast_health["TABLE_NAME"]})
    ep = _endpoint(receiver)
    receiver.state.default = Behaviour(503)
    _reminder(ep, 0)
    _reminder(ep, 1)
    _pump(fast_health, lambda: _health(ep)["state"] == "held")
    capsys.readouterr()

    def lines(*argv: str) -> list[dict[str, Any]]:
        assert cli.main(["endpoints", *argv]) == 0
        out = capsys.readouterr().out
        return [json.loads(x) for x in out.splitlines() if x.startswith("{") and '"endpoint_id"' in x]

    (held,) = lines("list", "--state", "held")
    assert held["endpoint_id"] == ep and held["why"] == "all_failed_60s"
    assert lines("list", "--account", "acct-other") == []
    (shown,) = lines("show", ep)
    assert shown["state"] == "held" and shown["backlog"] == 2 and shown["last_error_class"] == "transient"
    assert receiver.url not in json.dumps(shown)  # no URL printed
    (off,) = lines("disable", ep)
    assert (off["state"], off["why"]) == ("disabled", "operator") and _health(ep)["state"] == "disabled"
    (on,) = lines("enable", ep)
    assert on["state"] == "active" and _health(ep)["why"] == "operator"
    assert cli.main(["endpoints", "show", "nope"]) == 2
