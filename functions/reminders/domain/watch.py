"""Where a delivery in flight is watched (issue 28, the explorer's seed 16): its reminder's due-index
entry must not sit later than the instant the delivery is next expected by. Pure.

The watchdog files a re-check entry at the instant a delivery in flight is expected by (a retry's or
a deferral's next attempt, a park's or a lease's end) and moves it forward each time it reads it too
early. Nothing moved it back: a park's entry (a held endpoint's next probe, up to an hour out) stayed
where it was when the endpoint recovered and the delivery's next attempt came sooner — a retry 30 s
later, a quiet-hours deferral to a window opening in minutes. A lost message of that delivery was
then rescued only after the park's instant (plus the lag), and an account's preview, which finds
rows through the due index from the lag before now to the lag past its horizon, did not list the
attempt. :func:`pulled_back` says where the entry goes instead, after a write of one delivery: one
more conditional write (the entry as it was read), only when the entry sits more than a minute past
the written delivery's next instant — after a park or a long deferral, never on a first attempt.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .models import Delivery
from .ports import IndexKey
from .schedule import BUCKET_SECONDS, parse_iso, sk_due, watch_key
from .states import DeliveryState

#: An entry later than the delivery's next instant by at most this stays where it is (the watchdog
#: reads a whole minute at a time: a move inside it would change nothing it does).
SLACK_SECONDS = BUCKET_SECONDS


def next_instant(d: Delivery) -> datetime | None:
    """The instant a delivery just written is next expected by, as the watchdog computes it (its next
    attempt, a park's end), never before the write (its last history line: the writer's clock). None
    for a terminal or sending delivery (a lease is the claim's), one with no next attempt or park,
    or one with no history."""
    if d.state.terminal or d.state is DeliveryState.SENDING or not d.history:
        return None
    times = [parse_iso(t) for t in (d.next_attempt_at, d.parked_until) if t]
    if not times:
        return None
    return max([*times, parse_iso(d.history[-1].at)])


def pulled_back(
    sort_key: str | None, watch: bool, written: Delivery, reminder_id: str, shard: int, account_id: str
) -> IndexKey | None:
    """The watch entry to move the reminder's entry to after ``written`` was stored, or None (leave
    it). Only a watch entry moves (a dispatch entry is the dispatcher's, at the due time); only back
    (the watchdog moves it forward when it reads it early); only by more than SLACK_SECONDS; and
    never before the write, so never into a minute the watchdog has already read (it reads a lag
    behind now)."""
    if not watch or not sort_key:
        return None
    at = next_instant(written)
    if at is None:
        return None
    try:
        entry = parse_iso(sk_due(sort_key))
    except ValueError:
        return None  # an entry whose key holds no time: the dispatcher counts it as a bad row
    if entry - at <= timedelta(seconds=SLACK_SECONDS):
        return None
    return watch_key(reminder_id, shard, at, account_id)
