"""The settle's lateness judge (``proof/explorer/lateness.py``, issue 26): an open delivery's expected
instant is the latest reason its row records; it must move within its bound — the on-time bound for
an instant the settle reached, the watchdog's for one whose message may be lost. Sized in rounds of
the settle, never timed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders.domain.schedule import iso
from reminders.domain.states import DeliveryState
from reminders_ops.proof.explorer.checker import Violation
from reminders_ops.proof.explorer.lateness import (
    ON_TIME_BOUND,
    TICK_SECONDS,
    WATCHDOG_BOUND,
    Lateness,
    expected_at,
)
from reminders_ops.proof.explorer.settle import SETTLE_STEP_SECONDS

START = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@dataclass
class _D:
    state: DeliveryState = DeliveryState.QUEUED
    next_attempt_at: str | None = None
    lease_until: str | None = None
    parked_until: str | None = None
    history: list[Any] = field(default_factory=list)
    key: str = "dlv_1"


@dataclass
class _R:
    due_at: datetime
    id: str = "rem_1"
    account_id: str = "acct-a"
    version: int = 1


def _rounds(judge: Lateness, reminder: _R, d: _D, until: float) -> None:
    """Settle rounds from the judge's start until ``until`` seconds past it, the row never moving."""
    t = 0.0
    while t <= until:
        judge.round([(reminder, "webhook-0", d)], judge.start + t)
        t += TICK_SECONDS


def test_the_lateness_judge_rounds_are_the_settles() -> None:
    assert SETTLE_STEP_SECONDS == TICK_SECONDS
    assert ON_TIME_BOUND < WATCHDOG_BOUND


def test_a_delivery_that_never_moves_past_its_due_time_is_late_when_the_settle_reached_it() -> None:
    reminder, d = _R(START + timedelta(seconds=600)), _D()
    judge = Lateness(START.timestamp())
    _rounds(judge, reminder, d, 600 + ON_TIME_BOUND - TICK_SECONDS)  # within the bound: holds
    with pytest.raises(Violation) as found:
        _rounds(judge, reminder, d, 600 + ON_TIME_BOUND + TICK_SECONDS)
    assert found.value.kind == "late_without_reason"


def test_a_retry_is_judged_from_its_recorded_next_attempt_not_from_its_due_time() -> None:
    nxt = START + timedelta(seconds=3000)
    reminder, d = _R(START), _D(state=DeliveryState.RETRYABLE, next_attempt_at=iso(nxt))
    assert expected_at(reminder, d, START.timestamp()) == nxt.timestamp()
    _rounds(Lateness(START.timestamp()), reminder, d, 3000 + ON_TIME_BOUND - TICK_SECONDS)


def test_a_parked_delivery_is_judged_from_its_park_and_a_claimed_one_from_its_lease() -> None:
    park, lease = START + timedelta(seconds=1800), START + timedelta(seconds=120)
    assert expected_at(_R(START), _D(parked_until=iso(park)), 0.0) == park.timestamp()
    sending = _D(state=DeliveryState.SENDING, lease_until=iso(lease), parked_until=iso(park))
    assert expected_at(_R(START), sending, 0.0) == lease.timestamp()


def test_a_delivery_that_moved_is_judged_again_from_its_new_instant() -> None:
    reminder, d = _R(START), _D()
    judge = Lateness(START.timestamp())
    judge.round([(reminder, "webhook-0", d)], START.timestamp())
    d.history.append("attempt")
    d.state, d.next_attempt_at = DeliveryState.RETRYABLE, iso(START + timedelta(seconds=3600))
    _rounds(judge, reminder, d, 3600)
    assert judge.judged == 1


def test_an_instant_before_the_settle_gets_the_watchdogs_bound_from_the_settles_start() -> None:
    """The explorer's faults (a crash, a lost answer) may have lost its message: the watchdog's bound."""
    reminder, d = _R(START - timedelta(hours=3)), _D()
    judge = Lateness(START.timestamp())
    _rounds(judge, reminder, d, WATCHDOG_BOUND - TICK_SECONDS)
    with pytest.raises(Violation):
        _rounds(judge, reminder, d, WATCHDOG_BOUND + TICK_SECONDS)


def test_a_purged_reminder_gets_the_watchdogs_bound_when_its_due_time_comes_in_the_settle() -> None:
    """Found on seed 7: the operator purged a delivery handed over with its delay; the watchdog
    re-queues it a lag past due. The purge is the recorded reason, not a late product."""
    reminder, d = _R(START + timedelta(seconds=90)), _D()
    _rounds(Lateness(START.timestamp(), {reminder.id}), reminder, d, 90 + WATCHDOG_BOUND - TICK_SECONDS)
    with pytest.raises(Violation):
        _rounds(Lateness(START.timestamp()), reminder, d, 90 + WATCHDOG_BOUND - TICK_SECONDS)
