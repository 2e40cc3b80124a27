"""Issue 25 item 7, consumer side: the delivery consumer compares a reminder's due time with its own
clock at claim, hands a not-yet-due record back with a visibility delay from that clock, and its
redrive writes the watch entry from it: 300 s slow, it delivered 300 s late. The consumer's clock
(``runtime.consumer_clock``) is corrected by a LOWER bound of the store's (the ``Date`` header's
whole second, not its middle), so the correction cannot send early; a fast one is held to an UPPER
bound (the end of that second), so it sends at most 1 s early (issue 26).
In-memory world, virtual clock."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from reminders import runtime

from tests.proof.test_matrix_health import _drain
from tests.unit.fakes import T0, OffsetClock, World


def _sends(consumer_offset_seconds: float, due_in: float, *, start: datetime = T0) -> float:
    """How late (seconds, negative = early) the send of a reminder due in ``due_in`` is, with the
    consumer's clock ``consumer_offset_seconds`` off the store's."""
    w = World(shards=1, start=start)
    w._workers["w1"] = w.world.deliverer(  # the consumer as runtime.deliverer builds its clock
        senders={"webhook": w.sender, "email": w.sender},
        worker="w1",
        rng=random.Random(7),
        suppressions=w.suppressions,
        clock=runtime.consumer_clock(OffsetClock(w.clock, consumer_offset_seconds), w.store),
    )
    w.create("renewal:acct-1:warm-up", due_in=0)
    r = w.create("renewal:acct-1:skewed", due_in=due_in)
    for _ in range(int(due_in) + 1200):
        w.run_shards()
        _drain(w)
        if w.delivery(r.id).delivered_at:
            break
        w.clock.advance(1)
    [call] = [c for c in w.sender.calls if c.key == r.deliveries["webhook-0"].key]
    return (call.at - r.due_at).total_seconds()


@pytest.mark.parametrize("due_in", [0, 60, 700])
def test_consumer_clock_300s_slow_does_not_deliver_late(due_in: float) -> None:
    assert 0 <= _sends(-300, due_in) <= 2


def _date_header_reference(w: World) -> datetime:
    """What the DynamoDB adapter answers: the ``Date`` header's whole second plus 0.5 s (its middle),
    up to 0.5 s AHEAD of the store's true time in the first half of a second."""
    now = w.clock.now()
    return now.replace(microsecond=0) + timedelta(seconds=0.5)


@pytest.mark.parametrize("offset", [-300, -5, -1.5, -0.5, 0])
@pytest.mark.parametrize("due_fraction", [0.25, 0.45])
def test_consumer_clock_correction_never_sends_before_due(
    offset: float, due_fraction: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's clock read through a whole-second header (its mid-second estimate is ahead of
    the truth in the first half of a second), the world's time at .2 s, due at .45 or .25 s: a
    consumer corrected by the estimate would claim 0.05-0.25 s early; by its lower bound it never does."""
    w = World(shards=1, start=T0 + timedelta(seconds=0.2))
    monkeypatch.setattr(w.store, "reference_now", lambda: _date_header_reference(w))
    w._workers["w1"] = w.world.deliverer(
        senders={"webhook": w.sender, "email": w.sender},
        worker="w1",
        rng=random.Random(7),
        suppressions=w.suppressions,
        clock=runtime.consumer_clock(OffsetClock(w.clock, offset), w.store),
    )
    due_in = 30 + due_fraction - 0.2
    r = w.create("renewal:acct-1:fraction", due_in=due_in)
    for _ in range(400):
        w.run_shards()
        _drain(w)
        if w.delivery(r.id).delivered_at:
            break
        w.clock.advance(1)
    [call] = [c for c in w.sender.calls if c.key == r.deliveries["webhook-0"].key]
    assert call.at >= r.due_at, (call.at, r.due_at)
    assert r.due_at.astimezone(UTC).microsecond == int(due_fraction * 1_000_000)


class _ColdStore:
    """A store no response has been seen from yet (a cold consumer): its reference appears with the
    first call."""

    def __init__(self, at: datetime) -> None:
        self.at = at
        self.seen = False

    def reference_now(self) -> datetime | None:
        return self.at if self.seen else None

    def get_controls(self) -> dict[str, object]:
        self.seen = True
        return {}


def test_consumer_clock_300s_slow_is_corrected_before_a_cold_consumers_first_claim() -> None:
    from tests.unit.fakes import FixedClock

    store = _ColdStore(T0)
    clock = runtime.consumer_clock(FixedClock(T0 - timedelta(seconds=300)), store)  # type: ignore[arg-type]
    assert clock.now() == T0 - timedelta(seconds=0.5)  # the Date value: a lower bound, not the middle


def test_consumer_clock_300s_slow_does_not_date_a_redrive_in_the_past() -> None:
    """A redrive starts a fresh cycle (its age counts from then) and writes its watch entry at the
    consumer's "now": 300 s slow, both were 300 s in the past (the watchdog judged the redriven
    delivery early, its maximum age ran out early)."""
    from reminders.domain.schedule import parse_iso

    w = World(shards=1)
    w._workers["w1"] = w.world.deliverer(
        senders={"webhook": w.sender, "email": w.sender},
        worker="w1",
        rng=random.Random(7),
        suppressions=w.suppressions,
        clock=runtime.consumer_clock(OffsetClock(w.clock, -300), w.store),
    )
    r = w.create("renewal:acct-1:redriven", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["400"])
    for _ in range(400):
        w.run_shards()
        _drain(w)
        if w.delivery(r.id).dead_letter_reason:
            break
        w.clock.advance(1)
    (dl,) = w.sqs.receive("webhook-dlq")
    w.clock.advance(3600)
    redriven_at = w.clock.now()
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    _drain(w)
    d = w.delivery(r.id)
    assert d.cycle == 1 and d.cycle_started_at
    started = parse_iso(d.cycle_started_at)
    assert redriven_at - timedelta(seconds=2) <= started <= redriven_at
    (redrive,) = [a for a in d.history if a.event == "redrive"]
    assert parse_iso(redrive.at) == started


def _fast_consumer(w: World, offset: float) -> None:
    w._workers["w1"] = w.world.deliverer(  # the consumer as runtime.deliverer builds its clock
        senders={"webhook": w.sender, "email": w.sender},
        worker="w1",
        rng=random.Random(7),
        suppressions=w.suppressions,
        clock=runtime.consumer_clock(OffsetClock(w.clock, offset), w.store),
    )


@pytest.mark.parametrize("offset", [300, 30, 1.5])
@pytest.mark.parametrize("reference", ["exact", "date_header"])
def test_duplicate_delivery_before_due_to_a_fast_consumer_is_never_sent_early(
    offset: float, reference: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy of the message visible before its due time (an SQS duplicate or redelivery, an
    operator's redrive, a stale delay): a consumer whose clock runs ahead of the store's must hand it
    back, not claim it. Bound: never more than the store's reference can tell (its ``Date`` header's
    resolution, 1 s) early."""
    w = World(shards=1, start=T0 + timedelta(seconds=0.2))
    if reference == "date_header":
        monkeypatch.setattr(w.store, "reference_now", lambda: _date_header_reference(w))
    _fast_consumer(w, offset)
    r = w.create("renewal:acct-1:fast", due_in=120.05)
    (queued,) = w.queued()
    body = {k: v for k, v in queued.items() if k not in ("visible_in", "attributes", "id")}
    w.sqs.send("webhook", json.dumps(body), attributes=queued["attributes"] or None)
    for _ in range(200):
        _drain(w)
        if w.delivery(r.id).delivered_at:
            break
        w.clock.advance(1)
    [call] = [c for c in w.sender.calls if c.key == r.deliveries["webhook-0"].key]
    assert call.at >= r.due_at - timedelta(seconds=1), (call.at, r.due_at)
