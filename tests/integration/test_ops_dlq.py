"""``reminders dlq``: listing leaves messages in place; redrive is bounded (count, reason, rate),
keeps body and attributes, and stops when a redriven delivery dead-letters again."""

from __future__ import annotations

import json
from typing import Any

import boto3
from reminders_ops.cli.dlq import peek, redrive, source_queue_url


def _dead(sqs: Any, url: str, key: str, reason: str = "permanent_failure", cycle: int = 0) -> None:
    sqs.send_message(
        QueueUrl=url,
        MessageBody=json.dumps({"reminder_id": f"rem_{key}", "channel_id": "webhook-0", "version": 1}),
        MessageAttributes={
            name: {"DataType": "String", "StringValue": value}
            for name, value in {
                "reason": reason,
                "attempts": "1",
                "dl_cycle": str(cycle),
                "delivery_key": key,
            }.items()
        },
    )


def _all(sqs: Any, url: str) -> list[dict[str, Any]]:
    out = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"])
    return list(out.get("Messages", []))


def test_list_leaves_messages_and_redrive_moves_a_bounded_matching_batch(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    dlq, source = aws["WEBHOOK_DLQ_URL"], aws["WEBHOOK_QUEUE_URL"]
    for i in range(3):
        _dead(sqs, dlq, f"k{i}")
    _dead(sqs, dlq, "expired-1", reason="expired")
    listed = peek(sqs, dlq)
    assert sorted(m.delivery_key for m in listed) == ["expired-1", "k0", "k1", "k2"]
    assert len(peek(sqs, dlq)) == 4  # still there
    assert source_queue_url(sqs, dlq) == source

    slept: list[float] = []
    report = redrive(
        sqs, dlq, source, max_messages=2, reason="permanent_failure", rate_per_second=4, sleep=slept.append
    )
    assert len(report.moved) == 2 and report.stopped == "max_reached" and slept == [0.25]
    moved = _all(sqs, source)
    assert len(moved) == 2
    attrs = moved[0]["MessageAttributes"]
    assert attrs["reason"]["StringValue"] == "permanent_failure" and attrs["dl_cycle"]["StringValue"] == "0"
    assert json.loads(moved[0]["Body"])["channel_id"] == "webhook-0"
    left = sorted(m.delivery_key for m in peek(sqs, dlq))
    assert len(left) == 2 and "expired-1" in left  # the other reason and the third one stay


def test_redrive_stops_when_the_same_failure_recurs(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    dlq, source = aws["WEBHOOK_DLQ_URL"], aws["WEBHOOK_QUEUE_URL"]
    _dead(sqs, dlq, "a")
    _dead(sqs, dlq, "b")

    def meanwhile(_: float) -> None:
        # The first redriven delivery fails the same way again: back in the DLQ with the next cycle.
        first = _all(sqs, source)[0]
        key = first["MessageAttributes"]["delivery_key"]["StringValue"]
        _dead(sqs, dlq, key, cycle=1)

    report = redrive(sqs, dlq, source, max_messages=10, rate_per_second=100, sleep=meanwhile)
    assert report.stopped == "same_failure_recurred"
    assert report.recurred is not None and report.recurred["dl_cycle"] == "1"
    assert len(report.moved) == 2  # what was moved before the recurrence showed up
    (left,) = peek(sqs, dlq)  # the recurrence is not redriven again: it stays for a person
    assert left.cycle == 1 and left.delivery_key == report.recurred["delivery_key"]


def test_redrive_by_reason_looks_past_a_full_batch_of_other_reasons(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    dlq, source = aws["WEBHOOK_DLQ_URL"], aws["WEBHOOK_QUEUE_URL"]
    for i in range(12):
        _dead(sqs, dlq, f"old{i}", reason="expired")
    _dead(sqs, dlq, "p1")
    _dead(sqs, dlq, "p2")
    report = redrive(sqs, dlq, source, max_messages=10, reason="permanent_failure")
    assert sorted(m["delivery_key"] for m in report.moved) == ["p1", "p2"]
    assert report.skipped == 12 and report.stopped in ("no_more_matching", "dlq_empty")
    assert len(peek(sqs, dlq)) == 12  # the others are visible again at once
