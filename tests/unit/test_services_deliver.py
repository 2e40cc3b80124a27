"""The delivery use case with fakes: claim, judge, send with the stable key, classify, record, ack."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.errors import MalformedMessageError
from reminders.domain.health import HealthPolicy
from reminders.domain.ports import OutMessage
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import parse_iso
from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext, RecordResult

from tests.unit.fakes import MAX_RECEIVE_COUNT, Crash, World


@pytest.fixture
def w() -> World:
    return World(shards=1)


def key_of(w: World, rid: str, cid: str = "webhook-0") -> str:
    return w.delivery(rid, cid).key


def dlq(w: World, channel: str = "webhook") -> list[dict[str, Any]]:
    q = w.sqs.queues[f"{channel}-dlq"]
    return [{**json.loads(m.body), "attributes": m.attributes} for m in q.messages.values()]


# -- the happy path and its records ------------------------------------------------------------------------
def test_delivered_records_receipt_history_and_acks(w: World) -> None:
    r = w.create("k", due_in=0)
    (res,) = w.poll()
    assert res.ack and res.outcome == "delivered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.receipt == "r-1" and d.delivered_at
    assert d.lease_owner is None and d.lease_until is None
    (a,) = d.history
    assert (a.event, a.outcome, a.status, a.decision) == ("attempt", "accepted", 200, "delivered")
    assert a.policy_version == w.policy.version and a.fingerprint and a.worker == "w1"
    assert w.queued() == []
    assert w.telemetry.counts["delivered"] == 1


def test_the_provider_call_carries_the_stable_key(w: World) -> None:
    r = w.create("k", due_in=0)
    w.poll()
    assert [c.key for c in w.sender.calls] == [r.deliveries["webhook-0"].key]


# -- judged without a send -----------------------------------------------------------------------------------
def test_a_duplicate_after_delivery_is_suppressed(w: World) -> None:
    r = w.create("k", due_in=0)
    (m,) = w.receive()
    w.sqs.send("webhook", m.body)  # SQS delivers the same logical message twice
    w.settle("webhook", m, w.process(m))
    assert [x.outcome for x in w.poll()] == ["duplicate_suppressed"]
    assert w.sender.sends(key_of(w, r.id)) == 1
    assert w.telemetry.by_dimension[("duplicate_suppressed", (("reason", "delivered"),))] == 1
    assert w.queued() == []


def test_unknown_reminder_is_acked(w: World) -> None:
    res = w.worker().process(DeliveryMessage("rem_" + "0" * 32, "webhook-0", 1), MessageContext("m", "h"))
    assert res.ack and res.outcome == "stale_unknown"


def test_malformed_messages_are_poison_for_the_backstop() -> None:
    bodies: list[object] = [[], {"reminder_id": "r"}, {"reminder_id": 1, "channel_id": "c", "version": 1}]
    for body in bodies:
        with pytest.raises(MalformedMessageError):
            DeliveryMessage.parse(body)
    with pytest.raises(MalformedMessageError):
        DeliveryMessage.parse({"reminder_id": "r", "channel_id": "c", "version": "1"})


def test_cancel_after_enqueue_acks_without_a_send(w: World) -> None:
    r = w.create("k", due_in=0)
    w.reminders.cancel(r.id)
    assert [x.outcome for x in w.poll()] == ["canceled_skipped"]
    assert w.sender.calls == [] and w.queued() == []


def test_reschedule_makes_the_old_version_stale_and_the_new_one_delivers(w: World) -> None:
    r = w.create("k", due_in=0)
    w.reminders.reschedule(r.id, w.clock.now() + timedelta(seconds=10))
    assert [x.outcome for x in w.poll()] == ["stale_skipped"]
    assert w.sender.calls == []
    w.clock.advance(10)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    assert w.telemetry.by_dimension[("stale_skipped", (("reason", "stale_version"),))] == 1


def test_a_message_arriving_before_the_due_time_comes_back_with_the_remaining_time(w: World) -> None:
    r = w.create("k", due_in=300)
    w.sqs.send("webhook", json.dumps({"reminder_id": r.id, "channel_id": "webhook-0", "version": 1}))
    w.clock.advance(0.4)
    (res,) = w.poll()
    assert not res.ack and res.outcome == "not_yet_due"
    assert res.visibility_seconds == 300  # 299.6 s, rounded up: never early
    assert w.sender.calls == []


def test_a_message_arriving_before_next_attempt_at_comes_back_with_the_remaining_time(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    (res,) = w.poll()
    assert res.outcome == "retry_scheduled"
    na = parse_iso(w.delivery(r.id).next_attempt_at or "")
    w.sqs.send("webhook", json.dumps({"reminder_id": r.id, "channel_id": "webhook-0", "version": 1}))
    (early,) = w.poll()
    assert not early.ack and early.outcome == "not_yet_due"
    wait = (na - w.clock.now()).total_seconds()
    assert wait <= early.visibility_seconds < wait + 1
    assert w.sender.sends(key_of(w, r.id)) == 1


# -- leases --------------------------------------------------------------------------------------------------
def test_a_live_lease_sends_the_message_back_for_the_lease_remainder(w: World) -> None:
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    w.sender.script(key, ["crash_before"])
    (m,) = w.receive()
    with pytest.raises(Crash):
        w.process(m, "w1")  # w1 claimed, then died: the row is `sending` under w1's lease
    d = w.delivery(r.id)
    assert d.state is DeliveryState.SENDING and d.lease_owner == "w1"
    lease_until = parse_iso(d.lease_until or "")

    def judge() -> RecordResult:
        return w.worker("w2").process(DeliveryMessage(r.id, "webhook-0", 1), MessageContext("dup", "dup"))

    res = judge()
    remainder = (lease_until - w.clock.now()).total_seconds()
    assert not res.ack and res.outcome == "lease_busy"
    assert remainder <= res.visibility_seconds <= remainder + 1
    w.clock.advance(45)
    res = judge()
    assert res.outcome == "lease_busy" and 15 <= res.visibility_seconds <= 16
    assert w.telemetry.counts["lease_busy"] == 2
    assert ("lease_busy", {"reminder_id": r.id, "delivery_key": key}) in w.telemetry.logs  # names its row

    w.clock.advance(16)  # the lease has expired: a crashed worker; take over and send
    res = judge()
    assert res.ack and res.outcome == "delivered"
    assert w.telemetry.counts["lease_expired"] == 1
    assert w.sender.sends(key) == 2 and w.sender.accepted[key] == 1
    assert any(a.worker == "w2" for a in w.delivery(r.id).history)
    expired = [a for a in w.delivery(r.id).history if a.event == "lease_expired"]
    assert [a.detail for a in expired] == ["w1"]  # the take-over names whose lease it ended


def test_default_lease_ends_before_the_visibility_timeout(w: World) -> None:
    from tests.unit.fakes import VISIBILITY_TIMEOUT

    assert w.policy.provider_timeout_seconds < w.policy.lease_seconds < VISIBILITY_TIMEOUT


def test_a_crash_after_the_provider_accepted_resends_with_the_same_key(w: World) -> None:
    """The honest window: accepted, then the worker died before recording. The retry after the lease
    expiry carries the same key, so a key-honouring receiver confirms instead of accepting again."""
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    w.sender.script(key, ["crash_after"])
    (m,) = w.receive()
    with pytest.raises(Crash):
        w.process(m)
    w.clock.advance(121)  # the message's visibility timeout (lease 60 s ends first)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    d = w.delivery(r.id)
    assert d.history[-1].outcome == "reconciled_conflict"
    assert w.sender.accepted[key] == 1 and w.sender.sends(key) == 2


def test_a_dropped_ack_is_absorbed_by_the_ledger(w: World) -> None:
    r = w.create("k", due_in=0)
    (m,) = w.receive()
    assert w.process(m).outcome == "delivered"  # ... and the worker died before deleting the message
    w.clock.advance(121)
    assert [x.outcome for x in w.poll()] == ["duplicate_suppressed"]
    assert w.sender.sends(key_of(w, r.id)) == 1


# -- retries -------------------------------------------------------------------------------------------------
def test_a_retry_sets_the_visibility_to_the_delay_and_never_sleeps(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setattr(time, "sleep", lambda *_: pytest.fail("the worker must never sleep"))
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    (res,) = w.poll()
    d = w.delivery(r.id)
    assert not res.ack and res.outcome == "retry_scheduled"
    assert d.state is DeliveryState.RETRYABLE and d.attempts == 1
    assert d.last_error == {"class": "transient", "status": 500, "detail": ""}
    a = d.history[-1]
    assert a.decision == "retry" and a.delay_seconds is not None
    assert a.delay_seconds <= res.visibility_seconds < a.delay_seconds + 1  # rounded up
    wait = (parse_iso(d.next_attempt_at or "") - w.clock.now()).total_seconds()
    assert abs(wait - a.delay_seconds) < 0.001
    (msg,) = w.queued()
    assert msg["visible_in"] == res.visibility_seconds  # the handler's ChangeMessageVisibility


def test_429_does_not_spend_the_attempt_budget(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["429"] * 8 + ["ok"])
    for _ in range(9):
        w.clock.advance(4000)
        w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED
    assert d.throttles == 8 and d.attempts == 1  # only the final, successful send is budgeted


def test_429_retry_after_is_honoured(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["429_retry_after"])
    (res,) = w.poll()
    assert 30 <= res.visibility_seconds <= 30 + w.policy.retry_after_jitter_seconds + 1


def test_the_attempt_budget_runs_out_into_the_dlq() -> None:
    # One delivery failing while its endpoint counts as healthy (a lone failing delivery on an
    # endpoint that is otherwise up): the budget ends it. (With the default health policy, every send
    # of an endpoint failing for 60 s holds it and probes spend no attempt: test_matrix_health.py.)
    w = World(shards=1, health_policy=HealthPolicy(all_failed_min_sends=10**6))
    r = w.create("k", due_in=0)
    w.sender.script(
        key_of(w, r.id), ["500", "timeout_before", "connection", "500", "500", "500", "500", "500"]
    )
    for _ in range(8):
        w.clock.advance(3700)
        w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "attempts_exhausted"
    assert d.attempts == 8 and not d.dlq_pending
    (m,) = dlq(w)
    assert m["attributes"]["reason"] == "attempts_exhausted" and m["attributes"]["attempts"] == "8"
    assert m["attributes"]["delivery_key"] == d.key and m["attributes"]["dl_cycle"] == "0"
    assert w.queued() == []
    assert w.telemetry.by_dimension[("dead_lettered", (("reason", "attempts_exhausted"),))] == 1


def test_a_permanent_4xx_dead_letters_at_once(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["400"])
    (res,) = w.poll()
    assert res.ack and res.outcome == "dead_lettered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "permanent_failure"
    (m,) = dlq(w)
    assert m["attributes"]["last_status"] == "400" and m["attributes"]["last_error"] == "permanent"


def test_409_confirmed_by_a_webhook_receiver_is_delivered_as_reconciled_conflict(w: World) -> None:
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    # An earlier attempt timed out after the receiver had accepted it: the 409 confirms that send.
    w.sender.script(key, ["timeout_after"])
    w.poll()
    w.clock.advance(3600)
    (res,) = w.poll()
    assert res.outcome == "delivered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.history[-1].outcome == "reconciled_conflict"
    assert d.history[-1].status == 409


def test_409_nobody_can_confirm_dead_letters_for_a_person(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["conflict_unconfirmed"])
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "conflict_unconfirmed"
    assert w.sender.sends(d.key) == 1  # never a blind retry


def test_configuration_errors_hold_the_channel_without_spending_attempts(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["config"] * 10)
    for _ in range(10):
        (res,) = w.poll()
        assert not res.ack and res.visibility_seconds == w.policy.hold_seconds
        w.clock.advance(w.policy.hold_seconds)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.attempts == 0
    assert d.last_error and d.last_error["class"] == "configuration"
    assert {a.decision for a in d.history} == {"hold"}
    assert w.telemetry.counts["configuration_hold"] == 10
    assert dlq(w) == []
    assert [x.outcome for x in w.poll()] == ["delivered"]  # the secret is back


def test_max_age_dead_letters_as_expired_without_a_send(w: World) -> None:
    r = w.create("k", due_in=0)
    w.clock.advance(24 * 3600 + 1)  # consumers were paused for a day
    (res,) = w.poll()
    assert res.ack and res.outcome == "dead_lettered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "expired"
    assert w.sender.calls == []
    assert dlq(w)[0]["attributes"]["reason"] == "expired"


def test_a_retry_sends_byte_identical_content(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500", "timeout_after", "ok"])
    for _ in range(3):
        w.poll()
        w.clock.advance(3700)
    bodies = {c.body for c in w.sender.calls}
    assert len(w.sender.calls) == 3 and len(bodies) == 1
    assert len({a.fingerprint for a in w.delivery(r.id).history}) == 1


# -- the receive budget --------------------------------------------------------------------------------------
def test_near_max_receive_count_a_fresh_message_replaces_the_old_one(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    (m,) = w.receive()
    res = w.worker().process(
        DeliveryMessage(r.id, "webhook-0", 1),
        MessageContext(m.message_id, m.receipt_handle, receive_count=MAX_RECEIVE_COUNT - 3),
    )
    assert res.ack and res.outcome == "retry_scheduled_renewed"
    w.settle("webhook", m, res)
    (fresh,) = w.queued()
    assert fresh["reminder_id"] == r.id and fresh["version"] == 1
    na = parse_iso(w.delivery(r.id).next_attempt_at or "")
    assert fresh["visible_in"] >= (na - w.clock.now()).total_seconds()  # not early
    assert w.telemetry.counts["message_renewed"] == 1
    (again,) = w.receive() or [None]
    assert again is None  # still delayed
    w.clock.advance(fresh["visible_in"])
    assert [x.outcome for x in w.poll()] == ["delivered"]


def test_below_the_receive_budget_the_message_itself_comes_back(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    (m,) = w.receive()
    res = w.worker().process(
        DeliveryMessage(r.id, "webhook-0", 1),
        MessageContext(m.message_id, m.receipt_handle, receive_count=MAX_RECEIVE_COUNT - 4),
    )
    assert not res.ack and res.outcome == "retry_scheduled"


# -- operator redrive ----------------------------------------------------------------------------------------
def test_a_redriven_message_starts_a_fresh_bounded_cycle(w: World) -> None:
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    w.sender.script(key, ["400"])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    (dl,) = w.sqs.receive("webhook-dlq")
    # "the fix": the receiver accepts now; the operator redrives (attributes travel with the message)
    w.clock.advance(3600)
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    twin = (dl.body, dl.attributes)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.cycle == 1 and d.attempts == 1
    assert [a.event for a in d.history] == ["attempt", "redrive", "attempt"]
    assert w.telemetry.by_dimension[("redriven", (("reason", "permanent_failure"),))] == 1

    w.sqs.send("webhook", twin[0], attributes=twin[1])  # the same redrive twice: no second cycle
    assert [x.outcome for x in w.poll()] == ["duplicate_suppressed"]
    assert w.sender.accepted[key] == 1 and w.delivery(r.id).cycle == 1


def test_a_redrive_cycle_is_bounded_too(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["400", "400"])
    w.poll()
    (dl,) = w.sqs.receive("webhook-dlq")
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.cycle == 1
    (dl2,) = w.sqs.receive("webhook-dlq")
    assert dl2.attributes["dl_cycle"] == "1"


# -- the merge after losing the row while sending ------------------------------------------------------------
def test_cancel_while_sending_records_the_attempt_and_stays_canceled(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.before_send = lambda d, rem: w.reminders.cancel(rem.id) and None
    (res,) = w.poll()
    assert res.ack
    d = w.delivery(r.id)
    assert d.state is DeliveryState.CANCELED  # terminal: never flips to delivered
    assert d.history[-1].event == "attempt" and d.history[-1].outcome == "accepted"
    assert d.lease_owner is None


def test_cancel_while_sending_a_failing_attempt_is_never_retried(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    w.sender.before_send = lambda d, rem: w.reminders.cancel(rem.id) and None
    (res,) = w.poll()
    assert res.ack and w.delivery(r.id).state is DeliveryState.CANCELED
    w.clock.advance(7200)
    assert w.poll() == [] and w.sender.sends(key_of(w, r.id)) == 1


def test_reschedule_while_sending_is_refused_and_the_attempt_records_as_before(w: World) -> None:
    """Tightened by issue 18: a reschedule used to be allowed while sending (the outcome honoured
    the new time); now it is a 409 and the attempt in flight is recorded under its own version."""
    from reminders.domain.errors import ConflictError

    r = w.create("k", due_in=0)
    new_due = w.clock.now() + timedelta(hours=2)
    w.sender.script(key_of(w, r.id), ["429"])
    refused: list[Exception] = []

    def during_send(d: object, rem: Any) -> None:
        try:
            w.reminders.reschedule(rem.id, new_due)
        except ConflictError as exc:
            refused.append(exc)

    w.sender.before_send = during_send
    (res,) = w.poll()
    assert len(refused) == 1 and not res.ack
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and w.get(r.id).version == 1
    assert w.reminders.reschedule(r.id, new_due).version == 2  # allowed once recorded (a 429)


def test_policy_overrides_flow_into_the_history() -> None:
    w = World(shards=1, policy=RetryPolicy(version="local.7", base_seconds=2, cap_seconds=4))
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["500"])
    (res,) = w.poll()
    assert res.visibility_seconds <= 2
    assert w.delivery(r.id).history[-1].policy_version == "local.7"


def test_a_dead_letter_whose_dlq_send_failed_is_resent_by_the_returning_message(
    w: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["400"])
    real = w.queues.dead_letter
    calls = {"n": 0}

    def flaky(channel_type: str, message: OutMessage) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("SQS unreachable")
        real(channel_type, message)

    monkeypatch.setattr(w.queues, "dead_letter", flaky)
    (m,) = w.receive()
    with pytest.raises(ConnectionError):
        w.process(m)  # the handler fails the record: it comes back
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dlq_pending  # terminal in the ledger first
    assert dlq(w) == []
    w.clock.advance(121)
    assert [x.outcome for x in w.poll()] == ["dead_letter_resent"]
    assert len(dlq(w)) == 1 and not w.delivery(r.id).dlq_pending
    assert w.sender.sends(d.key) == 1  # never sent again


# -- a receiver that throttles without Retry-After (issue 12 #1) -------------------------------------------
def _run_until_acked(w: World, limit: int = 10_000) -> list[RecordResult]:
    """Poll the webhook queue, waiting out each visibility (or a renewed message's delay), until no
    message is left."""
    results: list[RecordResult] = []
    for _ in range(limit):
        polled = w.poll()
        results.extend(polled)
        if not w.queued():
            return results
        waits = [m["visible_in"] for m in w.queued() if m["visible_in"] > 0]
        w.clock.advance(max(1, math.ceil(min(waits, default=1))))
    raise AssertionError(f"messages left after {limit} polls")


def test_a_day_of_429s_without_retry_after_backs_off_to_dozens_of_posts_and_spends_no_attempt(
    w: World,
) -> None:
    """Was: ~2,700 POSTs in 24 h to one receiver (the delay never grew). Consecutive throttles double
    the delay up to the cap; the budget stays untouched; the maximum age ends it as ``expired``."""
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    w.sender.script(key, ["429"] * 10_000)
    _run_until_acked(w, limit=200)  # today's code was still POSTing every ~30 s after 200 polls
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "expired"
    assert d.attempts == 0
    posts = w.sender.sends(key)
    # 30 s doubling to the 1 h cap: 7 steps to the cap, then at least 30 min apart for the rest of the day
    assert posts <= 60, posts
    cap = w.policy.cap_seconds
    n = 0
    for line in (a for a in d.history if a.decision == "retry"):
        n += max(1, line.repeat)  # folded throttle lines carry the delay of their last 429
        ceiling = min(cap, w.policy.throttle_base_seconds * 2 ** (n - 1))
        assert ceiling / 2 <= (line.delay_seconds or 0) <= ceiling, (n, line.delay_seconds)
    assert n == d.throttles - 1  # every 429 but the last (which expired it) retried


def test_any_other_outcome_ends_the_throttle_streak_and_the_next_429_starts_small(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["429", "429", "429", "500", "429", "ok"])
    _run_until_acked(w)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.throttle_streak == 0
    assert d.throttles == 4 and d.attempts == 2  # the 500 and the acceptance are budgeted
    base = w.policy.throttle_base_seconds
    delays = [a.delay_seconds or 0 for a in d.history if a.decision == "retry"]
    assert [round(x) >= lo for x, lo in zip(delays, [base / 2, base, base * 2], strict=False)] == [True] * 3
    assert base / 2 <= delays[4] <= base  # the 429 after the 500: a new streak of one


# -- cancel of a dead letter, then a redrive (issue 12 #2) -------------------------------------------------
def test_a_cancelled_dead_letter_is_acknowledged_unsent_when_its_dlq_message_is_redriven(w: World) -> None:
    r = w.create("k", due_in=0)
    key = key_of(w, r.id)
    w.sender.script(key, ["400"])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    cancelled = w.reminders.cancel(r.id)
    assert cancelled.deliveries["webhook-0"].state is DeliveryState.CANCELED
    (dl,) = w.sqs.receive("webhook-dlq")
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)  # the operator redrives the DLQ anyway
    assert [x.outcome for x in w.poll()] == ["canceled_skipped"]
    d = w.delivery(r.id)
    assert d.state is DeliveryState.CANCELED and d.cycle == 0
    assert w.sender.sends(key) == 1 and w.queued() == []
    assert [a.event for a in d.history] == ["attempt", "cancel"]


def test_the_throttle_streak_is_stored_compactly_and_items_written_before_it_still_read(w: World) -> None:
    from reminders_ops.bench.sim.model import item_size

    r = w.create("k", due_in=0)
    w.sender.script(key_of(w, r.id), ["429", "429"])
    w.poll()
    w.clock.advance(3600)
    w.poll()
    stored = w.store.items[r.id]["dl"]["webhook-0"]
    assert stored["ts"] == 2 and w.delivery(r.id).throttle_streak == 2
    del stored["ts"]  # an item written before the field existed
    assert w.delivery(r.id).throttle_streak == 0
    w.clock.advance(3600)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    assert "ts" not in w.store.items[r.id]["dl"]["webhook-0"]  # zero is not stored
    # the ledger item of a delivered single-channel reminder stays one write unit
    one = w.create("k2", due_in=0)
    w.poll()
    assert w.delivery(one.id).state is DeliveryState.DELIVERED
    assert item_size(w.store.items[one.id]) < 1024
