"""``late_without_reason``: lateness stays within its stated bound unless deferred for a recorded
reason (issue 26).

A delivery's *expected* instant is the latest of the reasons its row records for not being attempted
earlier, restated here from the row's fields (the instants the watchdog reads, services/dispatch.py):
the due time; a retry's backoff, a 429's retry-after, a quiet-hours deferral, an ambiguous email's
wait or a redrive's fresh cycle (``next_attempt_at``); a held endpoint's park and probe
(``parked_until``); a claimed delivery's lease (``lease_until``). A correction, a redrive or any
attempt writes the row and so sets a new expected instant. A delivery's lateness is the time from
its expected instant to the next change of its row (an attempt, a deferral, a park, a dead letter, a
delivery) — judged while the platform runs on its own, in the settle (``settle.py``: every
``SETTLE_STEP_SECONDS`` the dispatcher's tick with its watchdog, then every consumer; no momentary
fault armed):

- an instant the settle reaches is kept within ``ON_TIME_BOUND``: the consumer's turn (one settle
  round), a consumer's clock running up to ``SKEW_SECONDS`` slow (it hands a due message back until
  it reads it due) and the dispatcher's whole minutes (``BUCKET_SECONDS``);
- an instant from before the settle may have lost its message to the explorer's faults (a purge, a
  crash, a lost answer, paused consumers), and so may any instant of a reminder whose messages the
  operator purged: the watchdog's bound applies (``WATCHDOG_BOUND``), counted from that instant or
  the settle's start, whichever is later — ``WATCH_LAG_SECONDS`` (the product's "how long past its
  expected time a delivery may wait before rescue"), a minute and a tick.

A delivery still open past its expected instant + its bound is late: ``late_without_reason``. The
watchdog's rescue of a delivery whose message the product itself dropped (the regression class "a
redrive after a correction stuck") comes at least ``WATCH_LAG_SECONDS`` after its expected instant:
late.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reminders.domain.schedule import BUCKET_SECONDS, SQS_MAX_DELAY_SECONDS, parse_iso
from reminders.domain.states import DeliveryState
from reminders.services.dispatch import WATCH_LAG_SECONDS

from .checker import SKEW_SECONDS, Violation

#: One settle round (settle.py's ``SETTLE_STEP_SECONDS``: the dispatcher's tick, then the consumers).
TICK_SECONDS = 300.0
#: Lateness of an expected instant the settle reached: the consumer's turn, a slow consumer's clock,
#: the dispatcher's whole minutes.
ON_TIME_BOUND = TICK_SECONDS + SKEW_SECONDS + BUCKET_SECONDS
#: Lateness of an instant whose message may be lost: the watchdog's. Its entry for a delivery sits at
#: the expected instant (a re-check entry too, ``Dispatcher._rescue``) and its cursor reads an entry
#: ``WATCH_LAG_SECONDS`` after the entry's minute ends: a lost message is re-queued within the lag
#: and the minute, then a tick (1,260 s). Was two lags (2,160 s) while the re-check entry sat a lag
#: past the instant (issue 26, h26l's finding).
WATCHDOG_BOUND = WATCH_LAG_SECONDS + BUCKET_SECONDS + TICK_SECONDS


def _ts(value: str | None) -> float | None:
    return parse_iso(value).timestamp() if value else None


def expected_at(reminder: Any, d: Any, now: float) -> float:
    """When the product may next attempt ``d`` by the reasons its row records."""
    due = reminder.due_at.timestamp()
    nxt, lease, parked = _ts(d.next_attempt_at), _ts(d.lease_until), _ts(d.parked_until)
    if d.state is DeliveryState.SENDING:
        expected = lease if lease is not None else now
    elif d.state is DeliveryState.RETRYABLE:
        expected = nxt if nxt is not None else due
    else:  # scheduled, queued (a quiet-hours deferral's end in next_attempt_at)
        expected = max(due, nxt) if nxt is not None else due
    if parked is not None and d.state is not DeliveryState.SENDING:
        expected = max(expected, parked)
    return expected


def _signature(reminder: Any, d: Any) -> tuple[Any, ...]:
    """What changes when the row moves: any write to the delivery or a new version of its reminder."""
    return (reminder.version, d.state, len(d.history), d.next_attempt_at, d.lease_until, d.parked_until)


@dataclass
class Lateness:
    """Every open delivery's expected instant, followed over the settle's rounds."""

    start: float
    #: reminders whose queue messages the operator purged (``Explorer.purged``): lost by that hand
    purged: set[str] = field(default_factory=set)
    #: (reminder, channel) -> (row signature, expected instant) as first seen since its row last moved
    seen: dict[tuple[str, str], tuple[tuple[Any, ...], float]] = field(default_factory=dict)
    judged: int = 0  # expected instants whose delivery moved (or ended) in the settle
    worst: float = 0.0  # the largest lateness of an instant judged by the on-time bound
    worst_watchdog: float = 0.0  # the largest lateness of one judged by the watchdog's

    def round(self, deliveries: list[tuple[Any, str, Any]], now: float) -> None:
        """After a settle round's consumers: each open delivery past its instant + bound is late."""
        current: set[tuple[str, str]] = set()
        for reminder, cid, d in deliveries:
            key = (reminder.id, cid)
            if d.state.terminal:
                continue
            current.add(key)
            sig = _signature(reminder, d)
            if key not in self.seen or self.seen[key][0] != sig:
                if key in self.seen:
                    self._moved(key, self.seen[key][1], now)
                self.seen[key] = (sig, expected_at(reminder, d, now))
            expected = self.seen[key][1]
            late, bound = self._late(reminder.id, expected, now)
            if late > bound:
                raise Violation(
                    "late_without_reason",
                    f"{reminder.id}/{cid} ({reminder.account_id}, key {d.key}): {d.state.value},"
                    f" expected at {expected - self.start:+.0f} s from the settle's start, still not"
                    f" moved {late:.0f} s later (bound {bound:.0f} s; next attempt {d.next_attempt_at},"
                    f" lease {d.lease_until}, parked until {d.parked_until})",
                )
        for key in set(self.seen) - current:
            self._moved(key, self.seen.pop(key)[1], now)

    def _late(self, rid: str, expected: float, now: float) -> tuple[float, float]:
        """(lateness so far, its bound): the on-time bound for an instant the settle reached on a
        reminder nobody purged, the watchdog's from the settle's start otherwise."""
        if expected >= self.start and rid not in self.purged:
            return now - expected, ON_TIME_BOUND
        return now - max(expected, self.start), WATCHDOG_BOUND

    def _moved(self, key: tuple[str, str], expected: float, now: float) -> None:
        """A delivery's row moved (or it ended) in the round ending ``now``: its instant is judged."""
        self.judged += 1
        late, bound = self._late(key[0], expected, now)
        if bound == ON_TIME_BOUND:
            self.worst = max(self.worst, late)
        else:
            self.worst_watchdog = max(self.worst_watchdog, late)


def left_without_message(sim: Any, rid: str, cid: str, queue: str, purged: set[str]) -> None:
    """In every step: a consumer deleted a message of a delivery that is still open, handed over
    (not ``scheduled``: the dispatcher's entry hands that one over) and expected within the SQS
    window, and no message of that delivery is left in its queue (visible or in flight): only the
    watchdog carries it on, at least ``WATCH_LAG_SECONDS`` past its expected instant — late by
    construction, beyond ``ON_TIME_BOUND``, with no reason recorded. Excused by the caller: a store
    answer lost while the message was processed; here: a reminder the operator purged."""
    import json

    reminder = sim.store.get(rid)
    if reminder is None or rid in purged or cid not in reminder.deliveries:
        return
    d = reminder.deliveries[cid]
    if d.state.terminal or d.state is DeliveryState.SCHEDULED:
        return
    now = sim.now_ts()
    expected = expected_at(reminder, d, now)
    if expected > now + SQS_MAX_DELAY_SECONDS:
        return  # past the SQS window: the dispatcher's entry or the watchdog's hands it over
    for m in sim.sqs.queues[queue].messages.values():
        try:
            body = json.loads(m.body)
        except ValueError:
            continue
        if body.get("reminder_id") == rid and body.get("channel_id") == cid:
            return
    raise Violation(
        "late_without_reason",
        f"{rid}/{cid} ({reminder.account_id}, key {d.key}): {d.state.value}, expected in"
        f" {expected - now:.0f} s, its last message deleted: only the watchdog carries it on, at least"
        f" {WATCH_LAG_SECONDS:.0f} s late (next attempt {d.next_attempt_at}, version {reminder.version})",
    )
