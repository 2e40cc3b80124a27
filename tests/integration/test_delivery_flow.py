"""A reminder created through the API is delivered to a real local HTTP receiver exactly once per
key across a 429, a 500 and a redelivered duplicate; a 400 ends in dead_letter with the message in
the DLQ carrying its reason. Real handlers, moto SQS/DynamoDB, real HTTP."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders.handlers.delivery import email_handler, webhook_handler
from reminders_ops.local.receiver import Behaviour

from tests.support.lambda_runtime import call_api, invoke_batch, receive


def _create(
    url: str, key: str = "renewal-reminder:acct-1:2026-12-20:webhook", due_in: float = -1, **extra: Any
) -> dict[str, Any]:
    body = {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + timedelta(seconds=due_in)).isoformat(),
        "channels": [{"type": "webhook", "url": url + "/hooks"}],
        "template": {"id": "renewal", "version": 1},
        "data": {"renewal_date": "2026-12-20"},
        **extra,
    }
    status, payload = call_api("POST", "/reminders", body)
    assert status == 201, payload
    return payload


def _no_sleep(*_: Any) -> None:
    raise AssertionError("the worker must never sleep")


def test_429_500_and_duplicate_deliver_once_per_key(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "sleep", _no_sleep)
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    receiver.script("*", [Behaviour(429, retry_after="0"), Behaviour(500)])
    reminder = _create(receiver.url)
    key = reminder["deliveries"][0]["key"]

    # 1st receive: 429 -> visibility set to Retry-After (+ jitter), reported as a batch item failure
    msgs = receive(sqs, url)
    assert len(msgs) == 1
    result = invoke_batch(webhook_handler, sqs, url, msgs)
    assert result["batchItemFailures"] == [{"itemIdentifier": msgs[0]["MessageId"]}]
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    d = got["deliveries"][0]
    assert d["state"] == "retryable" and d["attempts"] == 0 and d["throttles"] == 1
    assert d["history"][-1]["outcome"] == "throttled" and d["history"][-1]["status"] == 429

    # The record comes back (moto honours the visibility we set: force it visible now)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"], VisibilityTimeout=0)
    _force_due(reminder["id"])
    msgs = receive(sqs, url)
    result = invoke_batch(webhook_handler, sqs, url, msgs)
    assert len(result["batchItemFailures"]) == 1
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    assert got["deliveries"][0]["attempts"] == 1 and got["deliveries"][0]["last_error"]["status"] == 500

    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"], VisibilityTimeout=0)
    _force_due(reminder["id"])
    dup = receive(sqs, url)
    assert len(dup) == 1
    result = invoke_batch(webhook_handler, sqs, url, dup)
    assert result["batchItemFailures"] == []
    _status, got = call_api("GET", f"/reminders/{reminder['id']}")
    assert got["deliveries"][0]["state"] == "delivered"

    # A redelivered duplicate of the same logical message: acknowledged, not sent
    sqs.send_message(QueueUrl=url, MessageBody=dup[0]["Body"])
    result = invoke_batch(webhook_handler, sqs, url, receive(sqs, url))
    assert result["batchItemFailures"] == []
    snap = receiver.snapshot()
    assert snap["accepted"] == {key: 1}
    assert snap["posts"][key] == 3
    assert receive(sqs, url) == []


def _force_due(reminder_id: str) -> None:
    """Move next_attempt_at into the past (instead of waiting out the real backoff)."""
    from tests.support.aws import table

    item = table().get_item(Key={"pk": f"R#{reminder_id}", "sk": "R"})["Item"]
    for cid in item["dl"]:
        if "na" in item["dl"][cid]:
            table().update_item(
                Key={"pk": f"R#{reminder_id}", "sk": "R"},
                UpdateExpression="SET dl.#c.na = :p",
                ExpressionAttributeNames={"#c": cid},
                ExpressionAttributeValues={":p": "2000-01-01T00:00:00.000000Z"},
            )


def test_400_dead_letters_with_reason_in_dlq(aws: dict[str, str], receiver: Any) -> None:
    sqs = boto3.client("sqs")
    receiver.script("*", [Behaviour(400)])
    reminder = _create(receiver.url, key="cart-expiry:acct-1:cart-9")
    result = invoke_batch(
        webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], receive(sqs, aws["WEBHOOK_QUEUE_URL"])
    )
    assert result["batchItemFailures"] == []
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    d = got["deliveries"][0]
    assert d["state"] == "dead_letter" and d["dead_letter_reason"] == "permanent_failure"
    dl = receive(sqs, aws["WEBHOOK_DLQ_URL"])
    assert len(dl) == 1
    attrs = {k: v["StringValue"] for k, v in dl[0]["MessageAttributes"].items()}
    assert (
        attrs["reason"] == "permanent_failure" and attrs["attempts"] == "1" and attrs["last_status"] == "400"
    )
    assert attrs["delivery_key"] == d["key"]


def test_email_is_sent_through_ses_with_key_tag(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    status, reminder = call_api(
        "POST",
        "/reminders",
        {
            "key": "renewal:acct-2:2026-12-20:email",
            "account_id": "acct-2",
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "email", "to": "user@example.com"}],
            "template": {"id": "renewal", "version": 3},
            "data": {"plan": "pro"},
        },
    )
    assert status == 201
    result = invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    assert result["batchItemFailures"] == []
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    d = got["deliveries"][0]
    assert d["state"] == "delivered" and d["receipt"]
    from tests.support.aws import sent_emails

    assert len(sent_emails()) == 1


def test_a_dead_lettered_reminder_cancelled_through_the_api_is_not_sent_by_a_later_redrive(
    aws: dict[str, str], receiver: Any
) -> None:
    """400 -> dead letter; DELETE cancels it (200, not 409); the operator's CLI redrive then moves its
    DLQ message back to the source queue, and the consumer acknowledges it without a POST."""
    from reminders_ops.cli.dlq import redrive

    sqs = boto3.client("sqs")
    queue, dlq = aws["WEBHOOK_QUEUE_URL"], aws["WEBHOOK_DLQ_URL"]
    receiver.script("*", [Behaviour(400)])
    reminder = _create(receiver.url, key="cart-expiry:acct-1:cart-cancel-dl")
    invoke_batch(webhook_handler, sqs, queue, receive(sqs, queue))
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    assert got["deliveries"][0]["state"] == "dead_letter"

    status, cancelled = call_api("DELETE", f"/reminders/{reminder['id']}")
    assert status == 200, cancelled
    assert cancelled["state"] == "canceled" and cancelled["deliveries"][0]["state"] == "canceled"
    status, again = call_api("DELETE", f"/reminders/{reminder['id']}")
    assert status == 409, again  # nothing left to cancel

    report = redrive(sqs, dlq, queue, max_messages=10)
    assert len(report.moved) == 1
    result = invoke_batch(webhook_handler, sqs, queue, receive(sqs, queue))
    assert result["batchItemFailures"] == []  # acknowledged
    assert receive(sqs, queue) == [] and receive(sqs, dlq) == []
    _, after = call_api("GET", f"/reminders/{reminder['id']}")
    d = after["deliveries"][0]
    assert d["state"] == "canceled" and d["cycle"] == 0
    assert [h["event"] for h in d["history"]] == ["attempt", "cancel"]
    assert sum(receiver.snapshot()["posts"].values()) == 1  # only the original 400
