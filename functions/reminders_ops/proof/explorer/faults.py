"""Faults at the stores (issue 26): which writes can lose their answer, and the reminder store's
eventually consistent reads.

A lost answer (``adapters/lost_answers.py``): the write lands, botocore's retry meets the write
already there, and the caller gets what the DynamoDB adapter answers then — refused where the
retry fails the write's own condition, as written where it does not (an unconditional put, a cursor
saved without release). ``LOSABLE`` names every write of every store the explorer may arm, as
``store:operation``.

Stale reads (``adapters/stale_reads.py``): the reads the DynamoDB adapters make without
ConsistentRead — the reminder store's controls (runbook switches, shard high water), BatchGetItem,
the due and attention GSIs; the endpoint and health stores' send-path reads —
answer an item as it was up to ``lag`` writes ago, and never from before a write older than
``STALE_SECONDS`` (the bound: the dispatcher publishes ``INDEX_LAG_MARGIN_SECONDS`` early, so a
GSI lag under that margin must cost nothing).
"""

from __future__ import annotations

from typing import Any

from reminders.adapters.stale_reads import StaleImages
from reminders.domain.schedule import INDEX_LAG_MARGIN_SECONDS

#: How long a write may stay unseen by an eventually consistent read (virtual seconds): half the
#: margin the dispatcher keeps for the due index's lag.
STALE_SECONDS = INDEX_LAG_MARGIN_SECONDS / 2

LOSABLE = (
    "reminders:put_new",
    "reminders:save_delivery",
    "reminders:save_reminder",
    "reminders:claim",  # a consumer's claim of a due delivery
    "reminders:claim_expired",  # the take-over of an expired lease
    "reminders:move_index",  # the dispatcher's index moves (late entries to the watch, backfill)
    "reminders:save_cursor",  # the dispatcher's checkpoint (refused only when it releases the lease)
    "endpoints:put_new",
    "endpoints:save",
    "receipts:put_new",  # the receipt log (the stream's record is written all the same)
    "suppressions:add",
    "templates:put_new",
    "event_endpoints:put",  # the registration (unconditional: the retry answers as written)
    "event_endpoints:delete",
)


def store_of(sim: Any, name: str) -> Any:
    """The in-memory store a ``LOSABLE`` entry names."""
    return {
        "reminders": sim.store,
        "endpoints": sim.endpoint_store,
        "receipts": sim.receipt_log,
        "suppressions": sim.suppressions,
        "templates": sim.template_store,
        "event_endpoints": sim.event_endpoints,
    }[name]


def lose_answer(sim: Any, op: str) -> None:
    store, operation = op.split(":", 1)
    store_of(sim, store).lose_next_answer(operation)


def make_stale(sim: Any, lag: int) -> None:
    """Eventually consistent reads lag by up to ``lag`` writes (0: consistent) within ``STALE_SECONDS``."""
    for store in (sim.endpoint_store, sim.world.health_store):
        store.stale = StaleImages(lag)
    sim.store.stale = StaleImages(lag, seconds=STALE_SECONDS, now=sim.now_ts)


def settle_reads(sim: Any) -> None:
    """Every replica caught up (the settle's platform runs without faults)."""
    make_stale(sim, 0)
