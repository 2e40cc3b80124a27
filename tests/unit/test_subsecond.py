"""Issue 14 — sub-second lateness: SQS gets the delay in whole seconds rounded *down* and the message
carries the due time; the consumer waits out the sub-second rest before it claims (a bounded timer,
not a retry), and never claims before ``due_at`` whatever the message says. In-memory world on a
virtual clock (tests/unit/fakes.py): a sleep moves that clock."""

from __future__ import annotations

import json
from datetime import timedelta

from reminders.domain.ports import OutMessage
from reminders.domain.schedule import due_attributes, iso
from reminders.domain.states import DeliveryState
from reminders.domain.timing import DEFAULT_TIMING
from reminders.services.deliver import DeliveryMessage, MessageContext

from tests.unit.fakes import World


def _sleeps(w: World) -> list[float]:
    slept: list[float] = []
    worker = w.worker()
    original = worker.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        original(seconds)

    worker.sleep = sleep
    return slept


def test_a_message_visible_before_its_due_time_waits_the_rest_and_is_sent_exactly_when_due() -> None:
    w = World(shards=1)
    slept = _sleeps(w)
    r = w.create("k", due_in=30.7)
    (msg,) = w.queued()
    assert msg["visible_in"] == 30  # rounded down
    w.clock.advance(30)
    (res,) = w.poll()
    assert res.outcome == "delivered"
    assert slept and abs(sum(slept) - 0.7) < 1e-6 and max(slept) < 1.0
    assert w.sender.calls[0].at == r.due_at  # not early, not late
    assert w.telemetry.counts["waited_before_claim"] == 1


def test_a_due_message_does_not_wait() -> None:
    w = World(shards=1)
    slept = _sleeps(w)
    w.create("k", due_in=5)
    w.clock.advance(5)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    assert slept == []


def test_a_message_more_than_a_second_early_is_not_waited_for_but_comes_back_by_visibility() -> None:
    """Only the sub-second rest is a timer; anything longer is the queue's job (never early)."""
    w = World(shards=1)
    slept = _sleeps(w)
    r = w.create("k", due_in=30.5)
    w.clock.advance(25)
    # a second message for it, visible at once (5.5 s early), carrying the due time
    w.queues.send("webhook", [OutMessage(r.id, "webhook-0", r.version, 0, due_attributes(r.due_at))])
    (m,) = w.receive()
    res = w.process(m)
    assert not res.ack and res.outcome == "not_yet_due" and res.visibility_seconds >= 5
    assert slept == [] and w.sender.calls == []
    assert w.delivery(r.id).state is DeliveryState.QUEUED


def test_a_due_attribute_that_says_earlier_than_the_row_never_makes_an_early_send() -> None:
    """The attribute is a hint; the claim's ``due <= now`` is the guard (a rescheduled reminder's
    message, a forged attribute): the consumer waits for the hint, the claim refuses, nothing sent."""
    w = World(shards=1)
    r = w.create("k", due_in=0.8)
    (m,) = w.receive()
    attrs = {**m.attributes, "due": iso(w.clock.now() + timedelta(seconds=0.3))}
    res = w.worker().process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(m.message_id, m.receipt_handle, m.receive_count, attrs),
    )
    assert not res.ack and res.outcome == "not_yet_due"
    assert w.sender.calls == [] and w.clock.now() < r.due_at


def test_no_wait_when_the_function_has_no_time_for_it() -> None:
    w = World(shards=1)
    slept = _sleeps(w)
    w.create("k", due_in=0.9)
    (m,) = w.receive()
    budget = DEFAULT_TIMING.record_budget_seconds
    res = w.worker().process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(
            m.message_id,
            m.receipt_handle,
            m.receive_count,
            dict(m.attributes),
            remaining_seconds=lambda: budget + 0.5,
        ),
    )
    assert slept == [] and w.sender.calls == [] and res.outcome == "not_yet_due"


def test_an_unreadable_due_attribute_is_ignored_and_the_claim_decides() -> None:
    w = World(shards=1)
    w.create("k", due_in=0)
    (m,) = w.receive()
    res = w.worker().process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(m.message_id, m.receipt_handle, m.receive_count, {"due": "not-a-time"}),
    )
    assert res.outcome == "delivered"


def test_a_timer_that_wakes_a_hair_early_is_topped_up_once_and_the_send_is_not_early() -> None:
    w = World(shards=1)
    worker = w.worker()
    slept: list[float] = []

    def early(seconds: float) -> None:  # every timer wakes half a millisecond early
        slept.append(seconds)
        w.clock.advance(max(0.0, seconds - 0.0005))

    worker.sleep = early
    r = w.create("k", due_in=30.7)
    w.clock.advance(30)
    (res,) = w.poll()
    assert res.outcome == "delivered" and len(slept) == 2  # the wait, then one top-up
    assert w.sender.calls[0].at >= r.due_at  # never early
