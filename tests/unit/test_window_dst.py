"""Send windows across DST changes (issue 25 items 11 and 12), through the real services on the
in-memory world: a window that touches a spring-forward gap or a repeated fall-back hour opens, the
reminder is sent at that opening, and nothing is dead-lettered for a DST change alone.

The rule (domain/localtime.py): a window boundary inside a gap is read with the offset before the
gap (RFC 5545) and the window is open from that instant; in a repeated hour the window is open in
both occurrences; "when does it open" is derived from "is it open"."""

from __future__ import annotations

import bisect
import importlib.resources
import itertools
import json
import os
import random
import zoneinfo
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from reminders.domain.localtime import SendWindow, zone

from tests.unit.fakes import World


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# (zone, window, due (UTC), expected send (UTC)): each window touches the zone's 2027 DST change.
SCENARIOS: dict[str, tuple[str, str, str, str, str]] = {
    # entirely inside the gap: open from the start read with the offset before the gap
    "berlin_02_00_02_30": ("Europe/Berlin", "02:00", "02:30", "2027-03-27T23:30", "2027-03-28T01:00"),
    "cairo_00_00_00_30": ("Africa/Cairo", "00:00", "00:30", "2027-04-29T21:00", "2027-04-29T22:00"),
    "nuuk_23_00_23_30": ("America/Nuuk", "23:00", "23:30", "2027-03-28T00:00", "2027-03-28T01:00"),
    "lord_howe_02_00_02_30": (
        "Australia/Lord_Howe",
        "02:00",
        "02:30",
        "2027-10-02T15:00",
        "2027-10-02T15:30",
    ),
    "anchorage_02_00_02_45": ("America/Anchorage", "02:00", "02:45", "2027-03-14T10:30", "2027-03-14T11:00"),
    # partly inside the gap: open from the first wall time after the gap that is inside the window
    "warsaw_02_30_03_30": ("Europe/Warsaw", "02:30", "03:30", "2027-03-27T23:30", "2027-03-28T01:00"),
    "north_dakota_02_15_03_15": (
        "America/North_Dakota/Center",
        "02:15",
        "03:15",
        "2027-03-14T07:00",
        "2027-03-14T08:00",
    ),
    "santiago_00_15_01_15": ("America/Santiago", "00:15", "01:15", "2027-09-05T03:00", "2027-09-05T04:00"),
    # the end inside the gap: still open after the gap until the end read with the offset before it
    "warsaw_01_30_02_30_due_03_10": (
        "Europe/Warsaw",
        "01:30",
        "02:30",
        "2027-03-28T01:10",
        "2027-03-28T01:10",
    ),
    # a repeated fall-back hour: open in its second occurrence too (01:45 EDT, then 01:00 EST)
    "new_york_01_00_01_30_due_01_45_edt": (
        "America/New_York",
        "01:00",
        "01:30",
        "2027-11-07T05:45",
        "2027-11-07T06:00",
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_reminder_is_sent_at_the_windows_opening_when_the_window_touches_a_dst_change(
    scenario: str,
) -> None:
    tz, start, end, due, expected = SCENARIOS[scenario]
    w = World(shards=1, start=_utc(due))
    w.reminders.create(replace(w.new("k"), send_window=SendWindow.parse(start, end), time_zone=tz))
    outcomes = []
    for _ in range(4):
        results = w.poll()
        outcomes += [r.outcome for r in results]
        if not results or results[-1].ack:
            break
        w.clock.advance(results[-1].visibility_seconds)
    dlq: list[dict[str, Any]] = [json.loads(m.body) for m in w.sqs.queues["webhook-dlq"].messages.values()]
    assert dlq == [] and outcomes[-1] == "delivered", outcomes
    assert [c.at for c in w.sender.calls] == [_utc(expected)]


# -- the proof: an independent wall-clock stepper over every transition of every zone ----------------------
# The stepper knows nothing of folds, gaps or resolve(): it steps UTC minute by minute, converts each
# minute with zoneinfo, and reads the window off the clock it sees:
#   (a) the clock shows a time of day inside the window; or
#   (b) the instant lies in a day's occurrence, from the moment the clock first reaches the start to
#       the moment it first reaches the end. "Reaches" is read off the steps: the first step whose
#       clock shows the boundary or later; a clock that jumped past the boundary (a gap) reached it as
#       far after the last step before the jump as the boundary was after that step's clock (the
#       offset before the gap, RFC 5545); an occurrence the gap swallowed to its very end lasts the
#       window's length from its start.
# Every transition of every zone is enumerated; transitions whose clocks behave the same over the
# stepped span (the same UTC time of day, the same offsets and the same neighbouring transitions
# relative to it) are one case, since the rule has no other input. Each case is checked with window
# shapes placed on its transition (inside the gap or the repeated hour, across it, ending in it, ...).
DAY = 86400
SPAN_BEFORE, SPAN_AFTER = 28 * 3600, 30 * 3600  # a day's window that began before, a day's wait after
CHECK = 3 * 3600  # is_open and next_opening are compared within CHECK of the transition


def _offset(tz: Any, ts: float) -> int:
    off = datetime.fromtimestamp(ts, tz).utcoffset()
    assert off is not None
    return int(off.total_seconds())


def _transitions(tz: Any, lo: int, hi: int) -> list[tuple[int, int, int]]:
    """(instant, offset before, offset after) of every change of UTC offset in [lo, hi): sampled
    every 4 days, refined daily, bisected to the second (no zone changes twice within 4 days)."""
    out = []
    a, oa = lo, _offset(tz, lo)
    while a < hi:
        b = min(a + 4 * DAY, hi)
        ob = _offset(tz, b)
        if ob != oa:
            x, ox = a, oa
            while x < b:
                y = min(x + DAY, b)
                oy = _offset(tz, y)
                if oy != ox:
                    p, q = x, y
                    while q - p > 1:
                        m = (p + q) // 2
                        p, q = (m, q) if _offset(tz, m) == ox else (p, m)
                    out.append((q, ox, _offset(tz, q)))
                x, ox = y, oy
        a, oa = b, ob
    return out


def _cases(first_year: int, last_year: int) -> dict[tuple[Any, ...], tuple[str, int]]:
    """One (zone, transition instant) per class of transitions whose clocks behave alike."""
    zone("UTC")  # tzdata only
    lo = int(datetime(first_year, 1, 1, tzinfo=UTC).timestamp())
    hi = int(datetime(last_year + 1, 1, 1, tzinfo=UTC).timestamp())
    seen: dict[bytes, str] = {}
    cases: dict[tuple[Any, ...], tuple[str, int]] = {}
    for name in sorted(zoneinfo.available_timezones() - {"Factory", "localtime"}):
        data = importlib.resources.files("tzdata.zoneinfo").joinpath(*name.split("/")).read_bytes()
        if data in seen:  # a link: the same rules under another name
            continue
        seen[data] = name
        tz = zone(name)
        found = _transitions(tz, lo - SPAN_BEFORE - DAY, hi + SPAN_AFTER + DAY)
        for t, before, after in found:
            if not lo <= t < hi:
                continue
            near = tuple(
                (u - t, a) for u, _, a in found if t - SPAN_BEFORE - DAY <= u <= t + SPAN_AFTER + DAY
            )
            cases.setdefault((t % DAY, before, after, near), (name, t))
    return cases


def _shapes(t: int, before: int, after: int) -> list[tuple[int, int]]:
    """Windows (start, end minutes) placed on a transition: g is the clock just before it, L the jump."""
    g = ((t + before) // 60) % 1440
    jump = (after - before) // 60
    n = abs(jump)
    h = max(1, n // 2)
    if jump > 0:  # a gap [g, g + n)
        raw = [
            (g, g + h),  # inside the gap (Berlin 02:00-02:30)
            (g, g + n),  # exactly the gap (Lord Howe 02:00-02:30)
            (g + h, g + n + 30),  # from inside the gap to after it (North Dakota 02:15-03:15)
            (g - 30, g + h),  # from before the gap into it
            (g + h, g + n + 15 * 60),  # a long one from inside the gap
            (g + h, g - 60),  # across midnight, closed only just before the gap
            (g - 60, g + n + 60),  # across the whole change
        ]
    else:  # a repeated range [g - n, g)
        raw = [
            (g - n, g - h),  # inside the repeated range (New York 01:00-01:30)
            (g - h, g + 30),  # from inside it to after it
            (g - n - 30, g - h),  # from before it into it
            (g, g + 30),  # from its end
            (g - n - 60, g + 60),  # across the whole change
            (g - h, g - n - 30),  # across midnight, from inside the range
        ]
    out = []
    for s, e in raw:
        s, e = s % 1440, e % 1440
        if s != e and (s, e) not in out:
            out.append((s, e))
    return out


class _Stepper:
    """The clock of one zone around one transition, stepped minute by minute."""

    def __init__(self, tz: Any, t: int) -> None:
        self.tz = tz
        self.t0 = (t - SPAN_BEFORE) // 60 * 60
        minutes = range(self.t0, t + SPAN_AFTER, 60)
        self.ts: list[int] = []
        self.walls: list[int] = []  # the clock, as seconds of a naive epoch
        for ts in minutes:
            wall = ts + _offset(tz, ts)
            if self.walls and wall - self.walls[-1] != ts - self.ts[-1]:
                # The clock jumped within this minute: step its seconds (an offset with seconds can
                # show a boundary for a few seconds before it jumps back).
                for sub in range(self.ts[-1] + 1, ts):
                    self.ts.append(sub)
                    self.walls.append(sub + _offset(tz, sub))
            self.ts.append(ts)
            self.walls.append(wall)
        self.highest = list(itertools.accumulate(self.walls, max))  # the latest the clock has shown

    def _reaches(self, wall: int) -> int | None:
        """The instant the clock first reaches ``wall`` (None: before or after the span)."""
        i = bisect.bisect_left(self.highest, wall)
        if i == 0 or i == len(self.walls):
            return None
        if self.walls[i] == wall:
            return self.ts[i]
        return self.ts[i - 1] + (wall - self.walls[i - 1])  # continued on the clock before

    def oracle(self, s: int, e: int) -> tuple[Callable[[float], bool], list[bool]]:
        """The clock's answer at any instant, and at every step."""
        occurrences = []
        first_day, last_day = self.walls[0] // DAY - 1, self.walls[-1] // DAY + 1
        for day in range(first_day, last_day + 1):
            opens = self._reaches(day * DAY + s * 60)
            if opens is None:
                continue
            closes = self._reaches((day + (0 if s < e else 1)) * DAY + e * 60)
            if closes is None:
                closes = self.ts[-1] + DAY  # beyond the span
            if closes <= opens:
                closes = opens + ((e - s) % 1440) * 60
            occurrences.append((opens, closes))

        def shows(wall: float) -> bool:
            minute = int(wall % DAY) // 60
            return (s <= minute < e) if s < e else (minute >= s or minute < e)

        def is_open(ts: float) -> bool:
            return shows(ts + _offset(self.tz, ts)) or any(o <= ts < c for o, c in occurrences)

        steps = [shows(wall) for wall in self.walls]
        for o, c in occurrences:
            for i in range(bisect.bisect_left(self.ts, o), bisect.bisect_left(self.ts, c)):
                steps[i] = True
        return is_open, steps


def _check_case(name: str, t: int, every: int, shapes: int | None = None) -> list[str]:
    """Disagreements of is_open and next_opening with the stepper around the transition at ``t``:
    at every ``every``-th minute within CHECK of it and wherever the clock's answer changes; for
    ``shapes`` of the window shapes, drawn deterministically from the case (None: all)."""
    tz = zone(name)
    before, after = _offset(tz, t - 1), _offset(tz, t)
    stepper = _Stepper(tz, t)
    wrong: list[str] = []
    first = bisect.bisect_left(stepper.ts, t - CHECK)
    last = bisect.bisect_right(stepper.ts, t + CHECK)
    placed = _shapes(t, before, after)
    if shapes is not None and shapes < len(placed):
        placed = random.Random(f"{name}:{t}").sample(placed, shapes)
    for s, e in placed:
        window = SendWindow(s, e)
        oracle, steps = stepper.oracle(s, e)
        following = [None] * len(steps)  # the first open step from each step on
        upcoming = None
        for i in range(len(steps) - 1, -1, -1):
            upcoming = stepper.ts[i] if steps[i] else upcoming
            following[i] = upcoming
        for i in range(first, last):
            if (i - first) % every and steps[i] == steps[i - 1] and steps[i - 1] == steps[i - 2]:
                continue  # between samples, and not where the clock's answer changes
            x = stepper.ts[i]
            at = datetime.fromtimestamp(x, UTC)
            label = f"{name} {window.encode()} at {at:%Y-%m-%dT%H:%MZ}"
            if window.is_open(at, tz) != steps[i]:
                wrong.append(f"{label}: is_open {window.is_open(at, tz)}, the clock says {steps[i]}")
                continue
            got = window.next_opening(at, tz)
            expect = following[i]
            g = got.timestamp()
            if not oracle(g):
                wrong.append(f"{label}: opens {got:%Y-%m-%dT%H:%M:%SZ}, where the clock says closed")
            elif expect is None:
                if g < stepper.ts[-1]:
                    wrong.append(f"{label}: opens {got:%Y-%m-%dT%H:%M:%SZ}, the clock: not within the span")
            elif g > expect or (g <= expect - 60 and any(oracle(g - k) for k in range(1, 121) if g - k >= x)):
                # Later than the first open step, or earlier than the step before it and not where a
                # sub-minute opening starts (an offset with seconds: the steps cannot see it).
                clock = datetime.fromtimestamp(expect, UTC)
                wrong.append(f"{label}: opens {got:%Y-%m-%dT%H:%M:%SZ}, the clock {clock:%Y-%m-%dT%H:%MZ}")
    return wrong


def test_every_window_opening_across_every_transition_2000_2041_matches_the_wall_clock_stepper() -> None:
    """Every transition of every zone, 2000-2041: is_open and next_opening agree with the stepper
    (three window shapes per case, every 10th minute within 3 h of the transition and every minute
    at which the clock's answer changes): no opening is missed, none is early, none is a day late."""
    cases = _cases(2000, 2041)
    assert len(cases) > 100  # the enumeration found the world's clock changes (158 with tzdata 2025)
    wrong = [w for name, t in cases.values() for w in _check_case(name, t, every=10, shapes=3)]
    assert wrong == [], f"{len(wrong)} disagreements, first: {wrong[:5]}"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("REMINDERS_SLOW") != "1", reason="set REMINDERS_SLOW=1 (make verify)")
def test_every_window_opening_across_every_transition_of_every_year_matches_the_wall_clock_stepper() -> None:
    """Every year the shipped tzdata describes (1850-2100: local mean times, war times, double summer
    times, Samoa's lost day), every window shape, every 5th minute within 3 h of each transition and
    every minute at which the clock's answer changes."""
    cases = _cases(1850, 2100)
    wrong = [w for name, t in cases.values() for w in _check_case(name, t, every=5)]
    assert wrong == [], f"{len(wrong)} disagreements, first: {wrong[:5]}"
