"""``reminders dlq list|redrive``: the dead-letter queues, read without consuming, and a bounded,
rate-limited redrive that stops when the same failure recurs.

A dead-lettered delivery's DLQ message carries ``reason``, ``attempts``, ``last_error``,
``last_status``, ``dl_cycle`` and ``delivery_key`` as message attributes. Redrive moves a message
back to its source queue with the same body and attributes (receive → send → delete); the consumer
sees ``dl_cycle`` and starts a fresh, bounded attempt cycle (and files the delivery's watch entry,
so the watchdog rescues a redriven message lost after that; this CLI does not touch the table: until
the consumer takes the message the delivery stays ``dead_letter``, and SQS holds the message durably).
If a redriven delivery dead-letters again while the redrive runs (the same key comes back with a
higher ``dl_cycle``) the fix did not work: redrive stops there and leaves that message for a
person. SQS gives no order, so a recurrence is noticed when a receive returns it; ``--max`` and
``--rate`` bound what moves before that.

Against AWS, ``--use-move-task`` hands the whole DLQ to SQS's ``StartMessageMoveTask`` with the
source queue as the destination instead (no per-message filter; the emulator does not implement it).
Purging is not rollback: there is deliberately no purge here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reminders_ops.stackrefs import CHANNELS, StackRefError, StackTarget, add_target_arguments

PEEK_VISIBILITY_SECONDS = 30
DEFAULT_REDRIVE_MAX = 10
SQS_BATCH = 10


@dataclass(frozen=True)
class DlqMessage:
    message_id: str
    receipt_handle: str
    body: str
    attributes: dict[str, str]  # string message attributes
    raw_attributes: dict[str, Any]  # as SendMessage takes them
    receive_count: int
    sent_timestamp: int

    @property
    def reason(self) -> str:
        return self.attributes.get("reason", "")

    @property
    def delivery_key(self) -> str:
        return self.attributes.get("delivery_key", "")

    @property
    def cycle(self) -> int:
        try:
            return int(self.attributes.get("dl_cycle", "-1"))
        except ValueError:
            return -1

    def summary(self) -> dict[str, Any]:
        try:
            body: Any = json.loads(self.body)
        except ValueError:
            body = self.body[:200]
        return {
            "message_id": self.message_id,
            "reason": self.reason or "(moved by maxReceiveCount)",
            "attempts": self.attributes.get("attempts", ""),
            "last_error": self.attributes.get("last_error", ""),
            "last_status": self.attributes.get("last_status", ""),
            "delivery_key": self.delivery_key,
            "dl_cycle": self.attributes.get("dl_cycle", ""),
            "body": body,
            "sent_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.sent_timestamp / 1000)),
        }


def _message(m: dict[str, Any]) -> DlqMessage:
    raw = {}
    strings = {}
    for name, v in (m.get("MessageAttributes") or {}).items():
        a = {"DataType": v["DataType"]}
        if "StringValue" in v:
            a["StringValue"] = v["StringValue"]
            strings[name] = v["StringValue"]
        if "BinaryValue" in v:
            a["BinaryValue"] = v["BinaryValue"]
        raw[name] = a
    attrs = m.get("Attributes") or {}
    return DlqMessage(
        message_id=m["MessageId"],
        receipt_handle=m["ReceiptHandle"],
        body=m["Body"],
        attributes=strings,
        raw_attributes=raw,
        receive_count=int(attrs.get("ApproximateReceiveCount", "0")),
        sent_timestamp=int(attrs.get("SentTimestamp", "0")),
    )


def _receive(sqs: Any, url: str, count: int, visibility: int, wait: int = 0) -> list[DlqMessage]:
    resp = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=max(1, min(SQS_BATCH, count)),
        VisibilityTimeout=visibility,
        WaitTimeSeconds=wait,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
    )
    return [_message(m) for m in resp.get("Messages", [])]


def _release(sqs: Any, url: str, messages: list[DlqMessage]) -> None:
    """Make messages visible again at once (a peek must not hide them)."""
    for start in range(0, len(messages), SQS_BATCH):
        chunk = messages[start : start + SQS_BATCH]
        sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m.receipt_handle, "VisibilityTimeout": 0}
                for i, m in enumerate(chunk)
            ],
        )


def peek(sqs: Any, url: str, max_messages: int = 100) -> list[DlqMessage]:
    """Up to ``max_messages`` messages of a DLQ, left in the queue (visible again at once)."""
    seen: dict[str, DlqMessage] = {}
    try:
        while len(seen) < max_messages:
            batch = _receive(sqs, url, max_messages - len(seen), PEEK_VISIBILITY_SECONDS)
            fresh = [m for m in batch if m.message_id not in seen]
            if not fresh:
                break
            for m in fresh:
                seen[m.message_id] = m
    finally:
        _release(sqs, url, list(seen.values()))
    return list(seen.values())


@dataclass
class RedriveReport:
    moved: list[dict[str, str]] = field(default_factory=list)
    skipped: int = 0  # not matching --reason (left in the DLQ)
    needs_deadline: int = 0  # deadline_passed without a new --deliver-by (left in the DLQ)
    recurred: dict[str, str] | None = None  # the failure that came back, if redrive stopped on it
    stopped: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "moved": len(self.moved),
            "skipped": self.skipped,
            "needs_deadline": self.needs_deadline,
            "recurred": self.recurred,
            "stopped": self.stopped,
            "messages": self.moved,
        }


def redrive(
    sqs: Any,
    dlq_url: str,
    source_url: str,
    *,
    max_messages: int,
    reason: str | None = None,
    rate_per_second: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    set_deadline: Callable[[DlqMessage], None] | None = None,
) -> RedriveReport:
    """Move at most ``max_messages`` (optionally only those with ``reason``) back to the source
    queue, keeping body and attributes; stop early when a redriven delivery dead-letters again.

    A ``deadline_passed`` dead letter needs a new deadline first: with ``set_deadline`` (which
    writes the reminder's new ``deliver_by``) it is called before the move; without it such a
    message stays in the DLQ (``needs_deadline``), since its redrive would dead-letter again unsent."""
    report = RedriveReport()
    moved_cycles: dict[str, int] = {}  # delivery key -> dl_cycle we redrove
    held: list[DlqMessage] = []  # received but not ours to move: released at the end
    held_ids: set[str] = set()
    interval = 1.0 / rate_per_second if rate_per_second else 0.0
    try:
        while len(report.moved) < max_messages:
            batch = _receive(sqs, dlq_url, SQS_BATCH, PEEK_VISIBILITY_SECONDS)
            if not batch:
                report.stopped = "dlq_empty" if not held else "no_more_matching"
                return report
            if all(m.message_id in held_ids for m in batch):  # only what we already set aside
                report.stopped = "no_more_matching"
                return report
            for i, m in enumerate(batch):
                if m.message_id in held_ids:
                    continue
                key = m.delivery_key
                if key and key in moved_cycles and m.cycle > moved_cycles[key]:
                    report.recurred = {"delivery_key": key, "reason": m.reason, "dl_cycle": str(m.cycle)}
                    report.stopped = "same_failure_recurred"
                    held.extend(x for x in batch[i:] if x.message_id not in held_ids)
                    return report
                if len(report.moved) >= max_messages or (reason and m.reason != reason):
                    if reason and m.reason != reason:
                        report.skipped += 1
                    held.append(m)
                    held_ids.add(m.message_id)
                    continue
                if m.reason == "deadline_passed":
                    if set_deadline is None:
                        report.needs_deadline += 1
                        held.append(m)
                        held_ids.add(m.message_id)
                        continue
                    set_deadline(m)
                if interval and report.moved:
                    sleep(interval)
                send: dict[str, Any] = {"QueueUrl": source_url, "MessageBody": m.body}
                if m.raw_attributes:
                    send["MessageAttributes"] = m.raw_attributes
                sqs.send_message(**send)
                sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=m.receipt_handle)
                if key:
                    moved_cycles[key] = m.cycle
                report.moved.append(
                    {
                        "message_id": m.message_id,
                        "delivery_key": key,
                        "reason": m.reason,
                        "dl_cycle": str(m.cycle),
                    }
                )
        report.stopped = "max_reached"
        return report
    finally:
        if held:
            _release(sqs, dlq_url, held)


def source_queue_url(sqs: Any, dlq_url: str) -> str:
    """The queue whose redrive policy names this DLQ (SQS's own answer, then the allow policy)."""
    urls = sqs.list_dead_letter_source_queues(QueueUrl=dlq_url).get("queueUrls", [])
    if len(urls) == 1:
        return str(urls[0])
    attrs = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["RedriveAllowPolicy"])["Attributes"]
    allow = json.loads(attrs.get("RedriveAllowPolicy") or "{}")
    arns = allow.get("sourceQueueArns") or []
    if len(arns) == 1:
        _, _, _, _, account, name = arns[0].split(":", 5)
        return str(sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])
    raise StackRefError(f"cannot tell the source queue of {dlq_url}: pass --to")


def _queue_arn(sqs: Any, url: str) -> str:
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


# -- CLI -----------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="dlq_command", required=True, metavar="ACTION")
    ls = sub.add_parser("list", help="the messages of the DLQs with reason, attempts and delivery key")
    rd = sub.add_parser("redrive", help="move a bounded batch back to the source queue")
    for p in (ls, rd):
        p.add_argument("--channel", choices=CHANNELS, help="which DLQ (default for list: all)")
        p.add_argument("--queue-url", help="a DLQ by URL instead of --channel")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        add_target_arguments(p)
    ls.add_argument("--max", type=int, default=100, help="at most this many messages per DLQ")
    rd.add_argument("--to", help="destination queue URL (default: the DLQ's source queue)")
    rd.add_argument("--max", type=int, default=None, help="move at most this many messages (default 10)")
    rd.add_argument("--reason", help="only messages dead-lettered with this reason")
    rd.add_argument("--rate", type=float, default=None, help="messages per second (default: no limit)")
    rd.add_argument(
        "--deliver-by",
        help="ISO instant with offset: new deadline of deadline_passed dead letters (without it they stay)",
    )
    rd.add_argument(
        "--use-move-task",
        action="store_true",
        help="AWS: StartMessageMoveTask to the source queue (moves everything; no --reason/--max)",
    )


def run(args: argparse.Namespace) -> int:
    target = StackTarget.from_args(args)
    try:
        sqs = target.client("sqs")
        if args.dlq_command == "list":
            return _list(args, target, sqs)
        return _redrive(args, target, sqs)
    except StackRefError as exc:
        sys.stderr.write(f"reminders dlq: {exc}\n")
        return 2


def _deadline_setter(target: StackTarget, deliver_by: str) -> Callable[[DlqMessage], None]:
    """Writes ``deliver_by`` on the reminder of a ``deadline_passed`` message before it moves."""
    from datetime import datetime

    from reminders.adapters.clock import SystemClock
    from reminders.adapters.dynamodb import DynamoReminderStore
    from reminders.domain.ports import NullTelemetry
    from reminders.services.intents import Reminders

    try:
        when = datetime.fromisoformat(deliver_by.replace("Z", "+00:00"))
    except ValueError:
        raise StackRefError("--deliver-by: not an ISO-8601 instant") from None
    if when.tzinfo is None:
        raise StackRefError("--deliver-by: give an offset (e.g. 2027-01-01T09:00:00Z)")
    store = DynamoReminderStore(target.resource("dynamodb").Table(target.table_name()))
    service = Reminders(store=store, queues=None, clock=SystemClock(), telemetry=NullTelemetry(), shards=1)  # type: ignore[arg-type]

    def set_deadline(m: DlqMessage) -> None:
        service.set_deadline(json.loads(m.body)["reminder_id"], when)

    return set_deadline


def _dlqs(args: argparse.Namespace, target: StackTarget, default_all: bool) -> list[tuple[str, str]]:
    if args.queue_url:
        return [(args.queue_url.rsplit("/", 1)[-1], args.queue_url)]
    if args.channel:
        return [(args.channel, target.dlq_url(args.channel))]
    if not default_all:
        raise StackRefError("say which DLQ: --channel webhook|email|dispatch or --queue-url")
    outputs = target.outputs()
    return [(c, outputs[f"{c.capitalize()}DLQUrl"]) for c in CHANNELS if f"{c.capitalize()}DLQUrl" in outputs]


def _list(args: argparse.Namespace, target: StackTarget, sqs: Any) -> int:
    result = {
        name: [m.summary() for m in peek(sqs, url, args.max)] for name, url in _dlqs(args, target, True)
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for name, messages in result.items():
        print(f"{name} DLQ: {len(messages)} message(s)")
        for m in messages:
            print(
                f"  {m['sent_at']}  reason={m['reason']}  attempts={m['attempts']}"
                f"  last={m['last_error']}/{m['last_status']}  key={m['delivery_key']}  cycle={m['dl_cycle']}"
            )
    return 0


def _redrive(args: argparse.Namespace, target: StackTarget, sqs: Any) -> int:
    ((name, dlq_url),) = _dlqs(args, target, False)
    dest = args.to or source_queue_url(sqs, dlq_url)
    if args.use_move_task:
        if args.reason or args.max is not None:
            raise StackRefError("--use-move-task moves every message: no --reason or --max with it")
        kwargs: dict[str, Any] = {
            "SourceArn": _queue_arn(sqs, dlq_url),
            "DestinationArn": _queue_arn(sqs, dest),
        }
        if args.rate:
            kwargs["MaxNumberOfMessagesPerSecond"] = max(1, int(args.rate))
        try:
            handle = sqs.start_message_move_task(**kwargs)["TaskHandle"]
        except Exception as exc:
            first = str(exc).splitlines()[0][:200]
            raise StackRefError(
                f"StartMessageMoveTask failed ({first}); without --use-move-task the CLI moves"
            ) from exc
        print(json.dumps({"task_handle": handle, **kwargs}) if args.json else f"move task started: {handle}")
        return 0
    limit = DEFAULT_REDRIVE_MAX if args.max is None else args.max
    report = redrive(
        sqs,
        dlq_url,
        dest,
        max_messages=limit,
        reason=args.reason,
        rate_per_second=args.rate,
        set_deadline=_deadline_setter(target, args.deliver_by) if args.deliver_by else None,
    )
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(f"{name}: moved {len(report.moved)} to {dest} ({report.stopped}); skipped {report.skipped}")
        if report.recurred:
            print(
                f"  stopped: {report.recurred['delivery_key']} dead-lettered again"
                f" ({report.recurred['reason']})"
            )
    return 1 if report.recurred else 0
