"""Issue 25 item 6: a parked delivery has at most one live message, whatever the length of the hold.
Parking by visibility writes nothing to the row, so the row must say durably that the delivery is
parked (``parked_until``): the watchdog otherwise takes it for lost and re-queues a copy every
``watch_lag``, and each copy is parked too. In-memory world, virtual clock."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import timedelta

from reminders.domain.schedule import iso, parse_iso
from reminders.domain.states import DeliveryState
from reminders.services.deliver import PARK_RENEW_AHEAD_SECONDS, PARK_RENEW_SECONDS
from reminders.services.dispatch import WATCH_LAG_SECONDS

from tests.proof.test_matrix_health import _drain, _world
from tests.unit.fakes import World

HOUR = 3600


def _live_messages(w: World, rid: str) -> int:
    return sum(1 for m in w.queued("webhook") if m["reminder_id"] == rid)


def test_parked_delivery_has_one_live_message_after_a_24h_hold() -> None:
    w = _world(30 * HOUR)  # down longer than the hold can last
    rs = [w.create(f"renewal:acct-1:parked-{i}", due_in=i) for i in range(20)]  # enough to hold it
    most = 0
    for _ in range(24 * 60):  # 24 h in minutes: the dispatcher and its watchdog every minute
        w.run_shards()
        _drain(w)
        most = max(most, *(_live_messages(w, r.id) for r in rs))
        w.clock.advance(60)
    assert w.telemetry.counts["endpoint_parked"] > 0
    assert most <= 1, most
    assert w.telemetry.counts.get("watchdog_requeued", 0) == 0
    # The row's park lease is renewed by a claim and its defer (two writes) at most once per
    # PARK_RENEW_SECONDS - PARK_RENEW_AHEAD_SECONDS (44 min): <= 33 renewals, 66 writes per 24 h.
    renewals = math.ceil(24 * HOUR / (PARK_RENEW_SECONDS - PARK_RENEW_AHEAD_SECONDS))
    assert w.telemetry.counts["deferred_endpoint_hold"] <= len(rs) * (1 + renewals)
    for r in rs:
        assert w.delivery(r.id).state is not DeliveryState.DELIVERED


def test_parked_delivery_whose_message_is_gone_is_rescued_once_its_park_limit_passes() -> None:
    """The park is not a way to stay non-terminal forever: past ``parked_until`` (its lease, never
    past its deadline or maximum age) the watchdog takes it for lost like any other delivery, and
    the claim ends it."""
    w = World(shards=1)
    r = w.create("renewal:acct-1:parked-lost", due_in=0)
    w.run_shards()
    for m in w.receive():  # the message is gone (not processed): only the row says it is parked
        w.sqs.delete("webhook", m.receipt_handle)
    d = w.delivery(r.id)
    limit = w.clock.now() + timedelta(hours=2)
    parked = replace(
        d,
        state=DeliveryState.RETRYABLE,
        next_attempt_at=iso(w.clock.now() + timedelta(seconds=60)),
        parked_until=iso(limit),
    )
    assert w.store.save_delivery(r.id, parked, d.rev)
    for _ in range(3 * 60):  # minutes: past the limit and the watchdog's lag (its entry, its cursor)
        w.run_shards()
        if w.queued():
            break
        w.clock.advance(60)
    requeued_at = w.clock.now()
    assert w.queued(), "never rescued"
    assert requeued_at >= limit, "rescued while still parked"


def test_parked_delivery_is_delivered_when_its_message_is_lost_and_the_endpoint_recovers() -> None:
    """The park's durable mark must not make the watchdog blind for a whole maximum age: a parked
    delivery whose message is gone while its endpoint is healthy again is sent within hours, not
    dead-lettered ``expired`` at the end of its 24 h: ``parked_until`` is a lease of
    PARK_RENEW_SECONDS (1 h) that only a live message renews, so a lost one is re-queued at most
    PARK_RENEW_SECONDS + the watchdog's lag (its re-check entry is filed at ``parked_until`` and read
    a lag behind now; it was filed a lag past it, issue 26) + its minute + a dispatcher run after its
    last renewal: 1 h 17 min."""
    w = World(shards=1)
    r = w.create("renewal:acct-1:parked-lost-recovers", due_in=0)
    w.run_shards()
    for m in w.receive():  # lost: to the DLQ after 20 failed receives, say; only the row remains
        w.sqs.delete("webhook", m.receipt_handle)
    d = w.delivery(r.id)
    parked = replace(
        d,
        state=DeliveryState.RETRYABLE,
        next_attempt_at=iso(w.clock.now() + timedelta(seconds=60)),
        parked_until=iso(w.clock.now() + timedelta(seconds=PARK_RENEW_SECONDS)),  # the park's lease
    )
    assert w.store.save_delivery(r.id, parked, d.rev)
    bound = PARK_RENEW_SECONDS + WATCH_LAG_SECONDS + 2 * 60  # the lease, the lag, its minute, a run
    for _ in range(int(bound // 60) + 1):  # minutes, the endpoint healthy (no hold in this world)
        w.run_shards()
        _drain(w)
        if w.delivery(r.id).state is DeliveryState.DELIVERED:
            break
        w.clock.advance(60)
    assert w.delivery(r.id).state is DeliveryState.DELIVERED, w.delivery(r.id).state


def test_parked_delivery_whose_message_is_lost_during_the_hold_is_parked_again_with_one_message() -> None:
    """A parked message lost while its endpoint is still held (a purge): the lapsed lease lets the
    watchdog re-queue it once, and the copy is parked again — one live message, the lease renewed."""
    w = _world(30 * HOUR)
    rs = [w.create(f"renewal:acct-1:parked-purged-{i}", due_in=i) for i in range(20)]
    for _ in range(60):  # an hour: the endpoint is held and its deliveries parked
        w.run_shards()
        _drain(w)
        w.clock.advance(60)
    lost = rs[-1]
    assert w.delivery(lost.id).parked_until is not None
    q = w.sqs.queues["webhook"]
    for mid in [m.id for m in q.messages.values() if json.loads(m.body)["reminder_id"] == lost.id]:
        del q.messages[mid]  # purged: only the row says it is parked
    assert _live_messages(w, lost.id) == 0
    most = 0
    bound = PARK_RENEW_SECONDS + 2 * WATCH_LAG_SECONDS + 60
    for _ in range(int(bound // 60) + 60):
        w.run_shards()
        _drain(w)
        most = max(most, *(_live_messages(w, r.id) for r in rs))
        w.clock.advance(60)
    assert w.telemetry.counts.get("watchdog_requeued", 0) == 1
    assert most <= 1, most
    assert _live_messages(w, lost.id) == 1
    assert w.delivery(lost.id).parked_until is not None
    assert parse_iso(w.delivery(lost.id).parked_until) > w.clock.now()


def test_parked_delivery_keeps_one_live_message_when_copies_were_queued_before_it_parked() -> None:
    """Found by the explorer (``make verify SEED=7``: six live messages for one parked delivery, each
    received every 5 minutes until maxReceiveCount moves it to the DLQ). SQS delivers at least once:
    a copy queued before the park must end when it finds the row parked by another message."""
    w = _world(30 * HOUR)
    rs = [w.create(f"renewal:acct-1:copied-{i}", due_in=i) for i in range(20)]
    for m in list(w.sqs.queues["webhook"].messages.values()):  # every message delivered twice
        w.sqs.send("webhook", m.body, attributes=dict(m.attributes))
    for _ in range(3 * 60):  # 3 h in minutes: the dispatcher and its watchdog every minute
        w.run_shards()
        _drain(w)
        w.clock.advance(60)
    assert w.telemetry.counts["endpoint_parked"] > 0
    parked = [r for r in rs if w.delivery(r.id).parked_until]
    assert parked
    assert max(_live_messages(w, r.id) for r in parked) <= 1
