"""What the hand-off step (services/delivery/handoff.py) tells an operator and SQS once the row says
what happened (MISSION §8: survivors of `make mutate`): a scheduled retry is logged with its status,
delay and attempts; a delivery observes the attempts it took."""

from __future__ import annotations

import json
import random
from dataclasses import replace

from reminders.domain.ratelimit import DestinationLimiter
from reminders.domain.retry import OutcomeClass
from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.delivery.messages import (
    PARKED_ENDPOINT_ATTRIBUTE,
    PARKED_LEASE_ATTRIBUTE,
    PARKED_LIMIT_ATTRIBUTE,
    destination_bucket,
)

from tests.proof.test_matrix_health import _world
from tests.unit.fakes import MAX_RECEIVE_COUNT, World

HOUR = 3600


def test_a_retry_is_logged_with_its_status_delay_and_attempts_and_a_delivery_observes_its_attempts() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["500"])
    (res,) = w.poll()
    d = w.delivery(r.id)
    assert not res.ack and d.state is DeliveryState.RETRYABLE
    (line,) = [f for action, f in w.telemetry.logs if action == "retry_scheduled"]
    assert line == {
        "reminder_id": r.id,
        "delivery_key": key,
        "reason": "transient",
        "status": 500,
        "delay_seconds": d.history[-1].delay_seconds,
        "attempts": 1,
    }
    assert 0 < line["delay_seconds"] <= res.visibility_seconds
    w.clock.advance(res.visibility_seconds)
    (res,) = w.poll()
    assert res.ack and res.outcome == "delivered"
    assert [v for name, v in w.telemetry.observations if name == "attempts_to_deliver"] == [2]
    assert w.delivery(r.id).next_attempt_at is None  # delivered: no attempt is due (none stored)
    (line,) = [f for action, f in w.telemetry.logs if action == "delivered"]
    assert line == {"reminder_id": r.id, "delivery_key": key, "outcome": OutcomeClass.ACCEPTED, "status": 200}


def test_a_parked_message_is_replaced_by_a_fresh_one_when_its_receives_reach_the_budget() -> None:
    """Parked by visibility, a message's receive count climbs with every probe interval; at the
    receive budget (max_receive_count - 3) it is replaced by a fresh message, before SQS's own
    backstop (max_receive_count) could move a live delivery's message to the DLQ."""
    w = _world(30 * HOUR)  # down longer than the test: the endpoint stays held
    for i in range(20):  # enough failures to hold the endpoint
        w.create(f"renewal:acct-1:parked-{i}", due_in=i)
    parked: list[int] = []
    for _ in range(3 * 60):  # 3 h in minutes: the dispatcher and its watchdog every minute
        w.run_shards()
        while received := w.receive():
            for m in received:
                if m.attributes.get(PARKED_ENDPOINT_ATTRIBUTE):
                    parked.append(m.receive_count)
                w.settle("webhook", m, w.process(m))
        w.clock.advance(60)
    assert w.telemetry.counts["endpoint_parked"] > 0
    assert max(parked) == w.worker().receive_budget == MAX_RECEIVE_COUNT - 3
    assert w.sqs.size("webhook-dlq") == 0


def test_a_delivery_over_its_destinations_rate_is_given_back_unsent_and_comes_back_by_visibility() -> None:
    """One send a second to a destination: the second delivery due at once is given back (no
    attempt, no history line), counted rate_limited, and comes back by visibility, not acked."""
    w = World(shards=1)
    w._workers["w1"] = w.world.deliverer(
        senders={"webhook": w.sender}, worker="w1", rng=random.Random(7), limiter=DestinationLimiter(1.0)
    )
    first, second = (w.create(f"renewal:acct-1:{i}", due_in=0) for i in range(2))
    results = {json.loads(m.body)["reminder_id"]: (m, w.process(m)) for m in w.receive()}
    assert results[first.id][1].outcome == "delivered"
    m, res = results[second.id]
    assert not res.ack and res.outcome == "rate_limited" and res.visibility_seconds == 1
    d = w.delivery(second.id)
    assert d.state is DeliveryState.QUEUED and d.attempts == 0 and d.history == [] and d.lease_owner is None
    assert w.telemetry.by_dimension[("rate_limited", (("channel", "webhook"),))] == 1
    w.settle("webhook", m, res)
    w.clock.advance(1)
    assert [r.outcome for r in w.poll()] == ["delivered"]


def test_a_dead_letter_with_no_recorded_error_reaches_the_dlq_with_empty_error_fields() -> None:
    """A row dead-lettered with its DLQ message still owed and no error on record (written by an
    older release): the returning message sends it, its error fields empty, its reason unknown."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    d = w.delivery(r.id)
    owed = replace(
        d, state=DeliveryState.DEAD_LETTER, dlq_pending=True, last_error=None, dead_letter_reason=None
    )
    assert w.store.save_delivery(r.id, owed, d.rev)
    assert [res.outcome for res in w.poll()] == ["dead_letter_resent"]
    (m,) = w.sqs.queues["webhook-dlq"].messages.values()
    assert m.attributes == {
        "reason": "unknown",
        "attempts": "0",
        "last_error": "",
        "last_status": "",
        "dl_cycle": "0",
        "delivery_key": d.key,
    }
    assert not w.delivery(r.id).dlq_pending
    assert w.telemetry.by_dimension[("dead_lettered", (("reason", "unknown"),))] == 1
    (line,) = [f for action, f in w.telemetry.logs if action == "dead_lettered"]
    assert line == {"reminder_id": r.id, "delivery_key": d.key, "reason": None, "attempts": 0}


def test_a_message_parked_before_issue_24_is_judged_by_its_claim_with_one_health_read() -> None:
    """A parked message that names no account (parked before issue 24) is not parked again on its
    own say-so: its claim judges it, reading the endpoint's health once, as its own account's."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    (m,) = w.receive()
    t = w.clock.now().timestamp()
    legacy = {
        PARKED_ENDPOINT_ATTRIBUTE: destination_bucket(w.delivery(r.id), "acct-1"),
        PARKED_LIMIT_ATTRIBUTE: str(int(t + 7200)),
        PARKED_LEASE_ATTRIBUTE: str(int(t + 7200)),
    }
    worker, before = w.worker(), w.health.reads
    res = worker.process(
        DeliveryMessage.parse(json.loads(m.body)), MessageContext(m.message_id, m.receipt_handle, 1, legacy)
    )
    assert res.ack and res.outcome == "delivered"
    assert w.health.reads - before == 1


def test_a_rate_limited_delivery_at_its_receive_budget_is_given_back_as_a_fresh_message() -> None:
    """Given back to the rate limiter at its receive budget, the message is replaced by a fresh
    one (delayed by the limiter's wait), not kept on toward SQS's backstop."""
    w = World(shards=1)
    worker = w._workers["w1"] = w.world.deliverer(
        senders={"webhook": w.sender}, worker="w1", rng=random.Random(7), limiter=DestinationLimiter(1.0)
    )
    first, second = (w.create(f"renewal:acct-1:{i}", due_in=0) for i in range(2))
    by_id = {json.loads(m.body)["reminder_id"]: m for m in w.receive()}
    assert w.process(by_id[first.id]).outcome == "delivered"
    m = by_id[second.id]
    ctx = MessageContext(m.message_id, m.receipt_handle, worker.receive_budget, dict(m.attributes))
    res = worker.process(DeliveryMessage.parse(json.loads(m.body)), ctx)
    assert res.ack and res.outcome == "rate_limited_renewed"
    fresh = [q for q in w.queued() if q["id"] != m.message_id and q["reminder_id"] == second.id]
    assert [(q["channel_id"], q["version"], q["visible_in"]) for q in fresh] == [("webhook-0", 1, 1)]
    assert w.delivery(second.id).state is DeliveryState.QUEUED


def test_a_delivery_with_a_failed_attempt_is_given_back_retryable_when_rate_limited() -> None:
    """Given back to the rate limiter, a delivery goes back to the state it had: retryable once an
    attempt failed (queued only if it never was attempted nor throttled)."""
    w = World(shards=1)
    w._workers["w1"] = w.world.deliverer(
        senders={"webhook": w.sender}, worker="w1", rng=random.Random(7), limiter=DestinationLimiter(1.0)
    )
    failed = w.create("renewal:acct-1:0", due_in=0)
    w.sender.script(w.delivery(failed.id).key, ["500"])
    (res,) = w.poll()
    assert w.delivery(failed.id).attempts == 1 and res.visibility_seconds == 1
    w.clock.advance(1)
    other = w.create("renewal:acct-1:1", due_in=0)
    by_id = {json.loads(m.body)["reminder_id"]: m for m in w.receive()}
    assert w.process(by_id[other.id]).outcome == "delivered"  # takes the destination's one slot
    assert w.process(by_id[failed.id]).outcome == "rate_limited"
    d = w.delivery(failed.id)
    assert d.state is DeliveryState.RETRYABLE and d.attempts == 1 and d.lease_owner is None
