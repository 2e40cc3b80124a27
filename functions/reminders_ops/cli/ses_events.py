"""``reminders ses-events list|redrive``: SES events that never reached the suppression list.

Two queues hold them (issue 24 item 6), each alarmed: ``target`` — the SES events rule target's
dead-letter queue (EventBridge could not hand the event to SesEventsFunction; the body is the event,
``ERROR_CODE``/``ERROR_MESSAGE`` attributes say why) — and ``failed`` — the function's on-failure
destination (it raised on every one of Lambda's asynchronous attempts; the body is Lambda's
invocation record, the event under ``requestPayload``, the error under ``responsePayload``).

Neither can go back the way it came: an ``aws.ses`` event cannot be put on a bus by anyone but SES,
and ``StartMessageMoveTask`` moves only to a queue. So redrive re-feeds each event to the function
itself, synchronously (``lambda:InvokeFunction``, ``RequestResponse``: the handler is idempotent —
reconciling, annotating and suppressing an address twice changes nothing), one at a time, at most
``--max``, at ``--rate``; a message is deleted only after its invocation succeeded, and redrive
stops at the first invocation that fails again (the fix did not work: the rest stay for a person).

Output never carries an address: the event's type, SES message id, when, and the error only.
The local runtime hands SES events to the function in-process (no EventBridge retries, no queues),
so these queues exist only in AWS; the tests run this module on moto with the handler in-process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reminders_ops.cli.dlq import PEEK_VISIBILITY_SECONDS, SQS_BATCH, DlqMessage, _receive, _release, peek
from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments

QUEUES = {"target": "SesEventsDLQUrl", "failed": "SesEventsFailureQueueUrl"}
DEFAULT_REDRIVE_MAX = 10
#: Re-invokes the function with one event: None on success, else the error (what the function said).
Invoke = Callable[[dict[str, Any]], "str | None"]


def ses_event_of(m: DlqMessage) -> dict[str, Any]:
    """The SES event a message holds: the body itself (rule target DLQ) or Lambda's invocation
    record's ``requestPayload`` (on-failure destination)."""
    body = json.loads(m.body)
    if isinstance(body, dict) and "requestPayload" in body and "requestContext" in body:
        body = body["requestPayload"]
    if not isinstance(body, dict) or body.get("source") != "aws.ses":
        raise ValueError("not an SES event")
    return body


def _error_of(m: DlqMessage) -> str:
    try:
        body = json.loads(m.body)
    except ValueError:
        return "unreadable body"
    if isinstance(body, dict) and "requestContext" in body:
        ctx = body.get("requestContext") or {}
        response = body.get("responsePayload") or {}
        error = response.get("errorType") if isinstance(response, dict) else None
        attempts = ctx.get("approximateInvokeCount", "?")
        return f"{ctx.get('condition', '')} after {attempts} attempts: {error or '?'}"
    return f"{m.attributes.get('ERROR_CODE', '?')}: {m.attributes.get('ERROR_MESSAGE', '')}"[:200]


def summary(m: DlqMessage) -> dict[str, Any]:
    """What an operator sees of a message: no address, no body."""
    try:
        event = ses_event_of(m)
        detail = event.get("detail") or {}
        mail = detail.get("mail") or {}
        kind, ses_id, at = (
            str(event.get("detail-type", "")),
            str(mail.get("messageId", "")),
            event.get("time"),
        )
    except ValueError:
        kind, ses_id, at = "(not an SES event)", "", None
    return {"message_id": m.message_id, "detail_type": kind, "ses_message_id": ses_id, "time": at,
            "error": _error_of(m)}  # fmt: skip


@dataclass
class RedriveReport:
    refed: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, Any] | None = None  # the message whose re-invocation failed (left in the queue)
    unreadable: int = 0  # not an SES event: left in the queue
    stopped: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"refed": len(self.refed), "failed": self.failed, "unreadable": self.unreadable,
                "stopped": self.stopped, "messages": self.refed}  # fmt: skip


def redrive(
    sqs: Any,
    queue_url: str,
    invoke: Invoke,
    *,
    max_messages: int = DEFAULT_REDRIVE_MAX,
    rate_per_second: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> RedriveReport:
    """Re-feed at most ``max_messages`` events to the function; delete each only after it succeeded;
    stop at the first failure."""
    report = RedriveReport()
    held: list[DlqMessage] = []
    held_ids: set[str] = set()
    interval = 1.0 / rate_per_second if rate_per_second else 0.0
    try:
        while len(report.refed) < max_messages:
            batch = [m for m in _receive(sqs, queue_url, SQS_BATCH, PEEK_VISIBILITY_SECONDS)
                     if m.message_id not in held_ids]  # fmt: skip
            if not batch:
                report.stopped = "queue_empty" if not held else "no_more_readable"
                return report
            for i, m in enumerate(batch):
                if len(report.refed) >= max_messages:
                    held.extend(batch[i:])
                    break
                try:
                    event = ses_event_of(m)
                except ValueError:
                    report.unreadable += 1
                    held.append(m)
                    held_ids.add(m.message_id)
                    continue
                if interval and report.refed:
                    sleep(interval)
                error = invoke(event)
                if error is not None:
                    report.failed = {**summary(m), "error": error}
                    report.stopped = "failed_again"
                    held.extend(batch[i:])
                    return report
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m.receipt_handle)
                report.refed.append(summary(m))
        report.stopped = "max_reached"
        return report
    finally:
        if held:
            _release(sqs, queue_url, held)


def lambda_invoker(client: Any, function_name: str) -> Invoke:
    """Synchronous invocation of the deployed function (its error, if it raised)."""

    def invoke(event: dict[str, Any]) -> str | None:
        response = client.invoke(
            FunctionName=function_name, InvocationType="RequestResponse", Payload=json.dumps(event).encode()
        )
        if response.get("FunctionError"):
            payload = response["Payload"].read()
            try:
                return str(json.loads(payload).get("errorType") or response["FunctionError"])
            except (ValueError, AttributeError):
                return str(response["FunctionError"])
        return None

    return invoke


# -- CLI -----------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="ses_events_command", required=True, metavar="ACTION")
    ls = sub.add_parser("list", help="the held SES events: type, SES message id, error (no addresses)")
    rd = sub.add_parser("redrive", help="re-feed a bounded batch to SesEventsFunction, stop on a failure")
    for p in (ls, rd):
        p.add_argument("--queue", choices=sorted(QUEUES), help="target: the rule's DLQ; failed: the "
                       "function's on-failure destination (default for list: both)")  # fmt: skip
        p.add_argument("--json", action="store_true", help="machine-readable output")
        add_target_arguments(p)
    ls.add_argument("--max", type=int, default=100, help="at most this many messages per queue")
    rd.add_argument("--max", type=int, default=DEFAULT_REDRIVE_MAX, help="re-feed at most this many")
    rd.add_argument("--rate", type=float, default=None, help="events per second (default: no limit)")
    rd.add_argument("--function", help="the function to invoke (default: the stack's SesEventsFunctionName)")


def run(args: argparse.Namespace) -> int:
    target = StackTarget.from_args(args)
    try:
        sqs = target.client("sqs")
        if args.ses_events_command == "list":
            names = [args.queue] if args.queue else sorted(QUEUES)
            listed = {n: [summary(m) for m in peek(sqs, target.output(QUEUES[n]), args.max)] for n in names}
            if args.json:
                print(json.dumps(listed, indent=2))
            else:
                for name, messages in listed.items():
                    print(f"{name}: {len(messages)} held")
                    for s in messages:
                        print(f"  {s['time']}  {s['detail_type']:<26} {s['ses_message_id']}  {s['error']}")
            return 0
        if not args.queue:
            raise StackRefError("say which queue: --queue target|failed")
        function = args.function or target.output("SesEventsFunctionName")
        report = redrive(
            sqs,
            target.output(QUEUES[args.queue]),
            lambda_invoker(target.client("lambda"), function),
            max_messages=args.max,
            rate_per_second=args.rate,
        )
        print(json.dumps(report.as_dict(), indent=2) if args.json else
              f"re-fed {len(report.refed)}, stopped: {report.stopped}"
              + (f"; failed again: {report.failed}" if report.failed else ""))  # fmt: skip
        return 1 if report.failed else 0
    except StackRefError as exc:
        sys.stderr.write(f"reminders ses-events: {exc}\n")
        return 2
