"""Whether an attempt may start now: ONE rule for deadlines, maximum age, endpoint holds and quiet
hours. Pure; the deliverer asks it before every attempt (first or retry) and about every retry it
schedules.

Precedence: ``deliver_by`` > maximum age > endpoint hold > quiet hours.

- past ``deliver_by`` no attempt starts: dead letter ``deadline_passed``;
- past the maximum age (counted from the cycle's start, deferrals included): dead letter ``expired``;
- an endpoint hold (issue 16; callers pass none yet) defers until the hold's end;
- a closed send window defers until its next opening (``deferred_quiet_hours``).

A deferral spends no attempt, but the clock runs: a deferral that would end at or after the deadline,
or beyond the maximum age, dead-letters now with that reason (no attempt could start in time).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from enum import StrEnum

from .localtime import SendWindow


class Gate(StrEnum):
    PROCEED = "proceed"
    DEFER = "defer"
    DEAD_LETTER = "dead_letter"


class GateReason(StrEnum):
    NONE = ""
    DEADLINE_PASSED = "deadline_passed"
    EXPIRED = "expired"
    ENDPOINT_HOLD = "endpoint_hold"
    QUIET_HOURS = "quiet_hours"


@dataclass(frozen=True, slots=True)
class GateDecision:
    gate: Gate
    reason: GateReason = GateReason.NONE
    until: datetime | None = None  # DEFER: when to look again

    @property
    def proceeds(self) -> bool:
        return self.gate is Gate.PROCEED


PROCEED = GateDecision(Gate.PROCEED)


def decide_gate(
    *,
    at: datetime,
    cycle_started: datetime,
    max_age_seconds: float | None,
    deliver_by: datetime | None = None,
    hold_until: datetime | None = None,
    window: SendWindow | None = None,
    tz: tzinfo | None = None,
) -> GateDecision:
    """May an attempt start at ``at``? ``max_age_seconds`` None: no maximum age applies (a channel
    held by our own configuration never expires its reminders). ``tz``: the window's zone (UTC if
    None)."""
    if deliver_by is not None and at >= deliver_by:
        return GateDecision(Gate.DEAD_LETTER, GateReason.DEADLINE_PASSED)
    if max_age_seconds is not None and (at - cycle_started).total_seconds() > max_age_seconds:
        return GateDecision(Gate.DEAD_LETTER, GateReason.EXPIRED)
    until, reason = at, GateReason.NONE
    if hold_until is not None and hold_until > until:
        until, reason = hold_until, GateReason.ENDPOINT_HOLD
    if window is not None:
        opening = window.next_opening(until, tz or UTC)
        if opening > until:
            until = opening
            reason = reason or GateReason.QUIET_HOURS
    if until <= at:
        return PROCEED
    # Deferred: the clock keeps running while it waits.
    if deliver_by is not None and until >= deliver_by:
        return GateDecision(Gate.DEAD_LETTER, GateReason.DEADLINE_PASSED)
    if max_age_seconds is not None and (until - cycle_started).total_seconds() > max_age_seconds:
        return GateDecision(Gate.DEAD_LETTER, GateReason.EXPIRED)
    return GateDecision(Gate.DEFER, reason, until)


# -- the same rule for one reminder's delivery: shared by the consumer and the support desk's preview --
def cycle_started(due_at: datetime, cycle_started_at: str | None) -> datetime:
    """When the delivery's attempt cycle started (a redrive starts a new one): the maximum age counts
    from here."""
    return datetime.fromisoformat(cycle_started_at.replace("Z", "+00:00")) if cycle_started_at else due_at


def configuration_held(last_error: dict[str, object] | None) -> bool:
    """Our own configuration holds the channel (its last attempt failed ``configuration``): no
    maximum age applies to it."""
    return bool(last_error) and (last_error or {}).get("class") == "configuration"
