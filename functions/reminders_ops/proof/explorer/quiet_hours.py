"""Issue 17 in the explorer: the creates' local due times and send windows (``local_time_fields``),
and ``sent_in_quiet_hours``: no webhook POST or email of a reminder with a send window reaches its
provider while the window is closed in the reminder's zone (issue 17: a deferral waits for the
window; the fault run judged it by "never early", the explorer by the window itself).

Judged by the receiver's clock (virtual time) read independently of the product's gate: the local
wall time of the send in the reminder's zone is inside [start, end) (``start`` after ``end`` spans
midnight). A consumer's clock may run ``SKEW_SECONDS`` off, so a send within that of an opening is
excused; so is a send at a wall time a DST gap or overlap makes ambiguous (the product reads those
as RFC 5545 does: tests/unit/test_window_dst.py holds it against a wall-clock stepper).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo


def _open_at(ts: float, start: int, end: int, tz: ZoneInfo) -> bool:
    wall = datetime.fromtimestamp(ts, tz=UTC).astimezone(tz)
    m = wall.hour * 60 + wall.minute
    return start <= m < end if start < end else (m >= start or m < end)


def outside_window(reminder: Any, at: float, skew_seconds: float) -> str | None:
    """Why a send of ``reminder`` at ``at`` (epoch seconds) broke its send window, or None."""
    window, zone_name = reminder.send_window, reminder.time_zone
    if window is None:
        return None
    tz = ZoneInfo(zone_name or "UTC")
    start, end = window.start_minute, window.end_minute
    if any(_open_at(at + d, start, end, tz) for d in (-skew_seconds, 0, skew_seconds)):
        return None
    offsets = {datetime.fromtimestamp(at + d, tz=UTC).astimezone(tz).utcoffset() for d in (-86400, 0, 86400)}
    if len(offsets) > 1:
        return None  # a DST change within a day of the send: the wall clock reads two ways
    wall = datetime.fromtimestamp(at, tz=UTC).astimezone(tz)
    return f"at {wall:%Y-%m-%d %H:%M} {zone_name}, outside its window {window.start}-{window.end}"


#: Issue 17 (as the fault run drew them): zones with DST in both hemispheres, a half-hour and a
#: 45-minute offset; send windows a few hours wide, so a deferral ends within the run.
ZONES = ("Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "Pacific/Chatham", "UTC")
WINDOWS = (("09:00", "17:00"), ("20:00", "06:00"), ("13:30", "14:15"))


def local_time_fields(c: Any, due: int) -> dict[str, Any]:
    """A profile's create (``zone`` in its args) is due as a wall time in that zone. Otherwise one
    create in four is due as a wall time in a zone (``due_local``: the drawn due's wall time,
    resolved by the DST rule), one in four has a send window (quiet hours) in its zone."""
    from reminders.domain import localtime

    if "zone" in c.args:  # local time (a profile's): due_local in the zone, maybe a send window there
        wall = (c.sim.clock.now() + timedelta(seconds=due)).astimezone(ZoneInfo(c.args["zone"]))
        out: dict[str, Any] = {"due_local": wall.strftime("%Y-%m-%dT%H:%M"), "time_zone": c.args["zone"]}
        if c.args.get("window"):
            out["send_window"] = {"start": c.args["window"][0], "end": c.args["window"][1]}
        return out
    zone = ZONES[(c.v + c.i) % len(ZONES)]
    if c.i % 4 == 3:
        at = c.sim.clock.now() + timedelta(seconds=due)
        wall = localtime.local_wall(at, localtime.zone(zone)).replace(microsecond=0)
        return {"due_local": localtime.format_wall(wall), "time_zone": zone}
    if c.i % 4 == 2:
        start, end = WINDOWS[c.v % len(WINDOWS)]
        return {"send_window": {"start": start, "end": end}, "time_zone": zone}
    return {}
