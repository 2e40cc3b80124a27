"""Time as people mean it: local wall times in an IANA zone, and send windows (quiet hours). Pure.

The rules (RFC 5545 §3.3.5, Temporal's ``disambiguation: "compatible"``, zoneinfo's ``fold=0``):

- a wall time inside a spring-forward **gap** is read with the offset in force before the gap, so
  it lands as far after the gap's start as it was written after it (Berlin 2027-03-28 02:30 →
  03:30 CEST = 01:30Z);
- a wall time inside a fall-back **overlap** fires once, at its first occurrence (Berlin
  2027-10-31 02:30 → 02:30 CEST = 00:30Z).

Zones come only from PyPI's ``tzdata`` package (pinned in pyproject and the layer): the first call
of :func:`zone` empties zoneinfo's search path (``zoneinfo.reset_tzpath([])``), so the machine's
``/usr/share/zoneinfo`` (absent in Lambda, whatever release on a laptop) never answers. That is
done at first use, not at import time; it is process-wide, which is the point: every zone object in
the process reads the same release, whose name :func:`rules_version` gives.
"""

from __future__ import annotations

import re
import threading
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from enum import StrEnum

_ZONE_NAME = re.compile(r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+){0,3}$")
MAX_ZONE_NAME_LENGTH = 64
_ready = False
_ready_lock = threading.Lock()


class UnknownZoneError(ValueError):
    """The name is not an IANA zone of the shipped tzdata release."""


def _use_tzdata_only() -> None:
    global _ready
    with _ready_lock:
        if not _ready:
            zoneinfo.reset_tzpath([])  # no system directories: tzdata (PyPI) is the only source
            zoneinfo.ZoneInfo.clear_cache()
            _ready = True


def zone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA zone ``name`` from the tzdata package, or :class:`UnknownZoneError`."""
    _use_tzdata_only()
    if not (isinstance(name, str) and len(name) <= MAX_ZONE_NAME_LENGTH and _ZONE_NAME.match(name)):
        raise UnknownZoneError("not an IANA time zone name (e.g. Europe/Berlin)")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise UnknownZoneError(f"unknown time zone {name!r}") from None


def rules_version() -> str:
    """The IANA release of the shipped tzdata (e.g. ``2026f``): stored with each local-time reminder
    so that a tzdata bump can find what to re-resolve."""
    import tzdata  # the package, not the stdlib: a missing pin fails loudly here

    return str(tzdata.IANA_VERSION)


class WallTimeKind(StrEnum):
    NORMAL = "normal"
    GAP = "gap"  # skipped by a spring-forward transition
    OVERLAP = "overlap"  # repeated by a fall-back transition


@dataclass(frozen=True, slots=True)
class Resolution:
    instant: datetime  # UTC
    kind: WallTimeKind


def resolve(wall: datetime, tz: tzinfo) -> Resolution:
    """The UTC instant of the naive wall time ``wall`` in ``tz`` (gap: offset before the gap;
    overlap: first occurrence)."""
    if wall.tzinfo is not None:
        raise ValueError("a wall time has no offset")
    first = wall.replace(tzinfo=tz, fold=0)
    second = wall.replace(tzinfo=tz, fold=1)
    off0, off1 = first.utcoffset(), second.utcoffset()
    assert off0 is not None and off1 is not None
    instant = (wall - off0).replace(tzinfo=UTC)  # fold=0: the offset in force before a transition
    if off0 == off1:
        return Resolution(instant, WallTimeKind.NORMAL)
    # A gap when the wall time does not survive a round trip through UTC.
    back = instant.astimezone(tz).replace(tzinfo=None)
    return Resolution(instant, WallTimeKind.OVERLAP if back == wall else WallTimeKind.GAP)


def local_wall(instant: datetime, tz: tzinfo) -> datetime:
    """The naive wall time the clocks of ``tz`` show at ``instant``."""
    return instant.astimezone(tz).replace(tzinfo=None)


_HHMM = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")


def parse_hhmm(text: str) -> int:
    """``"08:00"`` → minutes after midnight (00:00..23:59), or ValueError."""
    m = _HHMM.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError("must be HH:MM (00:00 to 23:59)")
    return int(m.group(1)) * 60 + int(m.group(2))


@dataclass(frozen=True, slots=True)
class SendWindow:
    """Local times of day at which attempts may start: [start, end). ``start > end`` spans midnight
    (22:00-06:00 is open at night). Equal ends are refused (ambiguous: never or always)."""

    start_minute: int
    end_minute: int

    @classmethod
    def parse(cls, start: str, end: str) -> SendWindow:
        s, e = parse_hhmm(start), parse_hhmm(end)
        if s == e:
            raise ValueError("start and end must differ")
        return cls(s, e)

    @classmethod
    def decode(cls, compact: str) -> SendWindow:
        """From the stored form ``"0800-2100"``."""
        a, b = compact.split("-")
        return cls(int(a[:2]) * 60 + int(a[2:]), int(b[:2]) * 60 + int(b[2:]))

    def encode(self) -> str:
        s, e = self.start_minute, self.end_minute
        return f"{s // 60:02d}{s % 60:02d}-{e // 60:02d}{e % 60:02d}"

    @property
    def start(self) -> str:
        return f"{self.start_minute // 60:02d}:{self.start_minute % 60:02d}"

    @property
    def end(self) -> str:
        return f"{self.end_minute // 60:02d}:{self.end_minute % 60:02d}"

    def is_open_at(self, wall: datetime) -> bool:
        """The wall-clock half of :meth:`is_open`: the clock shows a time of day inside the window."""
        m = wall.hour * 60 + wall.minute
        if self.start_minute < self.end_minute:
            return self.start_minute <= m < self.end_minute
        return m >= self.start_minute or m < self.end_minute

    # A window across DST changes (issue 25 items 11 and 12). The window is open at an instant when
    # - the clocks of ``tz`` show a time of day inside it (so in a repeated fall-back hour it is open
    #   in both occurrences), or
    # - the instant lies between the day's start and end read as RFC 5545 reads any wall time (a
    #   boundary inside a spring-forward gap with the offset before the gap; in an overlap the first
    #   occurrence), so a window the gap swallows, wholly or in part, still opens that day; when the
    #   gap swallows it up to its very end (Berlin 02:00-03:00), it stays open for its length.
    # :meth:`next_opening` is derived from :meth:`is_open`: the first instant from which it answers
    # yes, found among the only instants at which the answer can turn from no to yes.

    def is_open(self, instant: datetime, tz: tzinfo) -> bool:
        """May an attempt start at ``instant`` (aware) in the window's zone ``tz``?"""
        wall = local_wall(instant, tz)
        if self.is_open_at(wall):
            return True
        for back in range(-2, 2):
            opens, closes = self._occurrence(wall.date() + timedelta(days=back), tz)
            if opens <= instant < closes:
                return True
        return False

    def next_opening(self, instant: datetime, tz: tzinfo) -> datetime:
        """``instant`` if the window is open then (:meth:`is_open`), else the first later instant at
        which it is."""
        if self.is_open(instant, tz):
            return instant
        day = local_wall(instant, tz).date()
        for days in (range(-1, 3), range(3, 8)):  # it opens within two days (the second: to be sure)
            candidates = {c for d in days for c in self._turns(day + timedelta(days=d), tz) if c > instant}
            for at in sorted(candidates):  # the first at which the answer is yes
                if self.is_open(at, tz):
                    return at
        raise AssertionError("a window opens at least once a day")  # pragma: no cover

    def _boundary(self, day: date, minute: int, fold: int, tz: tzinfo) -> datetime:
        wall = datetime.combine(day, time(minute // 60, minute % 60)).replace(tzinfo=tz, fold=fold)
        return wall.astimezone(UTC)

    def _occurrence(self, day: date, tz: tzinfo) -> tuple[datetime, datetime]:
        """The instants of the start on ``day`` and of the end that follows it, read as
        :func:`resolve` reads wall times (fold=0: a gap with the offset before it, an overlap at its
        first occurrence)."""
        end_day = day if self.start_minute < self.end_minute else day + timedelta(days=1)
        opens = self._boundary(day, self.start_minute, 0, tz)
        closes = self._boundary(end_day, self.end_minute, 0, tz)
        if closes <= opens:  # a gap swallowed the window to its end (Lord Howe 02:00-02:30): its length
            closes = opens + timedelta(minutes=(self.end_minute - self.start_minute) % (24 * 60))
        return opens, closes

    def _turns(self, day: date, tz: tzinfo) -> list[datetime]:
        """Every instant of ``day`` at which :meth:`is_open` may turn from no to yes: the start's
        instants (both readings of an overlap or a gap) and, when the start or the end lies in a gap or
        an overlap, the clock change itself (the clocks jump into the window there)."""
        out = []
        for minute in (self.start_minute, self.end_minute):
            first, second = (self._boundary(day, minute, fold, tz) for fold in (0, 1))
            if minute == self.start_minute:
                out += [first, second]
            if first != second:
                out.append(_transition_between(min(first, second), max(first, second), tz))
        return out


def _transition_between(lo: datetime, hi: datetime, tz: tzinfo) -> datetime:
    """The first instant in (lo, hi] whose UTC offset in ``tz`` differs from lo's (to the second)."""
    before = lo.astimezone(tz).utcoffset()
    a, b = int(lo.timestamp()), int(hi.timestamp())
    while b - a > 1:
        mid = (a + b) // 2
        if datetime.fromtimestamp(mid, UTC).astimezone(tz).utcoffset() == before:
            a = mid
        else:
            b = mid
    return datetime.fromtimestamp(b, UTC)


_WALL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")


def parse_wall(text: str) -> datetime:
    """``"2027-03-28T09:00"`` (seconds optional, no offset) → a naive datetime, or ValueError."""
    if not (isinstance(text, str) and _WALL.match(text)):
        raise ValueError("must be a local wall time YYYY-MM-DDTHH:MM[:SS] without an offset")
    return datetime.fromisoformat(text)


def format_wall(wall: datetime) -> str:
    return wall.isoformat(timespec="seconds" if wall.second else "minutes")


#: Every time field of the API (issue 28 item 3): ISO-8601 text, date and time. Epoch numbers (JSON
#: numbers or numeric strings, seconds or milliseconds) are refused, never guessed at.
_ISO_TEXT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ]")


def iso_text_only(value: object) -> object:
    """``value`` unchanged if it is ISO-8601 text (a datetime object too), else ValueError. The
    offset and the range are checked after this, by the field's own type."""
    if isinstance(value, datetime):
        return value
    if not (isinstance(value, str) and _ISO_TEXT.match(value)):
        raise ValueError(
            "must be ISO-8601 text with an offset (2027-03-28T09:00:00+01:00), not an epoch number"
        )
    return value
