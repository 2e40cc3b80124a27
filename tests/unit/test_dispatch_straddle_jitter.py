"""The straddle threshold (``STRADDLE_BELOW_SECONDS``) against a jittered one-minute rule (issue 28,
review suspicion): with a delay window just over the old threshold of 2 minutes (161 s: 121 s past
its 40 s margin) the dispatcher handed over whole minutes only, the minute ``[S, S+60)`` at the
first tick at or after ``S - 61``; with ticks 59 s and 62 s apart (the rule's jitter), that tick
could come after ``S``, and a reminder due early in the minute went to SQS late. Every reminder must
be handed to SQS once, with its delay, turning visible at most ``PRE_CLAIM_WAIT_MAX_SECONDS`` before
its due time and never after it (the dispatcher's bound: whole seconds rounded down, never late)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from reminders.domain.schedule import (
    BUCKET_SECONDS,
    PRE_CLAIM_WAIT_MAX_SECONDS,
    bucket_of,
    bucket_start,
    parse_iso,
)

from tests.unit.fakes import World

#: SQS delay windows: 121 s past the margin (just over the old threshold, now straddled) and 151 s
#: (just over the threshold now, whole minutes: a tick up to 62 s after the last is still in time).
WINDOWS = (161, 201)
TICKS = (59.0, 62.0)  # the one-minute rule's jitter, alternately
#: Where the first tick falls (seconds after the world's start): every half second over one cycle
#: of the two gaps, so some 62 s gap starts just before ``S - 61``.
PHASES = [i * 0.5 for i in range(int(sum(TICKS) * 2))]


def _world(window: int) -> World:
    w = World(shards=1)
    w.reminders = w.world.reminders(window_seconds=window)
    w.dispatcher = w.world.dispatcher(
        clock=w.dispatcher_clock, page_size=100, worker="dispatch-1", window_seconds=window
    )
    return w


def _visible_minus_due(w: World, phase: float) -> tuple[Counter[str], list[float]]:
    """Reminders due a quarter second into three consecutive minutes; the rule ticks 59 s and 62 s
    apart from ``phase`` on. Per reminder, how many dispatch messages; per message, when it turns
    visible minus its due time."""
    w.run_shards()
    first = bucket_start(bucket_of(w.clock.now())) + timedelta(seconds=6 * BUCKET_SECONDS + 0.25)
    w.clock.advance(phase)
    rs = [w.create(f"k{i}", due_in=(first - w.clock.now()).total_seconds() + 60 * i) for i in range(3)]
    seen: dict[str, tuple[str, float]] = {}
    n = 0
    while w.clock.now() < rs[-1].due_at + timedelta(seconds=150):
        w.clock.advance(TICKS[n % 2])
        n += 1
        w.run_shards()
        now = w.clock.now()
        for m in w.queued():
            if m["id"] not in seen and "due" in m["attributes"]:  # a dispatch message, not a rescue
                at = now + timedelta(seconds=m["visible_in"])
                seen[m["id"]] = (m["reminder_id"], (at - parse_iso(m["attributes"]["due"])).total_seconds())
    assert {rid for rid, _ in seen.values()} == {r.id for r in rs}, "a reminder never handed over"
    return Counter(rid for rid, _ in seen.values()), [x for _, x in seen.values()]


@pytest.mark.parametrize("window", WINDOWS)
def test_a_reminder_goes_to_sqs_late_when_the_window_is_just_over_the_straddle_threshold_and_ticks_vary(
    window: int,
) -> None:
    late: dict[float, float] = {}
    for phase in PHASES:
        w = _world(window)
        per_reminder, offsets = _visible_minus_due(w, phase)
        assert set(per_reminder.values()) == {1}, (phase, per_reminder)  # each handed over once
        assert min(offsets) >= -PRE_CLAIM_WAIT_MAX_SECONDS - 1e-6, (phase, offsets)  # never too early
        if max(offsets) > 1e-6:
            late[phase] = max(offsets)
    assert late == {}
