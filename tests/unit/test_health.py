"""Endpoint health, the pure rules (domain/health.py): when an endpoint is held, how probes back
off, when it is disabled; and the one precedence rule (domain/policy.py) with an endpoint hold."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.health import (
    EndpointHealth,
    EndpointState,
    HealthPolicy,
    HealthWhy,
    counts_as,
    observed,
    should_disable,
    should_hold,
    transitioned,
)
from reminders.domain.policy import Gate, GateReason, decide_gate
from reminders.domain.retry import OutcomeClass

P = HealthPolicy()
T = 1_800_000_000.0


def _feed(outcomes: list[tuple[float, bool]]) -> EndpointHealth:
    h = EndpointHealth("ep_x")
    for at, ok in outcomes:
        h = observed(h, at, 1 if ok else 0, 0 if ok else 1, P)
    return h


def test_an_endpoint_failing_half_of_twenty_recent_sends_is_held_failure_ratio() -> None:
    h = _feed([(T + i * 0.2, i % 2 == 0) for i in range(20)])
    assert should_hold(h, T + 4, P) is HealthWhy.FAILURE_RATIO


def test_nineteen_sends_are_not_enough_for_the_ratio_rule() -> None:
    h = _feed([(T + i * 0.1, i % 2 == 0) for i in range(19)])
    assert should_hold(h, T + 2, P) is None


def test_isolated_failures_never_hold_an_endpoint() -> None:
    h = _feed([(T + i * 0.05, i % 10 != 0) for i in range(1000)])  # 10 % transient failures
    assert should_hold(h, T + 50, P) is None


def test_every_send_failing_for_sixty_seconds_holds_all_failed_60s() -> None:
    h = _feed([(T + s, False) for s in (0, 1.5, 4, 8, 16, 32)])
    assert should_hold(h, T + 32, P) is None  # failing, but for 32 s only
    h = observed(h, T + 64, 0, 1, P)
    assert should_hold(h, T + 64, P) is HealthWhy.ALL_FAILED_60S


def test_one_answer_resets_the_all_failed_streak() -> None:
    h = _feed(
        [(T + s, False) for s in (0, 10, 20, 30)] + [(T + 40, True)] + [(T + 50, False), (T + 70, False)]
    )
    assert should_hold(h, T + 70, P) is None


def test_old_outcomes_leave_the_window() -> None:
    h = _feed([(T + i * 0.1, False) for i in range(5)] + [(T + 0.6 + i * 0.1, True) for i in range(30)])
    later = observed(h, T + 300, 0, 1, P)
    assert later.window(T + 300, P) == (0, 1)
    assert T not in later.buckets  # pruned by the write


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 600), st.booleans()), max_size=80))
def test_the_window_never_counts_more_than_was_observed_in_it(events: list[tuple[float, bool]]) -> None:
    events.sort()
    h = _feed([(T + at, ok) for at, ok in events])
    now = T + (events[-1][0] if events else 0)
    ok, failed = h.window(now, P)
    in_window = [e for e in events if e[0] > now - T - P.window_seconds - P.bucket_seconds]
    assert ok <= sum(1 for e in in_window if e[1]) and failed <= sum(1 for e in in_window if not e[1])
    ratio = h.success_ratio(now, P)
    assert ratio is None or 0.0 <= ratio <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 200), st.floats(0, 10 * 24 * 3600), st.floats(0, 3600))
def test_probe_intervals_grow_are_capped_and_stay_within_an_eighth_of_the_hold(
    n: int, held: float, more: float
) -> None:
    assert P.probe_interval(n, held) <= P.probe_cap_seconds
    assert P.probe_interval(n + 1, held + more) >= P.probe_interval(n, held)  # never shrinks
    assert P.probe_interval(n, held) <= max(P.probe_floor_seconds, held / 8)
    assert P.probe_interval(1, held) == min(P.probe_base_seconds, P.probe_floor_seconds)


def test_a_long_hold_is_probed_sparsely_a_short_one_resumes_soon_after_it_ends() -> None:
    at, probes, n = 0.0, [], 0
    while at < 24 * 3600:
        n += 1
        at += P.probe_interval(n, at)
        probes.append(at)
    assert len(probes) < 500  # a day down: a few hundred probes, one request each (451 measured)
    first_two_minutes = [t for t in probes if t <= 120]
    gaps = [b - a for a, b in itertools.pairwise([0.0, *first_two_minutes])]
    assert max(gaps) <= max(P.probe_floor_seconds, 120 * P.probe_hold_fraction)  # 3.75 s


def test_held_starts_the_probe_schedule_and_bumps_the_transition_counter() -> None:
    h = transitioned(_feed([(T, False)]), EndpointState.HELD, HealthWhy.ALL_FAILED_60S, T + 60, P)
    assert (h.state, h.tv, h.why, h.since) == (EndpointState.HELD, 1, "all_failed_60s", T + 60)
    assert h.next_probe_at == T + 60 + P.probe_base_seconds and not h.probe_due(T + 61)
    assert h.probe_due(T + 65)
    resumed = transitioned(h, EndpointState.ACTIVE, HealthWhy.PROBE_SUCCEEDED, T + 70, P)
    assert resumed.tv == 2 and resumed.buckets == {} and resumed.failing_since is None


def test_held_past_the_disable_limit_is_disabled_and_the_limit_defaults_to_the_maximum_age() -> None:
    assert HealthPolicy.from_env({}, max_age_seconds=7200).disable_after_seconds == 7200
    h = transitioned(EndpointHealth("ep_x"), EndpointState.HELD, HealthWhy.FAILURE_RATIO, T, P)
    h = replace(h, next_probe_at=T + P.disable_after_seconds - 10)  # probed (and failing) all along
    assert not should_disable(h, T + P.disable_after_seconds, P)
    assert should_disable(h, T + P.disable_after_seconds + 1, P)


def test_only_transient_classes_count_as_failures() -> None:
    assert {o for o in OutcomeClass if counts_as(o) == "fail"} == {
        OutcomeClass.TRANSIENT,
        OutcomeClass.TIMEOUT,
        OutcomeClass.CONNECTION,
    }
    assert counts_as(OutcomeClass.CONFIGURATION) == "" and counts_as(OutcomeClass.INVALID_DESTINATION) == ""
    assert counts_as(OutcomeClass.PERMANENT) == "ok"  # the receiver answered: it is up


# -- the one precedence rule: deliver_by > maximum age > endpoint hold > quiet hours -------------------
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@settings(max_examples=300, deadline=None)
@given(
    age=st.floats(0, 30 * 3600),
    hold=st.floats(0, 30 * 3600),
    by=st.none() | st.floats(-3600, 30 * 3600),
)
def test_an_endpoint_hold_defers_without_overriding_the_deadline_or_the_maximum_age(
    age: float, hold: float, by: float | None
) -> None:
    max_age = 24 * 3600.0
    deliver_by = None if by is None else NOW + timedelta(seconds=by)
    hold_until = NOW + timedelta(seconds=hold)
    g = decide_gate(
        at=NOW,
        cycle_started=NOW - timedelta(seconds=age),
        max_age_seconds=max_age,
        deliver_by=deliver_by,
        hold_until=hold_until,
    )
    if deliver_by is not None and deliver_by <= NOW:
        assert g.reason is GateReason.DEADLINE_PASSED
    elif age > max_age:
        assert g.reason is GateReason.EXPIRED
    elif hold_until > NOW:
        if deliver_by is not None and hold_until >= deliver_by:
            assert g.reason is GateReason.DEADLINE_PASSED
        elif age + hold > max_age:
            assert g.reason is GateReason.EXPIRED  # the hold counts toward the maximum age
        else:
            assert (g.gate, g.reason, g.until) == (Gate.DEFER, GateReason.ENDPOINT_HOLD, hold_until)
    else:
        assert g.proceeds
