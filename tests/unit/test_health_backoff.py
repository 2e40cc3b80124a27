"""Issue 16: after its endpoint resumed, a delivery's backoff grows only with the failures since the
resume (domain/retry.py ``decide(backoff_attempts=...)``, domain/health.py ``failures_since``)."""

from __future__ import annotations

import random

from reminders.domain.health import failures_since
from reminders.domain.models import Attempt
from reminders.domain.retry import Action, DeadLetterReason, OutcomeClass, RetryPolicy, SendResult, decide

POLICY = RetryPolicy()
FAILED = SendResult(OutcomeClass.TRANSIENT, 503)


def test_failures_since_counts_failed_attempts_at_or_after_the_resume_only() -> None:
    history = [
        Attempt(at="2026-12-01T09:00:00Z", event="attempt", outcome="transient"),
        Attempt(at="2026-12-01T09:00:02Z", event="attempt", outcome="timeout"),
        Attempt(at="2026-12-01T09:00:05Z", event="defer", detail="endpoint_hold"),
        Attempt(at="2026-12-01T09:02:00Z", event="attempt", outcome="throttled"),  # a 429 is no failure
        Attempt(at="2026-12-01T09:02:01Z", event="attempt", outcome="connection"),
    ]
    resumed = 1796115720.0  # 2026-12-01T09:02:00Z
    assert failures_since(history, resumed) == 1
    assert failures_since(history, 0.0) == 3
    assert failures_since([], resumed) == 0


def test_a_failure_after_the_resume_retries_within_the_first_backoff_however_many_failed_before() -> None:
    for seed in range(200):
        d = decide(
            FAILED, attempts=5, age_seconds=60, policy=POLICY, rng=random.Random(seed), backoff_attempts=1
        )
        assert d.action is Action.RETRY and 1.0 <= d.delay_seconds <= POLICY.base_seconds
    grown = [
        decide(FAILED, attempts=5, age_seconds=60, policy=POLICY, rng=random.Random(s)).delay_seconds
        for s in range(200)
    ]
    assert max(grown) > 4 * POLICY.base_seconds  # without it: U(0, 2 * 2**4)


def test_the_budget_and_the_fifteen_minute_floor_still_count_every_attempt() -> None:
    last = decide(FAILED, attempts=POLICY.max_attempts - 1, age_seconds=60, policy=POLICY, backoff_attempts=1)
    assert last.delay_seconds >= POLICY.min_exhaust_seconds - 60
    spent = decide(FAILED, attempts=POLICY.max_attempts, age_seconds=60, policy=POLICY, backoff_attempts=1)
    assert (spent.action, spent.reason) == (Action.DEAD_LETTER, DeadLetterReason.ATTEMPTS_EXHAUSTED)
