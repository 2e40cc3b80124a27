"""SES has no idempotency key: a send accepted by SES but not recorded (the worker crashed) is
reconciled from SES's own send event (tagged with the delivery key), so the retry after the lease
expiry does not send a second email."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.handlers.delivery import email_handler
from reminders.handlers.ses_events import handler as ses_events_handler

from tests.support.aws import sent_emails
from tests.support.lambda_runtime import FakeContext, call_api, invoke_batch, receive


class Crash(BaseException):
    """A worker dying mid-invocation (not an exception the batch processor would catch)."""


def _ses_send_event(reminder_id: str, channel_id: str, key: str, message_id: str) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "7f1e3c5a-0000-0000-0000-000000000000",
        "detail-type": "Email Sent",
        "source": "aws.ses",
        "account": "111111111111",
        "time": "2026-11-29T08:00:00Z",
        "region": "us-east-1",
        "resources": [],
        "detail": {
            "eventType": "Send",
            "mail": {
                "messageId": message_id,
                "timestamp": "2026-11-29T08:00:00Z",
                "tags": {"delivery_key": [key], "reminder_id": [reminder_id], "channel_id": [channel_id]},
            },
        },
    }


def test_crash_after_ses_accepted_is_reconciled_by_send_event_and_not_resent(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs = boto3.client("sqs")
    status, reminder = call_api(
        "POST",
        "/reminders",
        {
            "key": "renewal:acct-9:2026-12-20:email",
            "account_id": "acct-9",
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "email", "to": "someone@example.com"}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201
    sender = runtime.deliverer().senders["email"]
    real_send = sender.send

    def send_then_crash(*args: Any) -> Any:
        real_send(*args)
        raise Crash("worker died after SES accepted")

    monkeypatch.setattr(sender, "send", send_then_crash)
    msgs = receive(sqs, aws["EMAIL_QUEUE_URL"])
    with pytest.raises(Crash):
        invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], msgs)
    assert len(sent_emails()) == 1
    d = reminder["deliveries"][0]
    out = ses_events_handler(
        _ses_send_event(reminder["id"], d["channel_id"], d["key"], sent_emails()[0].id), FakeContext()
    )
    assert out == {"outcome": "reconciled"}
    monkeypatch.setattr(sender, "send", real_send)
    # the message comes back (visibility), the delivery is already delivered: no second email
    sqs.change_message_visibility(
        QueueUrl=aws["EMAIL_QUEUE_URL"], ReceiptHandle=msgs[0]["ReceiptHandle"], VisibilityTimeout=0
    )
    result = invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    assert result["batchItemFailures"] == []
    assert len(sent_emails()) == 1
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    assert got["deliveries"][0]["state"] == "delivered"
    assert got["deliveries"][0]["history"][-1]["event"] == "provider_event"
    # the same event again (EventBridge is at-least-once) changes nothing
    again = ses_events_handler(
        _ses_send_event(reminder["id"], d["channel_id"], d["key"], sent_emails()[0].id), FakeContext()
    )
    assert again == {"outcome": "already_delivered"}
