"""SES bounce and complaint events through the real handler on moto (issue 19): a permanent bounce
suppresses the address for the reminder's account (an item under its own key prefix), the next
email to it ends ``suppressed`` unsent; the delivered delivery is annotated, not regressed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
from reminders import runtime
from reminders.domain.suppression import address_hash
from reminders.handlers.delivery import email_handler
from reminders.handlers.ses_events import handler as ses_events_handler

from tests.support.aws import sent_emails
from tests.support.lambda_runtime import FakeContext, call_api, invoke_batch, receive

BOUNCE = "bounce@simulator.amazonses.com"


def _event(
    detail_type: str, event_type: str, d: dict[str, Any], rid: str, extra: dict[str, Any]
) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "7f1e3c5a-0000-0000-0000-00000000b0c0",
        "detail-type": detail_type,
        "source": "aws.ses",
        "account": "111111111111",
        "time": "2026-11-29T08:00:00Z",
        "region": "us-east-1",
        "resources": [],
        "detail": {
            "eventType": event_type,
            "mail": {
                "messageId": "ses-message-1",
                "timestamp": "2026-11-29T08:00:00Z",
                "destination": [d["destination"]],
                "tags": {"delivery_key": [d["key"]], "reminder_id": [rid], "channel_id": [d["channel_id"]]},
            },
            **extra,
        },
    }


def _create(key: str, to: str) -> dict[str, Any]:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": key,
            "account_id": "acct-9",
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "email", "to": to}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201
    return body


def test_permanent_bounce_event_suppresses_the_next_email_to_that_address(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    first = _create("renewal:acct-9:1", BOUNCE)
    invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    assert len(sent_emails()) == 1
    d = first["deliveries"][0]
    bounce = {
        "bounce": {
            "bounceType": "Permanent",
            "bounceSubType": "General",
            "bouncedRecipients": [{"emailAddress": BOUNCE, "diagnosticCode": "smtp; 550 5.1.1 user unknown"}],
            "timestamp": "2026-11-29T08:00:01Z",
            "feedbackId": "feedback-1",
        }
    }
    out = ses_events_handler(_event("Email Bounced", "Bounce", d, first["id"], bounce), FakeContext())
    assert out == {"outcome": "bounced_noted_delivered"}
    status, after = call_api("GET", f"/reminders/{first['id']}")
    assert status == 200
    assert after["deliveries"][0]["state"] == "delivered"
    assert after["deliveries"][0]["history"][-1]["outcome"] == "bounced"
    item = boto3.client("dynamodb").get_item(
        TableName=aws["TABLE_NAME"],
        Key={"pk": {"S": "SUP#acct-9"}, "sk": {"S": address_hash(BOUNCE) + "#*"}},
    )["Item"]
    assert item["r"]["S"] == "bounce_permanent" and BOUNCE not in str(item)

    second = _create("renewal:acct-9:2", BOUNCE.upper())
    invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    assert len(sent_emails()) == 1  # no second send
    status, body = call_api("GET", f"/reminders/{second['id']}")
    assert status == 200
    assert body["deliveries"][0]["state"] == "dead_letter"
    assert body["deliveries"][0]["dead_letter_reason"] == "suppressed"
    assert body["deliveries"][0]["attempts"] == 0


def test_complaint_event_suppresses_and_annotates(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    first = _create("renewal:acct-9:3", "complaint@simulator.amazonses.com")
    invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    d = first["deliveries"][0]
    complaint = {
        "complaint": {"complainedRecipients": [{"emailAddress": d["destination"]}], "feedbackId": "f2"}
    }
    out = ses_events_handler(
        _event("Email Complaint Received", "Complaint", d, first["id"], complaint), FakeContext()
    )
    assert out == {"outcome": "complained_noted_delivered"}
    (entry,) = runtime.suppressions().list("acct-9")
    assert entry.reason.value == "complaint" and entry.source == "ses:complaint:f2"


def test_operators_list_and_remove_suppressions_by_api_and_cli(
    aws: dict[str, str], capsys: Any, monkeypatch: Any
) -> None:
    from reminders.domain.suppression import SuppressionEntry, SuppressionReason
    from reminders_ops.cli import main

    runtime.suppressions().add(
        SuppressionEntry(
            "acct-9", address_hash(BOUNCE), SuppressionReason.BOUNCE, "ses:bounce:f", "2026-11-29T08:00:00Z"
        )
    )
    status, body = call_api("GET", "/suppressions", query={"account_id": "acct-9"})
    assert status == 200 and [e["address_hash"] for e in body["entries"]] == [address_hash(BOUNCE)]
    assert BOUNCE not in str(body)
    status, body = call_api("GET", "/suppressions", query={"account_id": "acct-other"})
    assert status == 200 and body["entries"] == []
    status, body = call_api(
        "DELETE", f"/suppressions/{address_hash(BOUNCE)}", query={"account_id": "acct-other"}
    )
    assert status == 404  # another account's entry is not removed
    status, body = call_api("DELETE", "/suppressions/not-a-hash", query={"account_id": "acct-9"})
    assert status == 422
    assert main(["suppression", "list", "--account", "acct-9", "--table", aws["TABLE_NAME"]]) == 0
    assert address_hash(BOUNCE) in capsys.readouterr().out
    assert (
        main(
            [
                "suppression",
                "remove",
                "--account",
                "acct-9",
                "--address",
                BOUNCE,
                "--table",
                aws["TABLE_NAME"],
            ]
        )
        == 0
    )
    assert runtime.suppressions().list("acct-9") == []
    status, body = call_api("DELETE", f"/suppressions/{address_hash(BOUNCE)}", query={"account_id": "acct-9"})
    assert status == 404
