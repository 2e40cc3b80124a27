"""Property test of the delivery state machine (MISSION §3, issue: "no sequence of events reaches two
accepted sends for one key").

The real services (Reminders, Dispatcher, Deliverer with two workers) run on the in-memory store and
SQS on a virtual clock against a scripted provider, through random sequences of: deliveries,
duplicate messages, crashes (before/after the provider accepted, and dropped acks), 429/5xx/
timeouts/409/4xx/configuration errors, cancel and reschedule (also while a send is in flight),
concurrent duplicates during a send, lease expiry by advancing the clock, lost messages, dispatcher
runs and operator redrives. Then every message is drained against a healthy provider.

Asserted:
- every observed state change is in TRANSITIONS; a terminal state never changes, except
  dead_letter -> queued by a redrive and dead_letter -> canceled by a cancel;
- never a send after the ledger recorded `delivered`, never a send before `due_at`;
- a provider that ignores keys accepts a key twice only after an ambiguous outcome (the provider
  accepted but the worker timed out or died before recording); a provider that honours keys never
  accepts twice, and the ledger only says `delivered` for keys the provider accepted;
- a retry of the same reminder version sends byte-identical content;
- nothing is lost: after the drain every delivery is terminal.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from reminders.domain.models import ChannelType, Delivery, Reminder
from reminders.domain.states import TERMINAL, TRANSITIONS, DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import AMBIGUOUS, EMAIL, OUTCOMES, WEBHOOK_URL, Crash, World

CHANNELS = ("webhook", "email")
TWO_CHANNELS = (ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.EMAIL, EMAIL))

STEPS: dict[str, st.SearchStrategy[tuple[Any, ...]]] = {
    "deliver": st.tuples(
        st.just("deliver"),
        st.sampled_from(CHANNELS),
        st.sampled_from(("w1", "w2")),
        st.sampled_from((False, False, False, True)),  # True: the ack is lost (crash before ack)
    ),
    "advance": st.tuples(st.just("advance"), st.sampled_from((1, 31, 61, 121, 301))),
    "long_advance": st.tuples(st.just("advance"), st.sampled_from((901, 3601, 4 * 3600))),
    "duplicate": st.tuples(st.just("duplicate"), st.sampled_from(CHANNELS), st.integers(0, 5)),
    "during_send": st.tuples(st.just("during_send"), st.sampled_from(("cancel", "reschedule", "duplicate"))),
    "redrive": st.tuples(st.just("redrive"), st.sampled_from(CHANNELS)),
    "dispatch": st.tuples(st.just("dispatch")),
    "lose": st.tuples(st.just("lose"), st.sampled_from(CHANNELS), st.integers(0, 5)),
    "cancel": st.tuples(st.just("cancel"), st.integers(0, 1)),
    "reschedule": st.tuples(
        st.just("reschedule"), st.integers(0, 1), st.sampled_from((-30, 0, 120, 899, 901, 7200))
    ),
}
#: Deliveries dominate (as in a real run); everything else perturbs them.
WEIGHTS = {"deliver": 12, "advance": 2, "duplicate": 2, "during_send": 2, "dispatch": 2}
events = st.sampled_from([k for k in STEPS for _ in range(WEIGHTS.get(k, 1))]).flatmap(STEPS.__getitem__)


class Model:
    def __init__(self, honour_keys: bool, outcomes: list[str]) -> None:
        self.w = World(shards=1, page_size=3, honour_keys=honour_keys)
        self.w.sender.default = list(outcomes)
        self.w.sender.on_send = self._check_send
        self.rids: list[str] = []
        self.sent_bodies: dict[tuple[str, int], str] = {}

    # -- invariants checked at the moment of a send -------------------------------------------
    def _check_send(self, delivery: Delivery, reminder: Reminder) -> None:
        w = self.w
        assert (reminder.id, delivery.channel_id) not in w.store.ever_delivered, "send after delivered"
        assert w.clock.now() >= reminder.due_at, "sent before due_at"
        body = w.sender.calls[-1].body
        previous = self.sent_bodies.setdefault((delivery.key, reminder.version), body)
        assert previous == body, "a retry of the same version sent different bytes"
        # A key-ignoring provider accepted this key before: only acceptable after an ambiguous outcome.
        acc = w.sender.acceptances.get(delivery.key, [])
        assert all(o in AMBIGUOUS for o in acc), f"second send after a clean acceptance: {acc}"

    # -- the SQS event source mapping ---------------------------------------------------------
    def deliver(self, channel: str, worker: str, drop_ack: bool) -> None:
        msgs = self.w.receive(channel, 1)
        if not msgs:  # time passes until SQS has the next message visible
            nxt = self.w.sqs.next_visible_at(channel)
            if nxt is None:
                return
            self.w.clock.advance(max(0.0, nxt - self.w.clock.now().timestamp()))
            msgs = self.w.receive(channel, 1)
        m = msgs[0]
        try:
            result = self.w.process(m, worker)
        except Crash:
            return  # the worker died: no ack, the message returns after its visibility timeout
        if not drop_ack:
            self.w.settle(channel, m, result)

    def duplicate(self, channel: str, i: int) -> None:
        msgs = list(self.w.sqs.queues[channel].messages.values())
        if msgs:
            m = msgs[i % len(msgs)]
            self.w.sqs.send(channel, m.body, delay_seconds=0, attributes=dict(m.attributes))

    def lose(self, channel: str, i: int) -> None:
        q = self.w.sqs.queues[channel]
        if q.messages:
            mid = sorted(q.messages)[i % len(q.messages)]
            del q.messages[mid]

    def redrive(self, channel: str) -> None:
        """An operator moves one message back from the DLQ (attributes preserved, as a move does)."""
        dlq = f"{channel}-dlq"
        got = self.w.sqs.receive(dlq, 1)
        if got:
            self.w.sqs.send(channel, got[0].body, delay_seconds=0, attributes=got[0].attributes)
            self.w.sqs.delete(dlq, got[0].receipt_handle)

    def cancel(self, i: int) -> None:
        if self.rids:
            try:
                self.w.reminders.cancel(self.rids[i % len(self.rids)])
            except Exception as exc:  # ConflictError when everything is terminal
                assert type(exc).__name__ == "ConflictError", exc

    def reschedule(self, i: int, offset: int) -> None:
        if self.rids:
            from datetime import timedelta

            try:
                self.w.reminders.reschedule(
                    self.rids[i % len(self.rids)], self.w.clock.now() + timedelta(seconds=offset)
                )
            except Exception as exc:
                assert type(exc).__name__ in ("ConflictError", "PossibleAcceptanceError"), exc

    def during_send(self, kind: str) -> None:
        def hook(delivery: Delivery, reminder: Reminder) -> None:
            if kind == "cancel":
                self.cancel(self.rids.index(reminder.id))
            elif kind == "reschedule":
                self.reschedule(self.rids.index(reminder.id), 60)
            else:  # the same message delivered twice by SQS, processed concurrently by worker w2
                msg = DeliveryMessage(reminder.id, delivery.channel_id, reminder.version)
                calls = len(self.w.sender.calls)
                res = self.w.worker("w2" if delivery.lease_owner != "w2" else "w1").process(
                    msg, MessageContext("dup", "dup-receipt", 1, {})
                )
                assert len(self.w.sender.calls) == calls, "a concurrent duplicate sent"
                assert not res.ack and res.outcome == "lease_busy"
                assert res.visibility_seconds > 0

        self.w.sender.before_send = hook

    def step(self, event: tuple[Any, ...]) -> None:
        name, *args = event
        if name == "advance":
            self.w.clock.advance(args[0])
        elif name == "dispatch":
            self.w.run_shards()
        else:
            getattr(self, name)(*args)

    # -- the end ----------------------------------------------------------------------------------
    def drain(self) -> None:
        w = self.w
        w.sender.scripts.clear()
        w.sender.default = []
        w.sender.before_send = None
        for _ in range(400):
            w.run_shards()
            for ch in CHANNELS:
                for _ in range(50):
                    if not w.poll(ch):
                        break
            if self.all_terminal():
                return
            w.clock.advance(300)
        raise AssertionError(f"not terminal after the drain: {self.states()}")

    def states(self) -> dict[str, dict[str, str]]:
        return {rid: {c: d["st"] for c, d in self.w.store.items[rid]["dl"].items()} for rid in self.rids}

    def all_terminal(self) -> bool:
        return all(DeliveryState(s).terminal for per in self.states().values() for s in per.values())

    def check(self) -> None:
        w = self.w
        for rid, cid, before, after in w.store.transitions:
            b, a = DeliveryState(before), DeliveryState(after)
            assert a in TRANSITIONS[b], f"illegal transition {b} -> {a} ({rid} {cid})"
            if b in TERMINAL:
                assert b is DeliveryState.DEAD_LETTER, f"{b} -> {a}"
                assert a in (DeliveryState.QUEUED, DeliveryState.CANCELED), f"{b} -> {a}"
        for rid in self.rids:
            r = w.get(rid)
            for d in r.deliveries.values():
                if d.state is DeliveryState.DELIVERED:
                    assert w.sender.accepted[d.key] >= 1, "delivered without a provider acceptance"
                if w.sender.honour_keys:
                    assert w.sender.accepted[d.key] <= 1
                acc = w.sender.acceptances.get(d.key, [])
                assert all(o in AMBIGUOUS for o in acc[:-1]), acc


@settings(
    # REMINDERS_PROPERTY_EXAMPLES=2000 for a deeper local search; 100 keeps the suite fast.
    max_examples=int(os.environ.get("REMINDERS_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    honour_keys=st.booleans(),
    dues=st.lists(st.sampled_from((-7200, -60, 0, 30, 900, 901, 3600)), min_size=1, max_size=2),
    outcomes=st.lists(st.sampled_from(OUTCOMES), min_size=2, max_size=12),
    steps=st.lists(events, min_size=10, max_size=50),
)
# Regressions, each once a failure of this test: a cancel while the send is in flight must not turn
# canceled into delivered; a reschedule of a retryable delivery into the window (retryable -> queued);
# a reminder created long overdue whose message is lost must still be found by the watchdog.
@example(
    honour_keys=False,
    dues=[0],
    outcomes=["ok"],
    steps=[("during_send", "cancel"), ("deliver", "webhook", "w1", False)],
)
@example(
    honour_keys=True,
    dues=[0],
    outcomes=["500"],
    steps=[("deliver", "webhook", "w1", False), ("reschedule", 0, 120), ("deliver", "webhook", "w1", False)],
)
@example(honour_keys=True, dues=[-7200], outcomes=["ok"], steps=[("lose", "webhook", 0)])
# The ambiguous window (accepted, then the worker died) and the rest of the fault vocabulary.
@example(
    honour_keys=False,
    dues=[0],
    outcomes=["crash_after"],
    steps=[("deliver", "webhook", "w1", False), ("advance", 121), ("deliver", "webhook", "w1", False)],
)
@example(
    honour_keys=True,
    dues=[0],
    outcomes=["timeout_after"],
    steps=[("deliver", "webhook", "w1", False), ("advance", 3601), ("deliver", "webhook", "w1", False)],
)
@example(
    honour_keys=True,
    dues=[0],
    outcomes=["400"],
    steps=[("deliver", "webhook", "w1", False), ("redrive", "webhook"), ("deliver", "webhook", "w1", False)],
)
@example(
    honour_keys=True,
    dues=[0],
    outcomes=["ok"],
    steps=[("during_send", "duplicate"), ("deliver", "webhook", "w1", False)],
)
@example(
    honour_keys=True,
    dues=[0],
    outcomes=["config", "429"],
    steps=[
        ("deliver", "webhook", "w1", False),
        ("deliver", "webhook", "w1", False),
        ("deliver", "webhook", "w1", False),
    ],
)
def test_delivery_state_machine(
    honour_keys: bool, dues: list[int], outcomes: list[str], steps: list[tuple[Any, ...]]
) -> None:
    model = Model(honour_keys, outcomes)
    w = model.w
    w.run_shards()  # the dispatcher has been running since before these reminders existed
    for i, due in enumerate(dues):
        channels = TWO_CHANNELS if i == 1 else TWO_CHANNELS[:1]
        r = w.create(f"renewal:acct-1:{i}", due_in=due, channels=channels)
        model.rids.append(r.id)
    for event in steps:
        note(f"{event} @ {w.clock.now().isoformat()}")
        model.step(event)
        model.check()
    model.drain()
    model.check()
    note(json.dumps(model.states()))
