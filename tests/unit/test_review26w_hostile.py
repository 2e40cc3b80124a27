"""Hostile review rev26w of h26w (issue 26): the watchdog files a re-check entry at the expected
instant, not a lag past it. Each test tries to lose a re-check entry, send twice, or wait two lags."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from reminders.domain.ports import OutMessage
from reminders.domain.schedule import account_tag, iso, parse_iso, sk_tag, watch_key
from reminders.domain.states import DeliveryState
from reminders.services import support
from reminders.services.skew import StoreFloorClock

from tests.unit.fakes import OffsetClock, World, crashed_while_sending
from tests.unit.test_previous_tag_form import retag_previous

LAG = 900
#: One lag, its minute and a tick of the one-minute rule (docs/incoming/h26w.md).
BOUND = LAG + 60 + 60


def lose_all(w: World, channel: str = "webhook") -> None:
    w.sqs.queues[channel].messages.clear()


def requeue_times(w: World, since: datetime, minutes: int, *, consume: bool = True) -> list[float]:
    """Tick the rule each minute (the consumer polling after it unless ``consume`` is False); the
    seconds past ``since`` (world clock) of each run re-queuing."""
    out: list[float] = []
    for _ in range(minutes):
        w.clock.advance(60)
        n = sum(rep.requeued for rep in w.run_shards())
        out += [(w.clock.now() - since).total_seconds()] * n
        if consume:
            w.poll()
    return out


def retryable(w: World, key: str = "k") -> tuple[str, datetime]:
    """A delivery throttled with a 4 h retry-after: retryable, its message in flight."""
    r = w.create(key, due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["429_retry_after_4h"])
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    na = w.delivery(r.id).next_attempt_at
    assert na is not None
    return r.id, parse_iso(na)


def set_next_attempt(w: World, rid: str, at: datetime) -> None:
    d = w.delivery(rid)
    assert w.store.save_delivery(rid, replace(d, next_attempt_at=iso(at)), d.rev)


# -- a re-check entry never lands in a minute the watchdog already read --------------------------------
@pytest.mark.parametrize("past_limit", [0.001, 0.5, 59.0, 61.0])
@pytest.mark.parametrize("offsets", [(0.0, 0.0), (0.9, -0.9), (-0.9, 0.9)])
def test_a_recheck_just_past_the_watchdog_limit_is_read_once_later(
    past_limit: float, offsets: tuple[float, float]
) -> None:
    """The watchdog reads the entry when its instant is only just not lost (expected = limit + e),
    with the dispatcher's clock within the skew tolerance (not corrected) and flipping sign between
    runs: the entry it files at ``expected`` must still be read, once, within the bound."""
    w = World(shards=1)
    w.run_shards()
    rid, _ = retryable(w)
    lose_all(w)
    w.dispatcher_clock.offset_seconds = offsets[0]
    w.clock.advance(LAG + 61)  # the watchdog reads the due minute in this run
    limit = w.dispatcher_clock.now() - timedelta(seconds=LAG)
    expected = limit + timedelta(seconds=past_limit)
    set_next_attempt(w, rid, expected)
    (rep,) = w.run_shards()
    assert rep.requeued == 0 and rep.rechecks == 1
    w.dispatcher_clock.offset_seconds = offsets[1]
    times = requeue_times(w, expected, (BOUND + 180) // 60)
    assert len(times) == 1 and LAG - 2 <= times[0] <= BOUND + 2, times


@pytest.mark.parametrize("offset", [-300.0, 300.0])
def test_a_lost_retry_is_requeued_within_one_lag_when_the_watchdog_clock_is_300s_off(offset: float) -> None:
    """The dispatcher's clock 300 s behind/ahead of the store's (corrected by the measured skew)."""
    w = World(shards=1, dispatcher_clock_offset_seconds=offset)
    w.run_shards()
    rid, na = retryable(w)
    w.clock.advance(LAG + 61)
    (rep,) = w.run_shards()
    assert rep.rechecks == 1 and rep.requeued == 0
    lose_all(w)
    w.clock.current = na
    times = requeue_times(w, na, (BOUND + 180) // 60)
    assert len(times) == 1 and LAG <= times[0] <= BOUND, times
    assert w.delivery(rid).state is DeliveryState.DELIVERED and len(w.sender.calls) == 2


def test_a_watchdog_clock_stepping_back_past_the_skew_does_not_lose_a_recheck() -> None:
    """One run with the dispatcher's clock 300 s ahead (corrected), the next with it correct: the
    entry a run files sits past its own limit, so a later run with a smaller limit still reads it."""
    w = World(shards=1, dispatcher_clock_offset_seconds=300.0)
    w.run_shards()
    rid, _ = retryable(w)
    lose_all(w)
    w.clock.advance(LAG + 61)
    limit = w.clock.now() - timedelta(seconds=LAG)
    set_next_attempt(w, rid, limit + timedelta(seconds=1))
    (rep,) = w.run_shards()
    assert rep.rechecks == 1
    w.dispatcher_clock.offset_seconds = 0.0
    times = requeue_times(w, limit, (BOUND + 180) // 60)
    assert len(times) == 1 and times[0] <= BOUND + 1, times


# -- a delivery in flight: never re-queued before its lease ends, and a copy never sends twice ----------
def test_the_watchdog_never_requeues_a_sending_delivery_before_its_lease_and_a_lag() -> None:
    w = World(shards=1)
    r, key = crashed_while_sending(w)
    d = w.delivery(r.id)
    assert d.lease_until is not None
    lease = parse_iso(d.lease_until)
    lose_all(w)
    times = requeue_times(w, lease, (BOUND + 240) // 60)
    assert len(times) == 1 and LAG <= times[0] <= BOUND, times
    assert w.delivery(r.id).state is DeliveryState.DELIVERED and w.sender.accepted[key] == 1


@pytest.mark.parametrize("consumer_offset", [-300.0, 0.0, 300.0])
def test_a_copy_arriving_while_the_lease_is_live_is_refused_by_the_claim(consumer_offset: float) -> None:
    """A copy of an in-flight delivery's message (a watchdog re-queue, a republish) reaches a second
    consumer while the first holds the lease: the claim refuses it; one send in all. The second
    consumer's clock may be 300 s off: its lease check is its own clock's, so a fast one must not
    take a live lease either (the lease is 60 s: a 300 s fast consumer would)."""
    w = World(shards=1)
    r, _ = crashed_while_sending(w)
    w.queues.send("webhook", [OutMessage(r.id, "webhook-0", w.get(r.id).version, 0)])
    host = OffsetClock(w.clock, consumer_offset)
    w._workers["w2"] = w.world.deliverer(
        senders={"webhook": w.sender},
        worker="w2",
        rng=random.Random(7),
        suppressions=w.suppressions,
        clock=StoreFloorClock(host, w.store),  # as runtime.consumer_clock wires it
    )
    (dup,) = w.receive()
    result = w.process(dup, "w2")
    assert not result.ack and [c.outcome for c in w.sender.calls] == ["crash_before"]
    d = w.delivery(r.id)
    assert d.state is DeliveryState.SENDING and d.lease_owner == "w1"


# -- an SQS backlog: the message is late, not lost ---------------------------------------------------------
@pytest.mark.parametrize("backlog_minutes", [20, 60])
def test_a_backlog_longer_than_the_lag_sends_once(backlog_minutes: int) -> None:
    """The consumer is backed up: the message waits ``backlog_minutes`` in SQS. The watchdog re-queues
    it every lag (one copy per lag, not per tick); when the backlog drains, one send."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    times = requeue_times(w, r.due_at, backlog_minutes, consume=False)
    assert len(times) <= backlog_minutes * 60 // LAG + 1, times
    outcomes = []
    for _ in range(len(times) + 2):
        outcomes += [x.outcome for x in w.poll()]
    assert outcomes.count("delivered") == 1 and w.sender.accepted[key] == 1, outcomes
    assert len(w.sender.calls) == 1
    assert w.delivery(r.id).state is DeliveryState.DELIVERED


# -- rollout: entries the previous build filed a lag past their instant ----------------------------------
def test_a_previous_builds_recheck_entry_and_this_builds_are_each_requeued_once() -> None:
    w = World(shards=1)
    w.run_shards()
    old, na_old = retryable(w, "old")
    new, na_new = retryable(w, "new")
    w.clock.advance(LAG + 61)
    w.run_shards()  # this build re-checks both at their next attempt
    r = w.get(old)
    # The previous build's entry for ``old``: a lag past its next attempt.
    assert w.store.move_index(
        old, watch_key(old, r.shard, na_old + timedelta(seconds=LAG), r.account_id), version=r.version
    )
    lose_all(w)
    start = max(na_old, na_new)
    w.clock.current = start
    per: dict[str, list[float]] = {old: [], new: []}
    for _ in range((2 * LAG + 240) // 60):
        w.clock.advance(60)
        w.run_shards()
        for m in list(w.receive()):
            rid = json.loads(m.body)["reminder_id"]
            base = na_old if rid == old else na_new
            per[rid].append((w.clock.now() - base).total_seconds())
            w.settle("webhook", m, w.process(m))
    assert len(per[new]) == 1 and LAG <= per[new][0] <= BOUND, per
    assert len(per[old]) == 1 and per[old][0] <= 2 * LAG + 120, per
    assert w.delivery(old).state is DeliveryState.DELIVERED
    assert w.delivery(new).state is DeliveryState.DELIVERED


# -- the account tag of a late hand-over's re-check entry ------------------------------------------------
def test_a_late_hand_over_keeps_the_previous_builds_tag_when_the_rule_was_paused() -> None:
    """A paused rule catches up on an entry the previous build tagged (8 characters): its re-check
    entry (``_recheck_late``) should carry this build's tag, read from the row as for an untagged one,
    or the account's preview, which reads its tag's range only, misses the delivery until
    ``reminders backfill-tags`` runs."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=3600, account_id="acct-old")
    retag_previous(w, r.id)
    w.clock.advance(3600 + 180)
    (rep,) = w.run_shards()
    assert rep.dispatched == 1
    item = w.store.items[r.id]
    assert item.get("w") and sk_tag(str(item["gsk"])) == account_tag(r.account_id), item["gsk"]
    out = support.preview(w.store, w.clock.now(), 60, w.shards, account_id=r.account_id)
    assert r.id in {a["reminder_id"] for a in out["attempts"]}  # an untagged entry's is listed
