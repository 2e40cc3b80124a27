"""Fakes for the service and property tests: an in-memory world on a virtual clock.

``World`` wires the real services (Reminders, Dispatcher, Deliverer) to the in-memory store, the
in-memory SQS and a scripted provider, and offers the steps an SQS event source mapping performs
(receive, process, delete or change visibility) so tests can also skip them (a crash).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders.adapters.clock import FixedClock
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import Received
from reminders.adapters.receipts import MemoryReceiptLog, SharedReceiverSecrets
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.adapters.suppression import MemorySuppressionList
from reminders.domain.health import HealthPolicy
from reminders.domain.models import ChannelType, Delivery, Reminder
from reminders.domain.ports import IndexKey, Rendered
from reminders.domain.retry import OutcomeClass, RetryPolicy, SendResult
from reminders.domain.states import DeliveryState
from reminders.services.deliver import Deliverer, DeliveryMessage, MessageContext, RecordResult
from reminders.services.intents import ChannelSpec, NewReminder
from reminders.services.receipts import ReceiptInbox, ReceiptMerger
from reminders.services.reconcile import Reconciler
from reminders_ops.world import InMemoryWorld

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
WEBHOOK_URL = "https://hooks.example.com/reminders"
EMAIL = "user@example.com"
VISIBILITY_TIMEOUT = 120  # > the policy's 60 s lease, as in the stack
MAX_RECEIVE_COUNT = 20


class Crash(Exception):
    """The worker process died (raised from inside a step)."""


@dataclass
class OffsetClock:
    """Another host's clock: the world's virtual clock off by ``offset_seconds`` (skew)."""

    base: FixedClock
    offset_seconds: float

    def now(self) -> datetime:
        return self.base.now() + timedelta(seconds=self.offset_seconds)

    def sleep(self, seconds: float) -> None:
        self.base.sleep(seconds)


# -- telemetry ------------------------------------------------------------------------------------
@dataclass
class RecordingTelemetry:
    counts: Counter[str] = field(default_factory=Counter)
    by_dimension: Counter[tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=Counter)
    observations: list[tuple[str, float]] = field(default_factory=list)
    logs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.counts[name] += int(value)
        self.by_dimension[(name, tuple(sorted((k, str(v)) for k, v in dimensions.items())))] += int(value)

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        self.observations.append((name, value))

    def log(self, action: str, **fields: Any) -> None:
        self.logs.append((action, fields))


# -- the store, recording every state transition ----------------------------------------------------
class RecordingStore(MemoryReminderStore):
    """The in-memory store, noting each delivery state change (and lease take-overs) it performs."""

    def __init__(self, clock: FixedClock | None = None) -> None:
        super().__init__(clock=clock)  # the store's own clock: the reference for skewed hosts
        self.transitions: list[tuple[str, str, str, str]] = []  # (rid, cid, from, to)
        self.ever_delivered: set[tuple[str, str]] = set()
        self.fail_save_cursor: Callable[[], bool] | None = None  # True -> raise Crash

    def _states(self, rid: str) -> dict[str, str]:
        item = self.items.get(rid)
        return {cid: d["st"] for cid, d in item["dl"].items()} if item else {}

    def _note(self, rid: str, before: dict[str, str]) -> None:
        for cid, st in self._states(rid).items():
            if cid in before and before[cid] != st:
                self.transitions.append((rid, cid, before[cid], st))
            if st == DeliveryState.DELIVERED.value:
                self.ever_delivered.add((rid, cid))

    def claim(self, reminder_id: str, *args: Any, **kwargs: Any) -> Any:
        before = self._states(reminder_id)
        out = super().claim(reminder_id, *args, **kwargs)
        self._note(reminder_id, before)
        return out

    def claim_expired(self, reminder_id: str, channel_id: str, *args: Any, **kwargs: Any) -> Any:
        before = self._states(reminder_id)
        out = super().claim_expired(reminder_id, channel_id, *args, **kwargs)
        if out.claimed:
            self.transitions.append((reminder_id, channel_id, "sending", "sending"))
        self._note(reminder_id, before)
        return out

    def save_delivery(self, reminder_id: str, delivery: Delivery, expected_rev: int, **kwargs: Any) -> bool:
        before = self._states(reminder_id)
        out = super().save_delivery(reminder_id, delivery, expected_rev, **kwargs)
        self._note(reminder_id, before)
        return out

    def save_reminder(self, reminder: Reminder, expected: dict[str, int], index: IndexKey | None) -> bool:
        before = self._states(reminder.id)
        out = super().save_reminder(reminder, expected, index)
        self._note(reminder.id, before)
        return out

    def save_cursor(self, cursor: Any, release: bool = False) -> bool:
        if self.fail_save_cursor is not None and self.fail_save_cursor():
            raise Crash("dispatcher died before its checkpoint")
        return super().save_cursor(cursor, release)

    def state(self, rid: str, cid: str) -> str:
        return str(self.items[rid]["dl"][cid]["st"])


# -- the provider -----------------------------------------------------------------------------------
#: Scripted provider behaviours. "ok" is accepted (or 409 by a key-honouring provider that has
#: accepted the key before); "*_after" are accepted by the provider although we do not learn it.
OUTCOMES = (
    "ok",
    "429",
    "429_retry_after",
    "500",
    "timeout_before",
    "timeout_after",
    "connection",
    "400",
    "conflict_unconfirmed",
    "config",
    "crash_before",
    "crash_after",
)
AMBIGUOUS = frozenset({"timeout_after", "crash_after"})


@dataclass
class SendCall:
    key: str
    outcome: str
    body: str
    at: datetime
    worker_state: str


class ScriptedSender:
    """A provider per delivery key. Honouring providers deduplicate by key (409 on a repeat)."""

    def __init__(self, clock: FixedClock, *, honour_keys: bool = True) -> None:
        self.clock = clock
        self.honour_keys = honour_keys
        self.scripts: dict[str, list[str]] = {}
        self.default: list[str] = []  # used by every key without its own script
        self.calls: list[SendCall] = []
        self.accepted: Counter[str] = Counter()
        self.acceptances: dict[str, list[str]] = {}  # key -> outcomes under which it accepted
        self.before_send: Callable[[Delivery, Reminder], None] | None = None
        self.on_send: Callable[[Delivery, Reminder], None] | None = None

    def script(self, key: str, outcomes: list[str]) -> None:
        self.scripts.setdefault(key, []).extend(outcomes)

    def _next(self, key: str) -> str:
        script = self.scripts.get(key)
        if script:
            return script.pop(0)
        if self.default:
            return self.default.pop(0)
        return "ok"

    def _accept(self, key: str, outcome: str) -> bool:
        """The provider takes the send; False when it deduplicated it (409)."""
        if self.honour_keys and self.accepted[key]:
            return False
        self.accepted[key] += 1
        self.acceptances.setdefault(key, []).append(outcome)
        return True

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        if self.before_send is not None:
            hook, self.before_send = self.before_send, None
            hook(delivery, reminder)
        outcome = self._next(delivery.key)
        self.calls.append(SendCall(delivery.key, outcome, rendered.body, self.clock.now(), delivery.state))
        if self.on_send is not None:
            self.on_send(delivery, reminder)
        fp = rendered.fingerprint
        if outcome == "ok":
            if self._accept(delivery.key, outcome):
                return SendResult(OutcomeClass.ACCEPTED, 200, receipt=f"r-{len(self.calls)}", fingerprint=fp)
            return SendResult(OutcomeClass.RECONCILED_CONFLICT, 409, receipt="dup", fingerprint=fp)
        if outcome == "429":
            return SendResult(OutcomeClass.THROTTLED, 429, fingerprint=fp)
        if outcome == "429_retry_after":
            return SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=30.0, fingerprint=fp)
        if outcome == "429_retry_after_4h":
            return SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=4 * 3600.0, fingerprint=fp)
        if outcome == "429_retry_after_1":
            return SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=1.0, fingerprint=fp)
        if outcome == "429_retry_after_12h":
            return SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=12 * 3600.0, fingerprint=fp)
        if outcome == "500":
            return SendResult(OutcomeClass.TRANSIENT, 500, fingerprint=fp)
        if outcome == "connection_closed":  # the request left; the answer never came
            return SendResult(OutcomeClass.TRANSIENT, detail="ConnectionClosedError", fingerprint=fp)
        if outcome == "409":  # what the webhook adapter reports for a receiver's 409
            return SendResult(OutcomeClass.RECONCILED_CONFLICT, 409, receipt="conflict", fingerprint=fp)
        if outcome == "timeout_before":
            return SendResult(OutcomeClass.TIMEOUT, fingerprint=fp)
        if outcome == "timeout_after":
            self._accept(delivery.key, outcome)
            return SendResult(OutcomeClass.TIMEOUT, fingerprint=fp)
        if outcome == "connection":
            return SendResult(OutcomeClass.CONNECTION, fingerprint=fp)
        if outcome == "400":
            return SendResult(OutcomeClass.PERMANENT, 400, fingerprint=fp)
        if outcome == "conflict_unconfirmed":
            return SendResult(OutcomeClass.CONFLICT_UNCONFIRMED, 409, fingerprint=fp)
        if outcome == "config":
            return SendResult(OutcomeClass.CONFIGURATION, detail="missing secret", fingerprint=fp)
        if outcome == "crash_before":
            raise Crash("worker died before the provider accepted")
        if outcome == "crash_after":
            self._accept(delivery.key, outcome)
            raise Crash("worker died after the provider accepted")
        raise AssertionError(outcome)

    def sends(self, key: str) -> int:
        return sum(1 for c in self.calls if c.key == key)


# -- the world --------------------------------------------------------------------------------------
class World:
    def __init__(
        self,
        *,
        shards: int = 4,
        page_size: int = 100,
        honour_keys: bool = True,
        policy: RetryPolicy | None = None,
        watch_lag_seconds: float = 900.0,
        max_receive_count: int = MAX_RECEIVE_COUNT,
        start: datetime = T0,
        dispatcher_clock_offset_seconds: float = 0.0,
        health_policy: HealthPolicy | None = None,
    ) -> None:
        self.clock = FixedClock(start)
        # The one in-memory world (reminders_ops/world.py), shared with the fault run and the simulator.
        self.world = InMemoryWorld.build(
            clock=self.clock,
            telemetry=RecordingTelemetry(),
            store=RecordingStore(self.clock),
            policy=policy,
            shards=shards,
            visibility_timeout=VISIBILITY_TIMEOUT,
            max_receive_count=max_receive_count,
            health_policy=health_policy,
        )
        self.health = self.world.health_store  # endpoint health (issue 16), one item per endpoint
        self.sqs, self.queues = self.world.sqs, self.world.queues
        self.store: RecordingStore = self.world.store
        self.telemetry: RecordingTelemetry = self.world.telemetry
        self.suppressions = MemorySuppressionList()
        self.sender = ScriptedSender(self.clock, honour_keys=honour_keys)
        self.policy = self.world.policy
        self.shards = shards
        self.max_receive_count = max_receive_count
        self.reminders = self.world.reminders()
        self.dispatcher_clock = OffsetClock(self.clock, dispatcher_clock_offset_seconds)
        self.dispatcher = self.world.dispatcher(
            clock=self.dispatcher_clock,
            page_size=page_size,
            watch_lag_seconds=watch_lag_seconds,
            worker="dispatch-1",
        )
        self._workers: dict[str, Deliverer] = {}
        self.reconciler = Reconciler(
            store=self.store, clock=self.clock, telemetry=self.telemetry, suppressions=self.suppressions
        )
        # Receiver receipts: the inbox's conditional put, and the merge the table's stream drives
        # (``receipt_log.on_put`` can play the stream; tests call ``receipt_merger`` themselves).
        self.receipt_log = MemoryReceiptLog()
        self.receipt_inbox = ReceiptInbox(
            store=self.store,
            log=self.receipt_log,
            secrets=SharedReceiverSecrets(lambda: DEV_WEBHOOK_SECRET),
            clock=self.clock,
            telemetry=self.telemetry,
        )
        self.receipt_merger = ReceiptMerger(store=self.store, clock=self.clock, telemetry=self.telemetry)

    # -- wiring ------------------------------------------------------------------------------
    def worker(self, name: str = "w1") -> Deliverer:
        if name not in self._workers:
            self._workers[name] = self.world.deliverer(
                senders={"webhook": self.sender, "email": self.sender},
                worker=name,
                rng=random.Random(7),
                suppressions=self.suppressions,
            )
        return self._workers[name]

    # -- producers ---------------------------------------------------------------------------
    def new(
        self,
        key: str = "renewal:acct-1:2026-12-20",
        *,
        due_in: float = 0.0,
        account_id: str = "acct-1",
        channels: tuple[ChannelSpec, ...] = (ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL),),
        data: dict[str, Any] | None = None,
    ) -> NewReminder:
        return NewReminder(
            account_id=account_id,
            key=key,
            kind="renewal",
            due_at=self.clock.now() + timedelta(seconds=due_in),
            channels=channels,
            template_id="renewal",
            template_version=1,
            data={"plan": "pro"} if data is None else data,
        )

    def create(self, key: str = "renewal:acct-1:2026-12-20", **kwargs: Any) -> Reminder:
        reminder, _ = self.reminders.create(self.new(key, **kwargs))
        return reminder

    def get(self, rid: str) -> Reminder:
        r = self.store.get(rid)
        assert r is not None
        return r

    def delivery(self, rid: str, cid: str = "webhook-0") -> Delivery:
        return self.get(rid).deliveries[cid]

    # -- the event source mapping ------------------------------------------------------------
    def receive(self, channel: str = "webhook", max_messages: int = 10) -> list[Received]:
        return self.sqs.receive(channel, max_messages)

    def process(self, m: Received, worker: str = "w1") -> RecordResult:
        return self.worker(worker).process(
            DeliveryMessage.parse(json.loads(m.body)),
            MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes)),
        )

    def settle(self, channel: str, m: Received, result: RecordResult) -> None:
        """What the handler and the ESM do with a result: delete, or set visibility and fail."""
        if result.ack:
            self.sqs.delete(channel, m.receipt_handle)
        else:
            self.sqs.change_visibility(channel, m.receipt_handle, result.visibility_seconds)

    def poll(self, channel: str = "webhook", worker: str = "w1") -> list[RecordResult]:
        """One receive of up to 10 messages, each processed and settled."""
        out = []
        for m in self.receive(channel):
            result = self.process(m, worker)
            self.settle(channel, m, result)
            out.append(result)
        return out

    def run_shards(self, remaining: Callable[[], float] = lambda: 600.0) -> list[Any]:
        return [self.dispatcher.run_shard(s, remaining) for s in range(self.shards)]

    def queued(self, channel: str = "webhook") -> list[dict[str, Any]]:
        """Every message in a queue (visible or not), oldest first, as bodies with their delay."""
        q = self.sqs.queues[channel]
        now = self.clock.now().timestamp()
        return [
            {**json.loads(m.body), "visible_in": m.visible_at - now, "attributes": m.attributes, "id": m.id}
            for m in q.messages.values()  # insertion order: the order they were sent
        ]


def crashed_while_sending(w: World, key: str = "k") -> tuple[Reminder, str]:
    """A reminder due now, its webhook's worker dead before the provider accepted (``crash_before``):
    the delivery ``sending`` under the dead worker's lease, its message still in flight. Returns the
    reminder and the delivery's key (one place for the setup the watchdog's and the claim's tests
    share)."""
    w.run_shards()
    r = w.create(key, due_in=0)
    delivery_key = r.deliveries["webhook-0"].key
    w.sender.script(delivery_key, ["crash_before"])
    (m,) = w.receive()
    with pytest.raises(Crash):
        w.process(m)
    assert w.delivery(r.id).state is DeliveryState.SENDING
    return r, delivery_key
