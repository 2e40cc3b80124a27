"""The gate before every attempt: deliver_by > maximum age > endpoint hold > quiet hours; deferrals
spend no attempt but count toward the maximum age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.localtime import SendWindow
from reminders.domain.policy import Gate, GateReason, decide_gate

T = datetime(2027, 1, 4, 12, 0, tzinfo=UTC)  # a Monday, 12:00 UTC
DAY = 24 * 3600.0
NIGHT = SendWindow.parse("22:00", "06:00")  # open only at night: closed at 12:00
H = timedelta(hours=1)


def test_an_open_window_and_no_deadline_proceeds() -> None:
    assert decide_gate(at=T, cycle_started=T, max_age_seconds=DAY).gate is Gate.PROCEED


def test_quiet_hours_defer_to_the_next_opening() -> None:
    g = decide_gate(at=T, cycle_started=T, max_age_seconds=DAY, window=NIGHT)
    assert (g.gate, g.reason, g.until) == (Gate.DEFER, GateReason.QUIET_HOURS, T + 10 * H)


def test_deadline_passed_wins_over_everything() -> None:
    g = decide_gate(
        at=T, cycle_started=T - 2 * H, max_age_seconds=DAY, deliver_by=T, hold_until=T + H, window=NIGHT
    )
    assert (g.gate, g.reason) == (Gate.DEAD_LETTER, GateReason.DEADLINE_PASSED)


def test_maximum_age_wins_over_a_hold_and_quiet_hours() -> None:
    g = decide_gate(at=T, cycle_started=T - 25 * H, max_age_seconds=DAY, hold_until=T + H, window=NIGHT)
    assert (g.gate, g.reason) == (Gate.DEAD_LETTER, GateReason.EXPIRED)


def test_an_endpoint_hold_wins_over_quiet_hours_and_the_window_is_judged_after_it() -> None:
    g = decide_gate(at=T, cycle_started=T, max_age_seconds=DAY, hold_until=T + 11 * H, window=NIGHT)
    assert (g.gate, g.reason, g.until) == (Gate.DEFER, GateReason.ENDPOINT_HOLD, T + 11 * H)  # 23:00: open
    g = decide_gate(at=T, cycle_started=T, max_age_seconds=2 * DAY, hold_until=T + 19 * H, window=NIGHT)
    assert (g.reason, g.until) == (GateReason.ENDPOINT_HOLD, T + 34 * H)  # 07:00 next day: closed till 22:00


def test_a_deferral_that_would_end_after_the_deadline_dead_letters_now() -> None:
    g = decide_gate(at=T, cycle_started=T, max_age_seconds=DAY, deliver_by=T + 5 * H, window=NIGHT)
    assert (g.gate, g.reason) == (Gate.DEAD_LETTER, GateReason.DEADLINE_PASSED)


def test_deferrals_count_toward_the_maximum_age() -> None:
    g = decide_gate(at=T, cycle_started=T - 20 * H, max_age_seconds=DAY, window=NIGHT)  # would wait 10 h
    assert (g.gate, g.reason) == (Gate.DEAD_LETTER, GateReason.EXPIRED)


def test_no_maximum_age_for_a_channel_held_by_our_configuration() -> None:
    g = decide_gate(at=T, cycle_started=T - 30 * H, max_age_seconds=None, window=NIGHT)
    assert g.gate is Gate.DEFER


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 48 * 60),
    st.one_of(st.none(), st.integers(-60, 48 * 60)),
    st.one_of(st.none(), st.integers(0, 48 * 60)),
    st.integers(0, 23 * 60 + 59),
    st.integers(0, 23 * 60 + 59),
)
def test_the_gate_never_lets_an_attempt_start_after_the_deadline_or_inside_quiet_hours(
    age_min: int, deadline_min: int | None, hold_min: int | None, s: int, e: int
) -> None:
    window = SendWindow(s, e) if s != e else None
    deliver_by = T + timedelta(minutes=deadline_min) if deadline_min is not None else None
    g = decide_gate(
        at=T,
        cycle_started=T - timedelta(minutes=age_min),
        max_age_seconds=DAY,
        deliver_by=deliver_by,
        hold_until=T + timedelta(minutes=hold_min) if hold_min is not None else None,
        window=window,
    )
    start = T if g.gate is Gate.PROCEED else g.until
    if g.gate is Gate.DEAD_LETTER:
        return
    assert start is not None and start >= T
    assert deliver_by is None or start < deliver_by
    assert window is None or window.is_open_at(start.replace(tzinfo=None))
    assert (start - (T - timedelta(minutes=age_min))).total_seconds() <= DAY
