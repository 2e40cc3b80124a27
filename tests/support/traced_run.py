"""One create and one webhook send through the real handlers on moto, in a process that looks like
a traced Lambda environment (run by tests/integration/test_tracing.py as a subprocess, so the X-Ray
SDK's global recorder starts in its Lambda mode and emits over UDP to the test's socket).

Then an email send, a receiver's receipt through ReceiptsFunction and the reminder's stream record
through OpEventsFunction (each handed the stream event the mapping would).

Prints one JSON line: the reminder id, the delivery key and the headers the receiver got, and the
email reminder's id and delivery key."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime

#: What must never reach a trace: the reminder's data, its key, the account, the destination.
PERSONAL = {"email": "jane.doe@example.com", "name": "Jane Doe"}
KEY = "renewal-reminder:acct-traced:jane.doe.example.com"


def main() -> None:
    sys.path.insert(0, os.getcwd())
    import boto3
    from moto import mock_aws
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders.handlers.delivery import email_handler, webhook_handler
    from reminders.handlers.opevents import handler as opevents_handler
    from reminders.handlers.receipts import handler as receipts_handler
    from reminders_ops.local.receiver import WebhookReceiver

    from tests.support.aws import create_resources
    from tests.support.lambda_runtime import FakeContext, call_api, invoke_batch, receive

    with mock_aws(), WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        os.environ.update(create_resources())
        status, created = call_api(
            "POST",
            "/reminders",
            {
                "key": KEY,
                "account_id": "acct-traced",
                "kind": "renewal",
                "due_at": datetime.now(UTC).isoformat(),
                "channels": [{"type": "webhook", "url": receiver.url + "/hooks"}],
                "template": {"id": "renewal", "version": 1},
                "data": PERSONAL,
            },
        )
        assert status == 201, created
        sqs = boto3.client("sqs")
        url = os.environ["WEBHOOK_QUEUE_URL"]
        result = invoke_batch(webhook_handler, sqs, url, receive(sqs, url))
        assert result["batchItemFailures"] == [], result
        key = created["deliveries"][0]["key"]
        _body, headers = receiver.state.last_post[key]

        status, mail = call_api(
            "POST",
            "/reminders",
            {
                "key": KEY + ":email",
                "account_id": "acct-traced",
                "kind": "renewal",
                "due_at": datetime.now(UTC).isoformat(),
                "channels": [{"type": "email", "to": PERSONAL["email"]}],
                "template": {"id": "renewal", "version": 1},
                "data": PERSONAL,
            },
        )
        assert status == 201, mail
        url = os.environ["EMAIL_QUEUE_URL"]
        result = invoke_batch(email_handler, sqs, url, receive(sqs, url))
        assert result["batchItemFailures"] == [], result

        # The receiver's receipt, as its stream record reaches ReceiptsFunction (its reason is the
        # receiver's text: personal, never in a trace).
        receipt = {
            "pk": {"S": f"RCPT#{key}"},
            "sk": {"S": "E#evt_traced_1"},
            "rid": {"S": created["id"]},
            "cid": {"S": "webhook-0"},
            "st": {"S": "processed"},
            "et": {"S": datetime.now(UTC).isoformat()},
            "rs": {"S": f"{PERSONAL['name']} read it"},
        }
        stream = {"Records": [_record("r1", "INSERT", receipt, None)]}
        assert receipts_handler(stream, FakeContext("receipts"))["batchItemFailures"] == []

        # The reminder's own change (the delivered webhook), as OpEventsFunction receives it.
        item = boto3.client("dynamodb").get_item(
            TableName=os.environ["TABLE_NAME"], Key={"pk": {"S": f"R#{created['id']}"}, "sk": {"S": "R"}}
        )["Item"]
        stream = {"Records": [_record("o1", "MODIFY", item, item)]}
        assert opevents_handler(stream, FakeContext("opevents"))["batchItemFailures"] == []
        print(
            json.dumps(
                {
                    "reminder_id": created["id"],
                    "delivery_key": key,
                    "headers": dict(headers),
                    "email_reminder_id": mail["id"],
                    "email_delivery_key": mail["deliveries"][0]["key"],
                }
            )
        )


def _record(seq: str, name: str, new: dict[str, object], old: dict[str, object] | None) -> dict[str, object]:
    images: dict[str, object] = {"Keys": {"pk": new["pk"], "sk": new["sk"]}, "NewImage": new}
    if old is not None:
        images["OldImage"] = old
    return {
        "eventID": seq,
        "eventName": name,
        "eventSource": "aws:dynamodb",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/reminders/stream/1",
        "dynamodb": {**images, "SequenceNumber": seq, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


if __name__ == "__main__":
    main()
