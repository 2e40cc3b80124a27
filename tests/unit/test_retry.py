"""Retry classification and policy (MISSION §3): every status class, Retry-After, budget, age, jitter."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.retry import (
    Action,
    DeadLetterReason,
    OutcomeClass,
    RetryPolicy,
    SendResult,
    classify_http,
    decide,
    parse_retry_after,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
POLICY = RetryPolicy()


class FixedRng(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


def result(outcome: OutcomeClass, status: int | None = None, retry_after: float | None = None) -> SendResult:
    return SendResult(outcome, status, retry_after_seconds=retry_after)


# -- classify_http --------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_2xx_is_accepted(status: int) -> None:
    assert classify_http(status) is OutcomeClass.ACCEPTED


def test_429_is_throttled() -> None:
    assert classify_http(429) is OutcomeClass.THROTTLED


@pytest.mark.parametrize("status", [408, 425, 500, 502, 503, 504])
def test_named_retryable_statuses_are_transient(status: int) -> None:
    assert classify_http(status) is OutcomeClass.TRANSIENT


@pytest.mark.parametrize("status", [501, 505, 507, 599])
def test_other_5xx_are_transient(status: int) -> None:
    assert classify_http(status) is OutcomeClass.TRANSIENT


def test_409_is_a_conflict_to_reconcile_never_a_blind_retry() -> None:
    assert classify_http(409) is OutcomeClass.CONFLICT_UNCONFIRMED
    d = decide(result(OutcomeClass.CONFLICT_UNCONFIRMED, 409), attempts=1, age_seconds=0, policy=POLICY)
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.CONFLICT_UNCONFIRMED


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 410, 413, 415, 422, 451])
def test_other_4xx_are_permanent(status: int) -> None:
    assert classify_http(status) is OutcomeClass.PERMANENT


# -- Retry-After -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "seconds"), [("0", 0.0), ("120", 120.0), (" 7 ", 7.0), ("86400", 86400.0)])
def test_retry_after_delta_seconds(raw: str, seconds: float) -> None:
    assert parse_retry_after(raw, NOW) == seconds


def test_retry_after_http_date() -> None:
    raw = format_datetime(NOW + timedelta(seconds=90), usegmt=True)  # "Sun, 29 Nov 2026 12:01:30 GMT"
    assert parse_retry_after(raw, NOW) == 90.0


def test_retry_after_http_date_in_the_past_is_zero() -> None:
    raw = format_datetime(NOW - timedelta(hours=1), usegmt=True)
    assert parse_retry_after(raw, NOW) == 0.0


@pytest.mark.parametrize("raw", [None, "", "   ", "soon", "-5", "1.5", "Thu, 99 Foo 2026"])
def test_retry_after_missing_or_unparseable_is_none(raw: str | None) -> None:
    assert parse_retry_after(raw, NOW) is None


# -- decide: delivered -------------------------------------------------------------------------------
@pytest.mark.parametrize("outcome", [OutcomeClass.ACCEPTED, OutcomeClass.RECONCILED_CONFLICT])
def test_accepted_and_reconciled_conflict_deliver(outcome: OutcomeClass) -> None:
    d = decide(result(outcome, 200), attempts=6, age_seconds=10**6, policy=POLICY)
    assert d.action is Action.DELIVER


# -- decide: 429 -----------------------------------------------------------------------------------
def test_429_with_retry_after_honours_it_plus_bounded_jitter() -> None:
    for r in (0.0, 0.5, 0.999999):
        d = decide(
            result(OutcomeClass.THROTTLED, 429, 120.0),
            attempts=1,
            age_seconds=0,
            policy=POLICY,
            rng=FixedRng(r),
        )
        assert d.action is Action.RETRY and not d.spends_attempt
        assert 120.0 <= d.delay_seconds <= 120.0 + POLICY.retry_after_jitter_seconds
    assert d.delay_seconds > 124.9


def test_429_without_retry_after_backs_off_exponentially() -> None:
    for attempts in (1, 3, 6):
        d = decide(
            result(OutcomeClass.THROTTLED, 429),
            attempts=attempts,
            age_seconds=0,
            policy=POLICY,
            rng=FixedRng(0.999999),
        )
        assert d.action is Action.RETRY and not d.spends_attempt
        assert 1.0 <= d.delay_seconds <= min(POLICY.cap_seconds, POLICY.throttle_base_seconds * 2**attempts)


def test_429_never_spends_the_attempt_budget_even_past_it() -> None:
    d = decide(result(OutcomeClass.THROTTLED, 429, 1.0), attempts=50, age_seconds=0, policy=POLICY)
    assert d.action is Action.RETRY and d.spends_attempt is False


def test_429_retry_after_is_capped_at_the_visibility_ceiling() -> None:
    d = decide(result(OutcomeClass.THROTTLED, 429, 10 * 86400.0), attempts=1, age_seconds=0, policy=POLICY)
    assert d.action is Action.RETRY and d.delay_seconds == POLICY.retry_after_cap_seconds == 12 * 3600


def test_429_beyond_max_age_expires_without_spending() -> None:
    d = decide(
        result(OutcomeClass.THROTTLED, 429, 3600.0),
        attempts=1,
        age_seconds=POLICY.max_age_seconds - 60,
        policy=POLICY,
    )
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.EXPIRED
    assert d.spends_attempt is False


# -- decide: transient class -------------------------------------------------------------------------
TRANSIENT_LIKE = [OutcomeClass.TRANSIENT, OutcomeClass.TIMEOUT, OutcomeClass.CONNECTION]


@pytest.mark.parametrize("outcome", TRANSIENT_LIKE)
@pytest.mark.parametrize("attempts", [1, 2, 3, 4, 5])
def test_transient_timeouts_and_connection_errors_retry_with_capped_backoff(
    outcome: OutcomeClass, attempts: int
) -> None:
    d = decide(result(outcome, 503), attempts=attempts, age_seconds=0, policy=POLICY, rng=FixedRng(0.999999))
    assert d.action is Action.RETRY and d.spends_attempt
    ceiling = min(POLICY.cap_seconds, POLICY.base_seconds * POLICY.multiplier ** (attempts - 1))
    assert ceiling * 0.999 <= d.delay_seconds <= ceiling


@pytest.mark.parametrize("outcome", TRANSIENT_LIKE)
def test_attempt_budget_default_8_then_dead_letter(outcome: OutcomeClass) -> None:
    assert POLICY.max_attempts == 8
    assert decide(result(outcome), attempts=7, age_seconds=900, policy=POLICY).action is Action.RETRY
    d = decide(result(outcome), attempts=8, age_seconds=900, policy=POLICY)
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.ATTEMPTS_EXHAUSTED


def test_max_age_default_24h_expires() -> None:
    assert POLICY.max_age_seconds == 24 * 3600
    d = decide(
        result(OutcomeClass.TRANSIENT, 500),
        attempts=1,
        age_seconds=24 * 3600 - 0.5,
        policy=POLICY,
        rng=FixedRng(0.5),
    )
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.EXPIRED


# -- decide: permanent class ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (OutcomeClass.PERMANENT, DeadLetterReason.PERMANENT),
        (OutcomeClass.INVALID_DESTINATION, DeadLetterReason.INVALID_DESTINATION),
        (OutcomeClass.CONFLICT_UNCONFIRMED, DeadLetterReason.CONFLICT_UNCONFIRMED),
    ],
)
def test_permanent_failures_dead_letter_at_once(outcome: OutcomeClass, reason: DeadLetterReason) -> None:
    d = decide(result(outcome, 400), attempts=1, age_seconds=0, policy=POLICY)
    assert d.action is Action.DEAD_LETTER and d.reason is reason


# -- decide: our configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize("attempts", [1, 6, 100])
def test_configuration_errors_hold_without_spending_the_budget(attempts: int) -> None:
    d = decide(result(OutcomeClass.CONFIGURATION), attempts=attempts, age_seconds=0, policy=POLICY)
    assert d.action is Action.HOLD and d.spends_attempt is False
    assert d.delay_seconds == POLICY.hold_seconds
    assert d.reason is None


# -- backoff ------------------------------------------------------------------------------------------
def test_backoff_bounds_and_cap() -> None:
    p = RetryPolicy(base_seconds=10, multiplier=2, cap_seconds=100)
    assert p.backoff(1, FixedRng(0.0)) == 1.0  # never 0: an immediate hot loop
    assert p.backoff(1, FixedRng(0.5)) == 5.0
    assert p.backoff(3, FixedRng(0.5)) == 20.0
    assert p.backoff(30, FixedRng(0.999999)) <= 100.0
    assert p.backoff(30, FixedRng(0.999999)) > 99.0


@settings(max_examples=200, deadline=None)
@given(attempts=st.integers(min_value=0, max_value=64), seed=st.integers(min_value=0, max_value=2**32))
def test_full_jitter_stays_within_bounds(attempts: int, seed: int) -> None:
    delay = POLICY.backoff(attempts, random.Random(seed))
    ceiling = min(POLICY.cap_seconds, POLICY.base_seconds * POLICY.multiplier ** max(0, attempts - 1))
    assert 1.0 <= delay <= max(1.0, ceiling)


def test_full_jitter_spreads() -> None:
    rng = random.Random(1)
    delays = [POLICY.backoff(4, rng) for _ in range(2000)]
    ceiling = POLICY.base_seconds * POLICY.multiplier**3
    assert min(delays) < 0.15 * ceiling and max(delays) > 0.9 * ceiling


# -- configuration from the environment ------------------------------------------------------------------
def test_from_env_defaults() -> None:
    assert RetryPolicy.from_env({}) == RetryPolicy()


def test_from_env_overrides_every_value() -> None:
    env = {
        "REMINDERS_RETRY_POLICY_VERSION": "local.1",
        "REMINDERS_RETRY_BASE_SECONDS": "2",
        "REMINDERS_RETRY_CAP_SECONDS": "20",
        "REMINDERS_RETRY_MAX_ATTEMPTS": "3",
        "REMINDERS_RETRY_MAX_AGE_SECONDS": "600",
        "REMINDERS_RETRY_JITTER_SECONDS": "0.5",
        "REMINDERS_RETRY_RETRY_AFTER_CAP_SECONDS": "60",
        "REMINDERS_RETRY_HOLD_SECONDS": "5",
        "REMINDERS_RETRY_LEASE_SECONDS": "15",
        "REMINDERS_RETRY_PROVIDER_TIMEOUT_SECONDS": "4",
    }
    p = RetryPolicy.from_env(env)
    assert p == RetryPolicy(
        version="local.1",
        base_seconds=2.0,
        cap_seconds=20.0,
        max_attempts=3,
        max_age_seconds=600.0,
        retry_after_jitter_seconds=0.5,
        retry_after_cap_seconds=60.0,
        hold_seconds=5.0,
        lease_seconds=15.0,
        provider_timeout_seconds=4.0,
    )
    assert isinstance(p.max_attempts, int)
    assert (
        decide(result(OutcomeClass.TIMEOUT), attempts=3, age_seconds=0, policy=p).action is Action.DEAD_LETTER
    )


def test_from_env_empty_values_keep_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMINDERS_RETRY_BASE_SECONDS", "")
    monkeypatch.setenv("REMINDERS_RETRY_CAP_SECONDS", "7")
    p = RetryPolicy.from_env()
    assert p.base_seconds == RetryPolicy().base_seconds and p.cap_seconds == 7.0


def test_default_lease_outlasts_the_provider_timeout() -> None:
    assert POLICY.lease_seconds > POLICY.provider_timeout_seconds
    assert POLICY.retry_after_cap_seconds <= 12 * 3600


# -- 429 without Retry-After: consecutive throttles back off (issue 12 #1) -------------------------------
def test_consecutive_429s_without_retry_after_grow_the_delay_capped_without_spending_attempts() -> None:
    """The n-th 429 in a row waits at least half of min(cap, base * 2**(n-1)) and at most that; the
    attempt count stays the same throughout (429s spend nothing), so only the streak drives it."""
    floors, ceilings = [], []
    for streak in range(12):  # throttles in a row before this one
        low, high = (
            decide(
                result(OutcomeClass.THROTTLED, 429),
                attempts=1,
                throttles=streak,
                age_seconds=0,
                policy=POLICY,
                rng=FixedRng(r),
            )
            for r in (0.0, 0.999999)
        )
        assert low.action is high.action is Action.RETRY
        assert not low.spends_attempt and not high.spends_attempt
        floors.append(low.delay_seconds)
        ceilings.append(high.delay_seconds)
    expected = [min(POLICY.cap_seconds, POLICY.throttle_base_seconds * 2**n) for n in range(12)]
    assert floors == [c / 2 for c in expected]
    assert all(abs(h - c) < 0.01 for h, c in zip(ceilings, expected, strict=True))
    assert floors[:7] == sorted(set(floors[:7]))  # strictly growing until the cap
    assert max(ceilings) <= POLICY.cap_seconds


def test_throttle_backoff_is_a_pure_function_of_the_streak() -> None:
    assert POLICY.throttle_backoff(1, FixedRng(0.0)) == POLICY.throttle_base_seconds / 2
    assert POLICY.throttle_backoff(3, FixedRng(0.0)) == POLICY.throttle_base_seconds * 2
    assert POLICY.throttle_backoff(10_000, FixedRng(0.999999)) <= POLICY.cap_seconds
