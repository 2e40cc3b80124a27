"""The checker's send-window oracle (``window_opening_skipped``), apart from the product's
``SendWindow``: a wall-clock stepper. A quiet-hours deferral (its ``defer`` line: from ``at``, for
``delay_seconds``) must not pass over an instant at which the window is open, which is (README, Time;
RFC 5545's reading of wall times):

- an instant at which the clocks of the reminder's zone show a time of day inside the window
  (``start <= time < end``, or across midnight), or
- an instant between a day's start and the end that follows it, each wall time read as RFC 5545
  reads one (inside a spring-forward gap with the offset before the gap, in an overlap the first
  occurrence; ``fold=0``), an end a gap moves to or before the start keeping the window's length:
  so a window a gap swallows whole (Berlin 02:00-03:00, Lord Howe 02:10-02:20 on the change's day)
  still opens that day, and a reminder never waits a day for it.

Stepped minute by minute over the deferral (the windows' boundaries are whole minutes, as are the
changes of the zones the explorer draws), never through the product's ``next_opening``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from reminders.domain.schedule import parse_iso

STEP = timedelta(minutes=1)
SLACK = timedelta(seconds=1)  # a line's instant is stored to the microsecond; the gate's may round


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _inside(minute: int, start: int, end: int) -> bool:
    return start <= minute < end if start < end else minute >= start or minute < end


@cache
def _occurrence(day: date, start: int, end: int, zone: str) -> tuple[datetime, datetime]:
    """The window of ``day`` as instants, its start and end read with ``fold=0`` (RFC 5545)."""
    tz = ZoneInfo(zone)

    def read(d: date, minute: int) -> datetime:
        return datetime.combine(d, time(minute // 60, minute % 60)).replace(tzinfo=tz, fold=0).astimezone(UTC)

    opens = read(day, start)
    closes = read(day if start < end else day + timedelta(days=1), end)
    if closes <= opens:
        closes = opens + timedelta(minutes=(end - start) % (24 * 60))
    return opens, closes


def is_open(t: datetime, start: int, end: int, zone: str) -> bool:
    wall = t.astimezone(ZoneInfo(zone))
    if _inside(wall.hour * 60 + wall.minute, start, end):
        return True
    for back in (-1, 0, 1):
        opens, closes = _occurrence(wall.date() + timedelta(days=back), start, end, zone)
        if opens <= t < closes:
            return True
    return False


def skipped_opening(at: datetime, until: datetime, start: str, end: str, zone: str) -> datetime | None:
    """The first instant in ``(at, until)`` (a second's slack each side) at which the window is open
    (see above), or None."""
    s, e = _minutes(start), _minutes(end)
    t = at + SLACK
    while t < until - SLACK:
        if is_open(t, s, e, zone):
            return t
        t = (t + STEP).replace(second=0, microsecond=0)
    return None


def check_deferrals(reminder: object, d: object, seen: set[tuple[str, str, str]]) -> str | None:
    """A message for the first quiet-hours deferral of delivery ``d`` that skips an opening, or None
    (each line judged once: ``seen``)."""
    window = getattr(reminder, "send_window", None)
    zone = getattr(reminder, "time_zone", None) or "UTC"
    if window is None:
        return None
    for line in getattr(d, "history", ()):
        if line.event != "defer" or line.detail != "quiet_hours" or line.delay_seconds is None:
            continue
        mark = (getattr(reminder, "id", ""), getattr(d, "key", ""), line.at)
        if mark in seen:
            continue
        seen.add(mark)
        at = parse_iso(line.at)
        until = at + timedelta(seconds=line.delay_seconds)
        opening = skipped_opening(at, until, window.start, window.end, zone)
        if opening is not None:
            return (
                f"deferred at {line.at} for quiet hours until {until.isoformat()} in {zone},"
                f" window {window.start}-{window.end}: it was open at {opening.isoformat()}"
            )
    return None
