"""The attempt step (services/delivery/attempt.py) where `make mutate` found no test looking: what the
history says of an attempt that sent nothing because an acceptance was already on record."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from reminders.adapters.ratelimit_store import MemoryRateSlots
from reminders.domain.health import HealthPolicy
from reminders.domain.localtime import SendWindow
from reminders.domain.models import ChannelType
from reminders.domain.ratelimit import SharedRateLimiter
from reminders.domain.retry import STEERING_DISABLE, RetryPolicy
from reminders.domain.schedule import iso, parse_iso
from reminders.domain.states import DeliveryState
from reminders.domain.suppression import SuppressionEntry, SuppressionReason, address_hash
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.delivery.messages import (
    PARK_MAX_SECONDS,
    PARKED_LEASE_ATTRIBUTE,
    PARKED_LIMIT_ATTRIBUTE,
    RACE_BACKOFF_SECONDS,
)
from reminders.services.health import EndpointHealthGuard
from reminders.services.intents import ChannelSpec

from tests.proof.test_matrix_health import _drain, _world
from tests.unit.fakes import EMAIL, World


def test_an_open_delivery_whose_acceptance_is_on_record_is_delivered_unsent_and_says_why() -> None:
    """The provider's 2xx is on the row's history (a stale worker's merged acceptance) while the
    row is open again: the next claim sends nothing, spends no attempt, and its line says so."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.poll()
    d = w.delivery(r.id)
    reopened = replace(d, state=DeliveryState.RETRYABLE, delivered_at=None, next_attempt_at=None)
    assert w.store.save_delivery(r.id, reopened, d.rev)
    body = {"reminder_id": r.id, "channel_id": "webhook-0", "version": r.version}
    w.sqs.send("webhook", json.dumps(body))
    assert [res.outcome for res in w.poll()] == ["delivered"]
    after = w.delivery(r.id)
    assert after.state is DeliveryState.DELIVERED and w.sender.sends(d.key) == 1
    assert after.attempts == d.attempts == 1 and after.receipt == "r-1"
    line = after.history[-1]
    assert (line.event, line.outcome, line.decision, line.detail) == (
        "attempt",
        "accepted",
        "delivered",
        "accepted_before",
    )


def test_a_suppressed_email_records_its_reason_and_scope_as_the_last_error_and_history_line() -> None:
    """The dead letter of a suppressed address says what suppressed it — the reason and the scope
    on its history line, the reason as its last error — and that nothing was sent."""
    w = World(shards=1)
    w.suppressions.add(
        SuppressionEntry(
            "acct-1",
            address_hash(EMAIL),
            SuppressionReason.COMPLAINT,
            "test",
            "2026-11-29T12:00:00Z",
            "renewal",
        )
    )
    r = w.create("k", channels=(ChannelSpec(ChannelType.EMAIL, EMAIL),))
    w.clock.advance(2.0)
    assert [res.outcome for res in w.poll("email")] == ["suppressed"]
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "suppressed"
    assert d.last_error == {"class": "suppressed", "detail": "complaint"}  # no status: nothing was sent
    assert d.next_attempt_at is None and d.lease_owner is None and d.lease_until is None and not d.dlq_pending
    (line,) = d.history
    assert (line.at, line.event, line.decision, line.detail, line.worker) == (
        iso(w.clock.now()),
        "suppressed",
        "dead_letter",
        "complaint@renewal",
        "w1",
    )
    assert line.outcome == "" and w.sender.calls == []
    (dl,) = w.sqs.receive("email-dlq")
    assert (dl.attributes["reason"], dl.attributes["last_error"]) == ("suppressed", "suppressed")


def test_a_deferred_delivery_goes_back_to_retryable_once_it_has_attempts_and_to_queued_before() -> None:
    """Parked behind a held endpoint (a deferral: no attempt spent), a delivery goes back to the
    state it had: queued if it was never attempted, retryable once it failed at least once."""
    w = _world(30 * 3600)  # down longer than the test: the endpoint stays held
    rs = [w.create(f"renewal:acct-1:parked-{i}", due_in=i) for i in range(20)]
    for _ in range(120):  # two hours in minutes: the dispatcher and its watchdog every minute
        w.run_shards()
        _drain(w)
        w.clock.advance(60)
    deferred = [d for d in (w.delivery(r.id) for r in rs) if d.history[-1].event == "defer"]
    seen = {(d.state, bool(d.attempts or d.throttles)) for d in deferred}
    assert seen == {(DeliveryState.QUEUED, False), (DeliveryState.RETRYABLE, True)}
    for d in deferred:  # the line says how long: the next attempt is that far from it
        line = d.history[-1]
        assert line.detail == "endpoint_hold" and line.delay_seconds is not None
        assert 1 <= line.delay_seconds <= PARK_MAX_SECONDS
        assert d.next_attempt_at == iso(parse_iso(line.at) + timedelta(seconds=line.delay_seconds))


def test_an_email_delivery_neither_reads_nor_counts_toward_any_endpoints_health() -> None:
    """Endpoint health (issue 16) is the webhooks': an email's failures and its delivery read and
    write no health item (SES is paced by its own quota)."""
    w = World(shards=1)
    r = w.create("k", due_in=0, channels=(ChannelSpec(ChannelType.EMAIL, EMAIL),))
    w.sender.script(w.delivery(r.id, "email-0").key, ["500", "500"])
    for _ in range(3):
        w.poll("email")
        w.clock.advance(3600)
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED
    assert (w.health.reads, w.health.writes, w.health.items) == (0, 0, {})


def test_a_delivery_parked_behind_a_held_endpoint_names_its_deliver_by_as_its_limit() -> None:
    """Its deadline ends a parked delivery before the maximum age does: the parked message names
    the deadline as its limit (and the row's park lease goes no further)."""
    w = _world(30 * 3600)
    for i in range(20):  # enough failures to hold the endpoint
        w.create(f"renewal:acct-1:parked-{i}", due_in=i)
    new = w.new("renewal:acct-1:by", due_in=1800)
    new = replace(new, deliver_by=new.due_at + timedelta(hours=1))
    r, _ = w.reminders.create(new)
    for _ in range(40):
        w.run_shards()
        _drain(w)
        w.clock.advance(60)
    (m,) = [m for m in w.queued() if m["reminder_id"] == r.id]
    assert new.deliver_by is not None
    limit = str(int(new.deliver_by.timestamp()))
    assert (m["attributes"][PARKED_LIMIT_ATTRIBUTE], m["attributes"][PARKED_LEASE_ATTRIBUTE]) == (
        limit,
        limit,
    )
    assert w.delivery(r.id).state is DeliveryState.QUEUED


def test_every_provider_call_is_logged_with_its_reminder_key_and_attempt_number() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["500"])
    w.poll()
    w.clock.advance(3600)
    w.poll()
    sends = [f for action, f in w.telemetry.logs if action == "send"]
    assert sends == [{"reminder_id": r.id, "delivery_key": key, "attempt": n} for n in (1, 2)]


def test_a_send_out_of_time_whose_give_back_loses_a_race_at_its_receive_budget_is_renewed() -> None:
    """The send no longer fits the function's time (the health read took it), and the row moved on
    meanwhile, so the give-back's write is refused: the message comes back later — at its receive
    budget as a fresh message (before SQS's backstop moves it to the DLQ)."""
    w = World(shards=1)
    r = w.create("renewal:acct-1:budget", due_in=0)
    timing = w.worker().timing
    slack = 0.5

    class SlowHealth:  # each health read takes longer than the slack; the row moves on meanwhile
        def __getattr__(self, name: str) -> Any:
            target = getattr(w.health, name)

            def call(*args: Any, **kwargs: Any) -> Any:
                w.clock.advance(timing.store_call_worst_seconds + slack + 0.5)
                cur = w.delivery(r.id)
                w.store.save_delivery(r.id, cur, cur.rev)
                return target(*args, **kwargs)

            return call

    health = EndpointHealthGuard(store=SlowHealth(), policy=w.world.health_policy, telemetry=w.telemetry)
    deliverer = w.world.deliverer(
        worker="w1", senders={"webhook": w.sender}, rng=random.Random(7), health=health
    )
    deadline = w.clock.now().timestamp() + timing.record_budget_seconds + slack
    (m,) = w.receive()
    budget = deliverer.receive_budget
    result = deliverer.process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(
            m.message_id,
            m.receipt_handle,
            budget,
            {},
            remaining_seconds=lambda: deadline - w.clock.now().timestamp(),
        ),
    )
    assert w.sender.calls == []
    assert (result.ack, result.outcome) == (True, "no_time_left_race_renewed")
    fresh = [q for q in w.queued() if q["id"] != m.message_id]
    assert [(q["reminder_id"], q["channel_id"], q["version"]) for q in fresh] == [(r.id, "webhook-0", 1)]


def test_a_retry_whose_wait_for_the_opening_would_pass_the_maximum_age_keeps_its_backoff() -> None:
    """Sent an hour late (its cycle started at 12:00), it fails at 13:00; its backoff lands in
    quiet hours (13:01-13:10) and waiting for the opening would pass its maximum age (4,000 s from
    12:00): the retry is not moved to the opening — it keeps its backoff, and the claim then ends it
    expired, unsent."""
    w = World(shards=1, policy=RetryPolicy(base_seconds=600, max_age_seconds=4000))
    r, _ = w.reminders.create(replace(w.new("k"), send_window=SendWindow.parse("13:10", "13:01")))
    w.sender.script(w.delivery(r.id).key, ["500"])
    w.clock.advance(3600)
    (res,) = w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.history[-1].outcome == "transient"
    backoff = d.history[-1].delay_seconds
    assert backoff is not None and 60 < backoff < 540  # lands between 13:01 and 13:10
    assert d.next_attempt_at is not None  # the backoff's time, not the opening's (13:10)
    assert abs((parse_iso(d.next_attempt_at) - w.clock.now()).total_seconds() - backoff) < 0.001
    w.clock.advance(res.visibility_seconds)
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "expired"
    assert len(w.sender.calls) == 1


def test_lateness_is_observed_once_per_delivery_at_its_first_attempt() -> None:
    """schedule_to_send_lateness_seconds: how late the first send of a delivery left (a retry's
    lateness is the backoff's, not the schedule's)."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    w.clock.advance(2.5)
    w.poll()
    w.clock.advance(3600)
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DELIVERED
    assert [v for name, v in w.telemetry.observations if name == "schedule_to_send_lateness_seconds"] == [2.5]


@pytest.mark.parametrize(("answer", "state"), [("ok", "delivered"), ("500", "dead_letter")])
def test_a_receivers_disable_steering_ends_a_failure_but_never_an_accepted_delivery(
    answer: str, state: str
) -> None:
    """``webhook-delivery: disable`` on a failure dead-letters it endpoint_disabled; on a 2xx the
    receiver has the reminder: it is delivered."""
    w = World(shards=1)

    class Steering:  # the receiver answers with the disable steering header
        def send(self, d: Any, r: Any, rendered: Any) -> Any:
            return replace(w.sender.send(d, r, rendered), steering=STEERING_DISABLE)

    w._workers["w1"] = w.world.deliverer(worker="w1", senders={"webhook": Steering()}, rng=random.Random(7))
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, [answer])
    w.poll()
    d = w.delivery(r.id)
    assert d.state.value == state
    assert d.dead_letter_reason == (None if answer == "ok" else "endpoint_disabled")


def test_a_deferral_whose_write_loses_a_race_comes_back_after_the_race_backoff() -> None:
    """Quiet hours defer an email; the row moved on between the claim and the deferral's write
    (here: while the suppression list was read), so the write is refused: the message comes back
    after the race backoff, and the claim judges the row as it is then."""
    w = World(shards=1)
    r, _ = w.reminders.create(
        replace(
            w.new("k", channels=(ChannelSpec(ChannelType.EMAIL, EMAIL),)),
            send_window=SendWindow.parse("22:00", "06:00"),
        )
    )
    real_find = w.suppressions.find

    def find(*args: Any) -> Any:
        cur = w.delivery(r.id, "email-0")
        assert w.store.save_delivery(r.id, cur, cur.rev)  # another writer, meanwhile
        return real_find(*args)

    w.suppressions.find = find  # type: ignore[method-assign]
    (res,) = w.poll("email")
    assert (res.ack, res.outcome, res.visibility_seconds) == (False, "deferred_race", RACE_BACKOFF_SECONDS)
    assert w.delivery(r.id, "email-0").history == []  # no defer line: the write was refused


def test_a_send_whose_shared_rate_slot_is_reserved_waits_for_that_slot_then_sends() -> None:
    """Two sends to one destination limited to 2 per second across consumers (the shared limiter):
    the first takes the slot now; the second is granted the next slot half a second on, waits for
    it in the lane (a timer on the consumer's clock, not a give-back) and sends then."""
    w = World(shards=1)
    limiter = SharedRateLimiter(MemoryRateSlots(), rate_of=lambda _bucket: 2.0)
    w._workers["w1"] = w.world.deliverer(
        worker="w1", senders={"webhook": w.sender}, rng=random.Random(7), limiter=limiter
    )
    w.create("k1", due_in=0)
    w.create("k2", due_in=0)
    start = w.clock.now()
    results = w.poll()
    assert [r.outcome for r in results] == ["delivered", "delivered"]
    assert limiter.granted == 1 and limiter.reserved == 1
    assert [c.at - start for c in w.sender.calls] == [timedelta(0), timedelta(seconds=0.5)]
    assert w.telemetry.counts["rate_reserved"] == 1


def test_a_failure_that_holds_its_endpoint_whose_probe_is_imminent_retries_after_its_own_second() -> None:
    """The failure that holds its endpoint, whose first probe is due half a second later: the hold
    asks the delivery to wait for that probe, at least a second; its own backoff is a second too,
    so it looks again exactly one second on (the hold adds no wait of its own)."""
    w = World(
        shards=1,
        policy=RetryPolicy(base_seconds=0.5),  # a one-second backoff (its floor)
        health_policy=HealthPolicy(min_sends=1, probe_base_seconds=0.5),  # one failure holds it
    )
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    (res,) = w.poll()
    assert w.telemetry.counts["endpoint_transition"] == 1  # held by this failure
    assert (res.ack, res.outcome, res.visibility_seconds) == (False, "retry_scheduled", 1)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE
    assert d.next_attempt_at is not None
    assert d.history[-1].delay_seconds == 1.0
    assert parse_iso(d.next_attempt_at) - parse_iso(d.history[-1].at) == timedelta(seconds=1)
