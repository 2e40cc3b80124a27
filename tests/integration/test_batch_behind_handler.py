"""Issue 14 — the delivery handler tells each record how far behind its batch is: a record of a
batch that also holds an overdue record is handed back (a batch item failure, visibility one
second) instead of holding the invocation for its sub-second wait; the overdue record is sent at
once. Real ``webhook_handler`` on in-process moto, a real local receiver."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import boto3
from reminders.domain.schedule import due_attributes
from reminders.handlers.delivery import webhook_handler

from tests.integration.test_concurrent_records import CountingReceiver, _create, _state
from tests.support.lambda_runtime import invoke_batch, receive


def test_a_batch_behind_hands_back_its_not_yet_due_record_and_sends_the_overdue_one(
    aws: dict[str, str],
) -> None:
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    with CountingReceiver(hold=0.01) as rx:
        late = _create(f"{rx.url}/ok/late", "late")  # due a second ago: its message is visible now
        soon_due = datetime.now(UTC) + timedelta(seconds=3.5)
        soon = _create(f"{rx.url}/ok/soon", "soon", soon_due)  # its own message: a 3 s delay
        # a copy visible at once (as SQS shows a message up to a second before its due time)
        sent = sqs.send_message(
            QueueUrl=url,
            MessageBody=json.dumps({"reminder_id": soon["id"], "channel_id": "webhook-0", "version": 1}),
            MessageAttributes={
                k: {"DataType": "String", "StringValue": v} for k, v in due_attributes(soon_due).items()
            },
        )["MessageId"]
        time.sleep(max(0.0, (soon_due - datetime.now(UTC)).total_seconds() - 0.6))  # 0.6 s before due
        msgs = receive(sqs, url)
        assert sorted(json.loads(m["Body"])["reminder_id"] for m in msgs) == sorted([late["id"], soon["id"]])
        result = invoke_batch(webhook_handler, sqs, url, msgs)
        assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == [sent]  # handed back
        assert _state(soon["id"])["state"] == "queued"  # not claimed, not waited for, not sent
        assert _state(late["id"])["state"] == "delivered" and sum(rx.posts.values()) == 1
