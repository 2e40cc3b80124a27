"""What the consumer will do next with one delivery, and when (issue 28 item 1): the support desk's
preview asks this instead of reading the due index, so preview and delivery cannot drift. Pure.

It applies the consumer's own rules (services/deliver.py) in the consumer's order:

- a terminal delivery (delivered, dead letter, cancelled) is never attempted again;
- no claim succeeds before ``max(due_at, next_attempt_at)`` (a retry's time, a deferral's end);
- at that moment the one gate (domain/policy.py: deadline > maximum age > endpoint hold > quiet
  hours) decides: proceed, defer (until the hold's end or the window's opening: the attempt moves
  there, with the reason), or dead-letter unsent (``deadline_passed``/``expired``: certain, and not
  an attempt);
- a delivery whose endpoint is held waits for the endpoint: only one probe is sent while it is
  held, so such a delivery *may* be attempted at the hold's end, not certainly;
- a delivery being sent (a live lease) is in flight: its outcome decides what comes next; one whose
  lease has passed (its worker died) *may* be attempted from now: its message's return or the
  watchdog carries it on, at a time the row does not know.

Not foreseen (the reason is recorded when it happens): a suppression found at send time, a rate
limit's give-back by seconds, a lost message (the watchdog's rescue), an operator's action.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from enum import StrEnum

from .models import Delivery, Reminder
from .policy import Gate, GateReason, configuration_held, cycle_started, decide_gate
from .schedule import parse_iso
from .states import DeliveryState


class Next(StrEnum):
    ATTEMPT = "attempt"  # an attempt starts at ``at``
    MAY_ATTEMPT = "may_attempt"  # its endpoint is held: a probe may go at ``at``, or it waits on
    DEAD_LETTER = "dead_letter"  # dead-lettered unsent at ``at`` (the gate: certain, no attempt)
    IN_FLIGHT = "in_flight"  # an attempt is being sent now (its lease ends at ``at``)
    NONE = "none"  # terminal: nothing happens


@dataclass(frozen=True, slots=True)
class Outlook:
    next: Next
    at: datetime | None
    #: Why it is not (or not only) its due time: ``due`` (on time), ``retry`` (a retry's backoff or
    #: Retry-After), ``quiet_hours``, ``endpoint_hold``, ``deadline_passed``, ``expired``, or the
    #: terminal state (``delivered``, ``dead_letter``, ``canceled``).
    reason: str
    #: The time it moved from (its due time, or the retry time a gate moved), when it moved.
    shifted_from: datetime | None = None


def not_before(reminder: Reminder, d: Delivery) -> datetime:
    """The earliest instant a claim of ``d`` succeeds: its due time, or its next attempt's time."""
    at = reminder.due_at
    if d.next_attempt_at:
        at = max(at, parse_iso(d.next_attempt_at))
    return at


def _retry_reason(d: Delivery) -> str:
    """Why ``next_attempt_at`` is past the due time: the last line that set it."""
    for line in reversed(d.history):
        if line.event == "defer":
            return line.detail or "deferred"
        if line.event == "attempt":
            return "retry"
    return "retry"


def outlook(
    reminder: Reminder,
    d: Delivery,
    now: datetime,
    *,
    max_age_seconds: float,
    tz: tzinfo,
    hold_until: datetime | None = None,
) -> Outlook:
    """What happens next to ``d`` as seen at ``now``. ``tz``: the send window's zone (the consumer's
    ``zone(reminder.time_zone)``, UTC without one); ``hold_until``: its endpoint is held until then
    (the endpoint's next probe), None when it is not held."""
    if d.state.terminal:
        return Outlook(Next.NONE, None, d.state.value)
    if d.state is DeliveryState.SENDING and d.lease_until and parse_iso(d.lease_until) > now:
        return Outlook(Next.IN_FLIGHT, parse_iso(d.lease_until), "sending")
    due = max(not_before(reminder, d), now)
    reason = "due" if due <= reminder.due_at or not d.next_attempt_at else _retry_reason(d)
    gate = decide_gate(
        at=due,
        cycle_started=cycle_started(reminder.due_at, d.cycle_started_at),
        max_age_seconds=None if configuration_held(d.last_error) else max_age_seconds,
        deliver_by=reminder.deliver_by,
        hold_until=hold_until,
        window=reminder.send_window,
        tz=tz,
    )
    shifted = reminder.due_at if due > reminder.due_at else None
    if gate.gate is Gate.DEAD_LETTER:
        return Outlook(Next.DEAD_LETTER, due, gate.reason.value, shifted)
    if gate.gate is Gate.DEFER:
        assert gate.until is not None
        kind = Next.MAY_ATTEMPT if gate.reason is GateReason.ENDPOINT_HOLD else Next.ATTEMPT
        return Outlook(kind, gate.until, gate.reason.value, due)
    if hold_until is not None:  # held, but its probe is due: a probe may go now
        return Outlook(Next.MAY_ATTEMPT, due, GateReason.ENDPOINT_HOLD.value, shifted)
    if d.state is DeliveryState.SENDING:
        # Its worker died under a lease now passed: a consumer takes it over when its message comes
        # back (the queue's visibility) or the watchdog re-queues it — from now, not at a known minute
        # (review rev28g).
        return Outlook(Next.MAY_ATTEMPT, due, "lease_expired", shifted)
    return Outlook(Next.ATTEMPT, due, reason, shifted)
