"""Issue 14 (a million due in one minute) — a batch that is behind does not wait for one record.

SQS delays in whole seconds rounded down, so a message may turn visible up to a second before it is
due and its consumer waits out the rest (tests/unit/test_subsecond.py). One invocation finishes
when its slowest record does: a record that waits 0.9 s holds the slot of the nine others of its
batch. When the batch also holds a record a second or more overdue, the queue is behind: the
not-yet-due record comes back by visibility (whole seconds, never early) instead of holding the
batch, and the overdue ones finish at once. A batch that is not behind waits as before."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from reminders.domain.schedule import iso
from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext, batch_behind_seconds

from tests.unit.fakes import World


def _ctx(m: object, behind: float) -> MessageContext:
    return MessageContext(
        m.message_id,  # type: ignore[attr-defined]
        m.receipt_handle,  # type: ignore[attr-defined]
        m.receive_count,  # type: ignore[attr-defined]
        dict(m.attributes),  # type: ignore[attr-defined]
        batch_behind_seconds=behind,
    )


def test_a_not_yet_due_record_of_a_batch_behind_comes_back_by_visibility_without_waiting() -> None:
    w = World(shards=1)
    worker = w.worker()
    slept: list[float] = []
    worker.sleep = slept.append
    r = w.create("k", due_in=30.6)
    w.clock.advance(30)  # visible, 0.6 s before its due time
    (m,) = w.receive()
    res = worker.process(DeliveryMessage.parse(json.loads(m.body)), _ctx(m, behind=2.5))
    assert not res.ack and res.outcome == "not_yet_due_batch_behind" and res.visibility_seconds == 1
    assert slept == [] and w.sender.calls == []  # neither a wait nor an early send
    assert w.delivery(r.id).state is DeliveryState.QUEUED  # not claimed
    assert w.telemetry.counts["handed_back"] == 1


def test_the_handed_back_record_is_sent_when_it_comes_back_never_early() -> None:
    w = World(shards=1)
    w.worker().sleep = lambda s: None
    r = w.create("k", due_in=30.6)
    w.clock.advance(30)
    (m,) = w.receive()
    res = w.worker().process(DeliveryMessage.parse(json.loads(m.body)), _ctx(m, behind=1.0))
    w.settle("webhook", m, res)
    assert w.receive() == []  # invisible for the second
    w.clock.advance(1)
    (m2,) = w.receive()
    assert (
        w.worker().process(DeliveryMessage.parse(json.loads(m2.body)), _ctx(m2, 0.0)).outcome == "delivered"
    )
    assert w.sender.calls[0].at >= r.due_at


def test_a_batch_that_is_not_behind_still_waits_the_sub_second_rest() -> None:
    w = World(shards=1)
    slept: list[float] = []
    worker = w.worker()
    original = worker.sleep
    worker.sleep = lambda s: (slept.append(s), original(s))  # type: ignore[func-returns-value]
    r = w.create("k", due_in=30.6)
    w.clock.advance(30)
    (m,) = w.receive()
    res = worker.process(DeliveryMessage.parse(json.loads(m.body)), _ctx(m, behind=0.4))
    assert res.outcome == "delivered" and slept and w.sender.calls[0].at == r.due_at


def test_batch_behind_is_how_late_the_most_overdue_record_is_by_its_due_attribute() -> None:
    now = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)
    dues = [
        iso(now + timedelta(seconds=0.5)),
        iso(now - timedelta(seconds=3)),
        None,  # no due attribute (a renewed or parked message): not counted
        "not-a-time",  # unreadable: not counted
    ]
    assert batch_behind_seconds(dues, now) == 3.0
    assert batch_behind_seconds([iso(now + timedelta(seconds=0.2))], now) == 0.0
    assert batch_behind_seconds([], now) == 0.0
