"""What a create costs in reads (issue 14, cost): a reminder this request created answers its view
without reading the shard cursor (no checkpoint can have passed it yet). Counted at the botocore
layer the handlers' own clients use, on moto."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from tests.support.lambda_runtime import call_api


def _body(key: str, due_in: timedelta, url: str) -> dict[str, Any]:
    return {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + due_in).isoformat(),
        "channels": [{"type": "webhook", "url": url + "/h"}],
        "template": {"id": "renewal", "version": 1},
        "data": {},
    }


def _dynamodb_calls() -> Counter[str]:
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        if model.service_model.service_name == "dynamodb":
            calls[model.name] += 1

    boto3._get_default_session().events.register("before-call", count)
    return calls


def test_create_of_a_far_reminder_reads_no_cursor(aws: dict[str, str], receiver: Any) -> None:
    calls = _dynamodb_calls()
    call_api("POST", "/reminders", _body("warm:1", timedelta(hours=2), receiver.url))  # per-process setup
    calls.clear()
    status, got = call_api("POST", "/reminders", _body("far:1", timedelta(hours=2), receiver.url))
    assert status == 201 and got["deliveries"][0]["state"] == "scheduled"
    assert calls["GetItem"] == 0, dict(calls)  # (PutItem: the row, and a shard cursor once per process)


def test_repeated_create_still_reads_the_cursor_for_its_state(aws: dict[str, str], receiver: Any) -> None:
    calls = _dynamodb_calls()
    body = _body("far:2", timedelta(hours=2), receiver.url)
    call_api("POST", "/reminders", body)
    calls.clear()
    status, got = call_api("POST", "/reminders", body)
    assert status == 200 and got["deliveries"][0]["state"] == "scheduled"
    assert calls["GetItem"] >= 2, dict(calls)  # the existing row, then the shard cursor
