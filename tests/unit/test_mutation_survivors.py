"""Tests that kill what `make mutate` (mutmut over the delivery core) found surviving.

mutmut mutates no module or class constant: the ones the promise rests on are pinned here by value
(the 15-minute floor, the correctable states, the outcomes that count as evidence of an attempt).
The rest reach branches no other test reached: a row that changed during an attempt, a
configuration hold older than the maximum age, the boundaries of a 2xx.
"""

from __future__ import annotations

import pytest
from reminders.domain import corrections, health, models
from reminders.domain.receipts import Receipt, ReceiptRejectedError, ReceiptStatus, decode, encode
from reminders.domain.retry import (
    Action,
    OutcomeClass,
    RetryPolicy,
    SendResult,
    classify_http,
    decide,
)
from reminders.domain.states import DeliveryState
from reminders.services import receipts
from reminders.services.delivery import messages as delivery_messages

from tests.unit.fakes import World


# -- constants mutmut does not mutate -------------------------------------------------------------------
def test_the_last_attempt_waits_for_the_fifteen_minute_floor_when_the_policy_is_the_default() -> None:
    policy = RetryPolicy()
    assert policy.min_exhaust_seconds == 15 * 60 and policy.max_attempts == 8
    d = decide(
        SendResult(OutcomeClass.TRANSIENT, 500),
        attempts=policy.max_attempts - 1,
        age_seconds=0.0,
        policy=policy,
    )
    assert d.action is Action.RETRY and d.delay_seconds >= 15 * 60


def test_a_correction_touches_every_open_delivery_and_no_finished_one_when_states_are_listed() -> None:
    assert {
        DeliveryState.SCHEDULED,
        DeliveryState.QUEUED,
        DeliveryState.SENDING,
        DeliveryState.RETRYABLE,
        DeliveryState.DEAD_LETTER,
    } == corrections.CORRECTABLE
    assert DeliveryState.DELIVERED not in corrections.CORRECTABLE
    assert DeliveryState.CANCELED not in corrections.CORRECTABLE


def test_only_outcomes_that_may_hide_an_acceptance_count_as_attempt_evidence_when_recorded() -> None:
    assert {"accepted", "reconciled_conflict", "timeout", "transient"} == models.MAYBE_ACCEPTED
    assert {"accepted", "reconciled_conflict"} == delivery_messages._ACCEPTED
    # every outcome class a send can end in is spelled as the history spells it
    assert {o.value for o in OutcomeClass} >= models.MAYBE_ACCEPTED


def test_a_receipt_proves_delivery_only_when_the_delivery_is_not_finished_otherwise() -> None:
    assert set(receipts._PROVEN) == set(DeliveryState) - {DeliveryState.DELIVERED, DeliveryState.CANCELED}


def test_endpoint_health_counts_answers_and_failures_apart_when_classified() -> None:
    assert {OutcomeClass.TRANSIENT, OutcomeClass.TIMEOUT, OutcomeClass.CONNECTION} == health.FAILURES
    assert {
        OutcomeClass.ACCEPTED,
        OutcomeClass.RECONCILED_CONFLICT,
        OutcomeClass.CONFLICT_UNCONFIRMED,
        OutcomeClass.THROTTLED,
        OutcomeClass.PERMANENT,
    } == health.ANSWERS
    assert not health.FAILURES & health.ANSWERS


# -- the boundaries of an acceptance --------------------------------------------------------------------
@pytest.mark.parametrize("status", [100, 199, 300, 301, 302, 304, 307, 308, 399])
def test_an_answer_is_not_delivered_when_its_status_is_outside_2xx(status: int) -> None:
    assert classify_http(status) is not OutcomeClass.ACCEPTED
    assert classify_http(status) is OutcomeClass.PERMANENT


@pytest.mark.parametrize("status", [200, 201, 204, 299])
def test_an_answer_is_delivered_when_its_status_is_2xx(status: int) -> None:
    assert classify_http(status) is OutcomeClass.ACCEPTED


# -- a configuration hold -------------------------------------------------------------------------------
def test_a_configuration_hold_never_expires_when_it_lasts_past_the_maximum_age() -> None:
    """Our configuration (a missing secret) holds the channel: no maximum age applies to the hold."""
    w = World(shards=1, policy=RetryPolicy(max_age_seconds=600.0, hold_seconds=300.0))
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["config"] * 5)
    for _ in range(5):  # 1,500 s held: past the 600 s maximum age
        (res,) = w.poll()
        assert not res.ack and res.visibility_seconds == 300.0
        w.clock.advance(300.0)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.dead_letter_reason is None
    assert {a.decision for a in d.history} == {"hold"}


# -- the merge after the row changed during an attempt --------------------------------------------------
def _touch_the_row_during_the_send(w: World, rid: str) -> None:
    """Another writer rewrites the delivery while our attempt is in flight (its lease unchanged):
    the attempt's own conditional write then fails and the outcome is merged into the new row."""

    def touch(_d: object, _r: object) -> None:
        cur = w.delivery(rid)
        assert cur.state is DeliveryState.SENDING
        assert w.store.save_delivery(rid, cur, cur.rev)

    w.sender.before_send = touch


def test_a_failed_attempt_is_recorded_retryable_when_the_row_changed_during_it() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    _touch_the_row_during_the_send(w, r.id)
    (res,) = w.poll()
    assert res.outcome == "recorded_after_conflict_retryable"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.delivered_at is None
    assert d.history[-1].event == "attempt" and d.history[-1].outcome == "transient"
    assert w.telemetry.counts.get("delivered", 0) == 0


def test_an_accepted_attempt_is_recorded_delivered_when_the_row_changed_during_it() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    _touch_the_row_during_the_send(w, r.id)
    (res,) = w.poll()
    assert res.outcome == "recorded_after_conflict_delivered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.receipt == "r-1" and d.next_attempt_at is None
    assert d.lease_owner is None and d.history[-1].outcome == "accepted"


# -- the stored receipt and a refused one ----------------------------------------------------------------
def test_a_stored_receipt_reads_back_whole_when_its_event_id_holds_the_separator() -> None:
    r = Receipt(event_id="ev|1|b", status=ReceiptStatus.REJECTED, event_time="2026-11-29T12:00:00.000000Z")
    assert encode(r) == "r|2026-11-29T12:00:00.000000Z|ev|1|b"
    assert decode(encode(r)) == r


def test_a_refused_receipt_carries_its_message_and_field_when_raised() -> None:
    e = ReceiptRejectedError("status must be processed or rejected", "status")
    assert str(e) == "status must be processed or rejected" and e.field == "status"
