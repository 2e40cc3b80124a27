"""The proof harness: crashes injected at port boundaries, an SQS event-source mapping that can lose
its acknowledgement, and deliverers/dispatchers on an injectable clock — around the REAL handlers.

A crash is a crash: :class:`Crash` is a ``BaseException``, so the Powertools ``BatchProcessor`` does
not catch it; the invocation aborts, nothing in the batch is deleted or reported, and every message
of the batch reappears after its visibility timeout (here: at once, by ChangeMessageVisibility 0
with the receipt we hold). Leases stay held; the deliverer's :class:`FixedClock` moves past them.
"""

from __future__ import annotations

import contextlib
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters.clock import FixedClock
from reminders.domain.ports import NullTelemetry
from reminders.services.deliver import Deliverer
from reminders.services.dispatch import Dispatcher

from tests.support.lambda_runtime import FakeContext, call_api, receive, sqs_event


class Crash(BaseException):
    """The worker process died here: not an exception the batch processor catches and reports."""


# -- fault rules at port boundaries ----------------------------------------------------------------
@dataclass
class Rule:
    point: str  # "<port>.<method>", e.g. "store.claim", "sender.send", "store.save_delivery"
    phase: str  # "before" | "after"
    when: Callable[[tuple[Any, ...], Any], bool] | None
    remaining: int
    fired: int = 0


@dataclass
class Call:
    point: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any = None


class Faults:
    """Crash rules and a log of every port call (the spy)."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.calls: list[Call] = []

    def crash_after(
        self, point: str, when: Callable[[tuple[Any, ...], Any], bool] | None = None, times: int = 1
    ) -> Rule:
        rule = Rule(point, "after", when, times)
        self.rules.append(rule)
        return rule

    def crash_before(
        self, point: str, when: Callable[[tuple[Any, ...], Any], bool] | None = None, times: int = 1
    ) -> Rule:
        rule = Rule(point, "before", when, times)
        self.rules.append(rule)
        return rule

    def _check(self, point: str, phase: str, args: tuple[Any, ...], result: Any) -> None:
        for rule in self.rules:
            if rule.point != point or rule.phase != phase or rule.remaining <= 0:
                continue
            if rule.when is None or rule.when(args, result):
                rule.remaining -= 1
                rule.fired += 1
                raise Crash(f"crash {phase} {point}")

    def called(self, point: str) -> list[Call]:
        return [c for c in self.calls if c.point == point]


class Port:
    """Wraps an adapter: every method call is logged and may crash before or after it runs."""

    def __init__(self, name: str, target: Any, faults: Faults) -> None:
        self._name = name
        self._target = target
        self._faults = faults

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if not callable(value):
            return value
        point = f"{self._name}.{attr}"

        def call(*args: Any, **kwargs: Any) -> Any:
            record = Call(point, args, kwargs)
            self._faults.calls.append(record)
            self._faults._check(point, "before", args, None)
            result = value(*args, **kwargs)
            record.result = result
            self._faults._check(point, "after", args, result)
            return result

        return call


class Recorder(NullTelemetry):
    """Telemetry that counts (name and name+dimensions), to assert what was counted."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.by_reason: Counter[tuple[str, str]] = Counter()

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.counts[name] += int(value)
        for v in dimensions.values():
            self.by_reason[(name, str(v))] += int(value)


# -- the event source mapping ----------------------------------------------------------------------
@dataclass
class Invocation:
    messages: list[dict[str, Any]]
    crashed: bool = False
    failures: list[str] = field(default_factory=list)
    response: dict[str, Any] | None = None

    @property
    def ids(self) -> list[str]:
        return [m["MessageId"] for m in self.messages]


class Esm:
    """Lambda's SQS event source mapping for one queue: receive, invoke the real handler, delete what
    is not reported as failed. A :class:`Crash` aborts the invocation: nothing deleted, nothing
    reported. ``lose_ack`` models a handler that returned but whose DeleteMessage never happened."""

    def __init__(self, handler: Callable[[dict[str, Any], Any], dict[str, Any]], queue_url: str) -> None:
        self.handler = handler
        self.url = queue_url
        self.sqs = boto3.client("sqs")
        self.arn = self.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]

    def receive(self, max_messages: int = 10) -> list[dict[str, Any]]:
        return receive(self.sqs, self.url, max_messages)

    def invoke(self, messages: list[dict[str, Any]], *, lose_ack: bool = False) -> Invocation:
        inv = Invocation(messages)
        try:
            inv.response = self.handler(sqs_event(messages, self.arn), FakeContext())
        except Crash:
            inv.crashed = True
            return inv
        inv.failures = [f["itemIdentifier"] for f in inv.response.get("batchItemFailures", [])]
        if not lose_ack:
            for m in messages:
                if m["MessageId"] not in inv.failures:
                    self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=m["ReceiptHandle"])
        return inv

    def poll(self, *, lose_ack: bool = False) -> Invocation | None:
        messages = self.receive()
        return self.invoke(messages, lose_ack=lose_ack) if messages else None

    def reappear(self, messages: list[dict[str, Any]]) -> None:
        """What the visibility timeout does in time: the messages become receivable again."""
        for m in messages:
            with contextlib.suppress(self.sqs.exceptions.ClientError):  # already deleted
                self.sqs.change_message_visibility(
                    QueueUrl=self.url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                )

    def depth(self) -> int:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        return sum(int(v) for v in attrs.values())


# -- the harness -----------------------------------------------------------------------------------
class Harness:
    """Real handlers on moto; the deliverer and dispatcher they get come from here (wrapped ports,
    a FixedClock, a recording telemetry)."""

    def __init__(self, env: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        from reminders.handlers.delivery import email_handler, webhook_handler

        self.env = env
        self.receiver = receiver
        self.monkeypatch = monkeypatch
        self.clock = FixedClock(datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1))
        self.faults = Faults()
        self.telemetry = Recorder()
        self._base = runtime.deliverer()  # the real wiring: moto store/queues, WebhookSender, SES
        handler_queues = Port("sqs", runtime.queues(), self.faults)  # what the handler calls
        monkeypatch.setattr(runtime, "queues", lambda: handler_queues)
        self.current: list[Any] = [self.deliverer("worker-1")]
        monkeypatch.setattr(runtime, "deliverer", lambda: self.current[0])
        self.webhook = Esm(webhook_handler, env["WEBHOOK_QUEUE_URL"])
        self.email = Esm(email_handler, env["EMAIL_QUEUE_URL"])
        self.webhook_dlq = Esm(webhook_handler, env["WEBHOOK_DLQ_URL"])
        self.email_dlq = Esm(email_handler, env["EMAIL_DLQ_URL"])
        self.sqs = boto3.client("sqs")

    # -- wiring ---------------------------------------------------------------------------------
    def deliverer(self, worker: str) -> Deliverer:
        base = self._base
        return Deliverer(
            store=Port("store", base.store, self.faults),
            queues=Port("queues", base.queues, self.faults),
            senders={k: Port("sender", v, self.faults) for k, v in base.senders.items()},
            clock=self.clock,
            policy=base.policy,
            telemetry=self.telemetry,
            worker=worker,
            max_receive_count=runtime.settings().max_receive_count,
            rng=random.Random(7),
        )

    def use(self, deliverer: Deliverer) -> None:
        self.current[0] = deliverer

    def dispatcher(self, cursor_start_back_seconds: int = 120) -> Dispatcher:
        """The dispatcher the shard handler gets: on the virtual clock, its ports spied. A new shard
        cursor starts ``cursor_start_back_seconds`` back (moto is slow at walking empty buckets).
        moto's Date header is wall time, not the virtual clock: no clock reference."""
        from reminders.adapters.dynamodb import DynamoReminderStore

        s = runtime.settings()
        store = DynamoReminderStore(
            runtime.store().table, cursor_start_back_seconds=cursor_start_back_seconds, clock_reference=False
        )
        d = Dispatcher(
            store=Port("dstore", store, self.faults),
            queues=Port("dqueues", self._base.queues, self.faults),
            clock=self.clock,
            telemetry=self.telemetry,
            shards=s.due_shards,
            window_seconds=s.delay_window_seconds,
            watch_lag_seconds=s.watch_lag_seconds,
            worker="dispatch-1",
        )
        self.monkeypatch.setattr(runtime, "dispatcher", lambda: d)
        return d

    def run_all_shards(self) -> dict[str, Any]:
        from reminders.handlers.dispatcher import shard_handler

        shards = runtime.settings().due_shards
        messages = [
            {
                "MessageId": str(uuid.uuid4()),
                "ReceiptHandle": uuid.uuid4().hex,
                "Body": json.dumps({"shard": s}),
            }
            for s in range(shards)
        ]
        return shard_handler(
            sqs_event(messages, "arn:aws:sqs:us-east-1:111111111111:dispatch"), FakeContext()
        )

    # -- the API --------------------------------------------------------------------------------
    def create(
        self,
        key: str,
        *,
        webhook: bool = True,
        email: bool = False,
        due_in: float = -60,
        account: str = "acct-1",
        kind: str = "renewal",
        path: str = "/hooks",
    ) -> dict[str, Any]:
        channels: list[dict[str, str]] = []
        if webhook:
            channels.append({"type": "webhook", "url": self.receiver.url + path})
        if email:
            channels.append({"type": "email", "to": "customer@example.com"})
        body = {
            "key": key,
            "account_id": account,
            "kind": kind,
            "due_at": (datetime.now(UTC) + timedelta(seconds=due_in)).isoformat(),
            "channels": channels,
            "template": {"id": kind, "version": 1},
            "data": {"renewal_date": "2026-12-20", "plan": "pro"},
        }
        status, payload = call_api("POST", "/reminders", body)
        assert status == 201, payload
        return payload

    def get(self, reminder_id: str) -> dict[str, Any]:
        status, payload = call_api("GET", f"/reminders/{reminder_id}")
        assert status == 200, payload
        return payload

    def delivery(self, reminder_id: str, channel: str = "webhook-0") -> dict[str, Any]:
        for d in self.get(reminder_id)["deliveries"]:
            if d["channel_id"] == channel:
                return d
        raise KeyError(channel)

    def visibility_changes(self) -> list[tuple[str, str, int]]:
        """(channel, receipt handle, seconds) of every ChangeMessageVisibility the handler made."""
        return [(c.args[0], c.args[1], c.args[2]) for c in self.faults.called("sqs.change_visibility")]

    def posts(self, key: str) -> int:
        return int(self.receiver.snapshot()["posts"].get(key, 0))

    def accepted(self, key: str) -> int:
        return int(self.receiver.snapshot()["accepted"].get(key, 0))

    def past_next_attempt(self, reminder_id: str, channel: str = "webhook-0") -> None:
        """Move the virtual clock just past the delivery's next attempt time (no sleeping)."""
        d = self.delivery(reminder_id, channel)
        if d["next_attempt_at"]:
            when = datetime.fromisoformat(d["next_attempt_at"].replace("Z", "+00:00"))
            if when > self.clock.now():
                self.clock.current = when + timedelta(seconds=1)

    def past_lease(self, seconds: float | None = None) -> None:
        self.clock.advance(seconds if seconds is not None else self._base.policy.lease_seconds + 1)

    def dlq_messages(self, channel: str = "webhook") -> list[dict[str, Any]]:
        esm = self.webhook_dlq if channel == "webhook" else self.email_dlq
        return esm.receive()


def attrs_of(message: dict[str, Any]) -> dict[str, str]:
    return {k: v["StringValue"] for k, v in (message.get("MessageAttributes") or {}).items()}
