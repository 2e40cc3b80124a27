"""Issue 16, endpoint health (matrix additions): an endpoint that is down is held — its deliveries
are parked unsent, spending no attempt, one probe at a time goes out with a growing interval, and the
first answered probe resumes it; held past the disable limit it is disabled and its deliveries
dead-letter ``endpoint_disabled`` (redrivable after an operator enables it again); a receiver can
disable it with ``webhook-delivery: disable``. In-memory world, virtual clock."""

from __future__ import annotations

import itertools
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reminders.domain.health import EndpointState, HealthPolicy
from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import Rendered
from reminders.domain.retry import OutcomeClass, SendResult
from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext, destination_bucket

from tests.unit.fakes import ScriptedSender, SendCall, World


class Outage(ScriptedSender):
    """The receiver: down (503) from ``down_from`` until ``down_until`` (epoch seconds of the virtual
    clock), otherwise the scripted receiver (accepts, deduplicates by key)."""

    def __init__(self, w: World, down_from: float, down_until: float, steering: str = "") -> None:
        super().__init__(w.clock)
        self.down_from, self.down_until, self.steering = down_from, down_until, steering

    def down(self) -> bool:
        return self.down_from <= self.clock.now().timestamp() < self.down_until

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        if self.down():
            self.calls.append(SendCall(delivery.key, "down", rendered.body, self.clock.now(), delivery.state))
            return SendResult(
                OutcomeClass.TRANSIENT, 503, fingerprint=rendered.fingerprint, steering=self.steering
            )
        return super().send(delivery, reminder, rendered)


def _world(down_for: float, *, health: HealthPolicy | None = None, steering: str = "") -> World:
    w = World(shards=1, health_policy=health)
    t0 = w.clock.now().timestamp()
    w.sender = Outage(w, t0, t0 + down_for, steering)
    return w


def _drain(w: World) -> None:
    for _ in range(10_000):
        if not w.poll():
            return
    raise AssertionError("the queue never settled")


def _run(w: World, seconds: int) -> None:
    for _ in range(seconds):
        _drain(w)
        w.clock.advance(1)
    _drain(w)


def _dead_letters(w: World) -> list[dict[str, Any]]:
    q = w.sqs.queues["webhook-dlq"]
    return [dict(m.attributes) for m in q.messages.values()]


def _redrive(w: World) -> int:
    """What ``reminders dlq redrive`` does: receive from the DLQ, send with the same body and
    attributes to the source queue, delete."""
    moved = 0
    while batch := w.sqs.receive("webhook-dlq", 10):
        for m in batch:
            w.sqs.send("webhook", m.body, delay_seconds=0, attributes=dict(m.attributes))
            w.sqs.delete("webhook-dlq", m.receipt_handle)
            moved += 1
    return moved


def _endpoint(w: World, r: Reminder) -> str:
    return destination_bucket(r.deliveries["webhook-0"], r.account_id)


def _create(w: World, n: int, spread: float = 1.0) -> list[Reminder]:
    return [w.create(f"renewal:acct-1:health-{i}", due_in=i * spread) for i in range(n)]


def test_endpoint_down_five_minutes_is_held_probes_only_resumes_with_no_duplicate_or_dead_letter() -> None:
    w = _world(300)
    rs = _create(w, 40)
    _run(w, 900)
    ep = _endpoint(w, rs[0])
    states = [(s, why) for _, e, s, why in w.health.transitions if e == ep]
    assert states[0][0] == "held" and states[0][1] in ("failure_ratio", "all_failed_60s")
    assert states[-1] == ("active", "probe_succeeded") and len(states) == 2, states
    held_at, resumed_at = (t for t, e, _, _ in w.health.transitions if e == ep)
    # While held: only probes, one at a time, each interval at least the grown one (capped).
    during = [c for c in w.sender.calls if held_at < c.at.timestamp() < resumed_at]
    gaps = [b.at.timestamp() - a.at.timestamp() for a, b in itertools.pairwise(during)]
    policy = w.world.health_policy
    schedule, at = 0, 0.0
    while at < resumed_at - held_at:  # the probe intervals a hold this long has
        schedule += 1
        at += policy.probe_interval(schedule, at)
    assert 1 <= len(during) <= schedule, (len(during), schedule)
    for k, (probe, gap) in enumerate(zip(during, gaps, strict=False), start=1):
        assert gap >= policy.probe_interval(k, probe.at.timestamp() - held_at) - 1e-6, (k, gaps)
    before_hold = sum(1 for c in w.sender.calls if c.at.timestamp() <= held_at)
    # Everything delivered once, nothing dead-lettered; holds spent no attempt.
    for r in rs:
        d = w.delivery(r.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)
        assert w.sender.accepted[d.key] == 1
        assert d.attempts <= w.policy.max_attempts
        assert any(a.event == "defer" and a.detail == "endpoint_hold" for a in d.history) or d.attempts
    assert sum(w.delivery(r.id).attempts for r in rs) <= before_hold + len(rs)
    assert _dead_letters(w) == []
    assert w.telemetry.counts["endpoint_parked"] > 0


def test_endpoint_down_past_the_disable_limit_dead_letters_endpoint_disabled_redrive_after_enable() -> None:
    w = _world(10**9, health=HealthPolicy(disable_after_seconds=1800))
    rs = _create(w, 10)
    _run(w, 2400)
    ep = _endpoint(w, rs[0])
    states = [(s, why) for _, e, s, why in w.health.transitions if e == ep]
    assert states[0] in (("held", "all_failed_60s"), ("held", "failure_ratio"))
    assert states[1:] == [("disabled", "held_past_disable_limit")]
    for r in rs:
        d = w.delivery(r.id)
        assert (d.state, d.dead_letter_reason) == (DeliveryState.DEAD_LETTER, "endpoint_disabled")
    dead = _dead_letters(w)
    assert len(dead) == len(rs) and {m["reason"] for m in dead} == {"endpoint_disabled"}
    # Fixed; the operator enables the endpoint and redrives: each delivered once.
    w.sender.down_until = 0
    guard = w.world.health_guard()
    h = guard.set_state(ep, "acct-1", EndpointState.ACTIVE, w.clock.now().timestamp())
    assert (h.state, h.why) == (EndpointState.ACTIVE, "operator")
    assert _redrive(w) == len(rs)
    _run(w, 5)
    for r in rs:
        d = w.delivery(r.id)
        assert d.state is DeliveryState.DELIVERED and w.sender.accepted[d.key] == 1


def test_a_redrive_while_the_endpoint_is_still_disabled_dead_letters_it_again() -> None:
    w = _world(10**9, health=HealthPolicy(disable_after_seconds=600))
    (r,) = _create(w, 1)
    _run(w, 2400)  # held when its last budgeted attempt comes (15 min), disabled 10 min later
    assert w.delivery(r.id).dead_letter_reason == "endpoint_disabled"
    _redrive(w)
    sends = len(w.sender.calls)
    _run(w, 5)
    assert w.delivery(r.id).dead_letter_reason == "endpoint_disabled" and len(w.sender.calls) == sends


def test_one_reminder_endpoint_down_ten_minutes_is_held_probed_and_still_delivers() -> None:
    w = _world(600)
    (r,) = _create(w, 1)
    _run(w, 1800)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and w.sender.accepted[d.key] == 1
    assert d.attempts <= w.policy.max_attempts
    ep = _endpoint(w, r)
    assert [s for _, e, s, _ in w.health.transitions if e == ep] == ["held", "active"]


def test_receiver_disables_the_endpoint_with_webhook_delivery_disable() -> None:
    w = _world(10**9, steering="disable")
    rs = _create(w, 5, spread=10)
    _run(w, 60)
    ep = _endpoint(w, rs[0])
    assert [(s, why) for _, e, s, why in w.health.transitions if e == ep] == [
        ("disabled", "receiver_disable")
    ]
    assert len(w.sender.calls) == 1  # the others never sent
    for r in rs:
        d = w.delivery(r.id)
        assert (d.state, d.dead_letter_reason) == (DeliveryState.DEAD_LETTER, "endpoint_disabled")
    w.sender.down_until = 0
    w.world.health_guard().set_state(ep, "acct-1", EndpointState.ACTIVE, w.clock.now().timestamp())
    _redrive(w)
    _run(w, 5)
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in rs)


def test_concurrent_records_of_a_held_endpoint_send_exactly_one_probe() -> None:
    """The records of one batch run in threads (handlers/delivery.py): the probe lease is one
    conditional write, so one of them probes and the others park."""
    w = _world(10**9)
    rs = _create(w, 30, spread=0)
    _run(w, 70)  # held by now; the probe schedule is running
    ep = _endpoint(w, rs[0])
    assert w.health.items[ep].state is EndpointState.HELD
    w.clock.advance(400)  # every parked message back, a probe due
    batch = [m for _ in range(10) for m in w.receive()]
    sends = len(w.sender.calls)
    worker = w.worker("threads")

    def one(m: Any) -> Any:
        return worker.process(
            DeliveryMessage.parse(json.loads(m.body)),
            MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes)),
        )

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, batch))
    assert len(batch) > 10 and len(w.sender.calls) == sends + 1
    assert sum(1 for x in results if x.outcome == "endpoint_parked") >= len(batch) - 1
