"""The deliverer's ports and its one conditional write (services/delivery/base.py), where `make mutate`
found no test looking: its timing checks the policy's own lease, a clock that cannot sleep waits in
real time, and a refused write is taken for our own only when the row holds exactly what we wrote."""

from __future__ import annotations

import random
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from reminders.domain.retry import RetryPolicy
from reminders.domain.states import DeliveryState
from reminders.domain.timing import aws_call_worst_seconds

from tests.proof.test_matrix_health import _drain, _world
from tests.unit.fakes import World


def test_a_deliverers_timing_reports_a_policy_lease_too_short_for_a_send_and_its_record() -> None:
    w = World(shards=1, policy=RetryPolicy(lease_seconds=5.0, provider_timeout_seconds=3.0))
    timing = w.worker().timing
    assert timing.lease_seconds == 5.0
    assert timing.send_budget_seconds == 3.0 + aws_call_worst_seconds() + timing.margin_seconds
    assert any(p.startswith("lease 5 s must outlast a send and its record") for p in timing.problems())


def test_a_deliverer_on_a_clock_that_cannot_sleep_waits_in_real_time() -> None:
    class WallClock:  # a Clock: now() only
        def now(self) -> datetime:
            return datetime.now(UTC)

    w = World(shards=1)
    deliverer = w.world.deliverer(worker="w9", senders={}, rng=random.Random(7), clock=WallClock())
    assert deliverer.sleep is time.sleep


def test_a_refused_write_is_not_taken_for_ours_when_another_writer_moved_the_row_to_the_same_state() -> None:
    """Our failed attempt (retryable) meets a row another writer moved one revision on, also to
    retryable but without our attempt's line: that is not our write landing (its answer lost), so
    our outcome is not counted as recorded; the row that moved on stands."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])

    def moved_on(_d: object, _r: object) -> None:
        cur = w.delivery(r.id)
        theirs = replace(cur, state=DeliveryState.RETRYABLE, lease_owner=None, lease_until=None)
        assert w.store.save_delivery(r.id, theirs, cur.rev)

    w.sender.before_send = moved_on
    (res,) = w.poll()
    assert res.ack and res.outcome == "superseded"
    assert w.telemetry.counts.get("own_write_recognised", 0) == 0
    assert [a.event for a in w.delivery(r.id).history] == []


def test_a_deliverer_built_without_a_receive_count_renews_messages_before_the_stacks_backstop() -> None:
    """Without max_receive_count it assumes the stack's (deliveryMaxReceiveCount, 20) and hands a
    long-lived delivery a fresh message three receives before SQS would move it to the DLQ."""
    from reminders.runtime import Settings
    from reminders.services.deliver import Deliverer

    w = World(shards=1)
    bare = Deliverer(
        store=w.store,
        queues=w.queues,
        senders={},
        clock=w.clock,
        policy=w.policy,
        telemetry=w.telemetry,
        worker="w9",
    )
    assert Settings.__dataclass_fields__["max_receive_count"].default == 20
    assert bare.receive_budget == 20 - 3


@pytest.mark.parametrize(("max_receive_count", "budget"), [(3, 2), (4, 2), (5, 2), (6, 3), (20, 17)])
def test_a_deliverer_renews_three_receives_before_the_backstop_but_never_before_the_second(
    max_receive_count: int, budget: int
) -> None:
    w = World(shards=1, max_receive_count=max_receive_count)
    deliverer = w.worker()
    assert deliverer.receive_budget == budget


def test_a_deliverer_built_without_a_random_generator_parks_with_jitter_from_its_own() -> None:
    """The park's jitter is drawn from the deliverer's generator: one of its own when none is given."""
    w = _world(30 * 3600)  # down longer than the test: the endpoint stays held
    w._workers["w1"] = w.world.deliverer(worker="w1", senders={"webhook": w.sender}, rng=None)
    for i in range(20):  # enough failures to hold the endpoint
        w.create(f"renewal:acct-1:parked-{i}", due_in=i)
    for _ in range(30):
        w.run_shards()
        _drain(w)
        w.clock.advance(60)
    assert w.telemetry.counts["endpoint_parked"] > 0


def test_our_record_whose_answer_was_lost_is_recognised_as_ours_and_counted() -> None:
    """The record's conditional write landed but its answer was lost (botocore's retry then failed
    its own condition): the row holds exactly what we wrote, so it is ours — counted, not merged."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.store.lost_answers["save_delivery"] = 1
    (res,) = w.poll()
    assert res.ack and res.outcome == "delivered"
    assert w.telemetry.counts["own_write_recognised"] == 1
    assert w.delivery(r.id).state is DeliveryState.DELIVERED


def test_a_refused_write_is_not_taken_for_ours_when_the_rows_last_line_is_another_workers() -> None:
    """The record's write is refused and the row, one revision on, holds what we meant to write —
    same state, lease, next attempt, cycle and history length — but its last line is another
    worker's attempt, not ours: that is not our write landing, so nothing is counted as ours and our
    outcome is superseded (the other worker's line stands)."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    real_save = w.store.save_delivery

    def theirs_first(reminder_id: str, d: Any, expected_rev: int, **conditions: Any) -> bool:
        if d.history and d.history[-1].event == "attempt" and d.history[-1].worker != "w0":
            w.store.save_delivery = real_save  # type: ignore[method-assign]
            line = replace(d.history[-1], worker="w0")
            assert real_save(reminder_id, replace(d, history=[*d.history[:-1], line]), expected_rev)
        return real_save(reminder_id, d, expected_rev, **conditions)

    w.store.save_delivery = theirs_first  # type: ignore[method-assign]
    (res,) = w.poll()
    assert res.ack and res.outcome == "superseded"
    assert w.telemetry.counts.get("own_write_recognised", 0) == 0
    assert w.delivery(r.id).history[-1].worker == "w0"
