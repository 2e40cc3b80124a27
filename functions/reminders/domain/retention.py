"""Retention and the idempotency horizon: when a terminal reminder expires, and which generation of
delivery keys a reminder created now gets.

Expiry. A reminder created by this code stores ``retain_seconds`` = the deliveries' maximum age +
the retention period (default 90 days), as whole hours (``r``, rounded up). Its TTL attribute
``xp`` is derived (codec) as the latest start of a delivery cycle (or the due time) +
``retain_seconds``: a delivery cannot stay
non-terminal past its maximum age (it dead-letters ``expired``), so this is at least the retention
period after the reminder's terminal state, and at most one maximum age more. It is an upper bound
that does not move while the reminder is delivered: the delivering write never touches it (0 write
units). A reschedule, correction or redrive moves it with its own write.

Generations. Delivery keys are derived from (account, key, channel) and, from generation 1 on, the
generation: ``generation_of(created_at)`` counts whole GENERATION_SECONDS periods since
GENERATION_EPOCH. Two lives of one business key are at least the retention period apart (the second
create can only succeed once the first item expired), and the retention period is never shorter
than one generation, so they never share a generation and never share a ``webhook-id`` or
``Message-ID``. Generation 0 is the key today's items and receivers know: items written before
generations have no stored generation and keep the keys they stored (keys are read, never derived
again). No counter item, no extra write: a create costs what it did.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from .models import Reminder
from .schedule import parse_iso

GENERATION_EPOCH = datetime(2026, 12, 1, tzinfo=UTC)
GENERATION_SECONDS = 30 * 86400
#: The retention period may not be shorter than a generation (see above).
MIN_RETENTION_DAYS = GENERATION_SECONDS // 86400
DEFAULT_RETENTION_DAYS = 90
TTL_ATTRIBUTE = "xp"  # infra/table.py: the table's TTL attribute (short: item size)


def generation_of(at: datetime) -> int:
    return max(0, math.floor((at - GENERATION_EPOCH).total_seconds() / GENERATION_SECONDS))


def retain_seconds(retention_days: int, max_age_seconds: float) -> int:
    if retention_days < MIN_RETENTION_DAYS:
        raise ValueError(f"retention must be at least {MIN_RETENTION_DAYS} days (one key generation)")
    seconds = max_age_seconds + timedelta(days=retention_days).total_seconds()
    return math.ceil(seconds / 3600) * 3600  # stored in hours


def expires_at(r: Reminder) -> int | None:
    """The epoch second after which the table's TTL may delete ``r`` (None: never, an item written
    before retention existed)."""
    if not r.retain_seconds:
        return None
    start = r.due_at
    for d in r.deliveries.values():
        if d.cycle_started_at:
            start = max(start, parse_iso(d.cycle_started_at))
    return math.ceil(start.timestamp()) + r.retain_seconds
