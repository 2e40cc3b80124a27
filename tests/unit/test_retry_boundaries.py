"""Retry decisions at their boundaries (MISSION §8: survivors of `make mutate` in domain/retry.py)."""

from __future__ import annotations

from reminders.domain.retry import Action, DeadLetterReason, OutcomeClass, RetryPolicy, SendResult, decide

POLICY = RetryPolicy(retry_after_jitter_seconds=0.0)


def test_a_throttled_send_retries_when_its_retry_after_ends_exactly_at_the_maximum_age() -> None:
    throttled = SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=60.0)
    at_the_edge = decide(throttled, attempts=1, age_seconds=POLICY.max_age_seconds - 60, policy=POLICY)
    assert at_the_edge.action is Action.RETRY and at_the_edge.delay_seconds == 60.0
    past = decide(throttled, attempts=1, age_seconds=POLICY.max_age_seconds - 59, policy=POLICY)
    assert past.action is Action.DEAD_LETTER and past.reason is DeadLetterReason.EXPIRED
    assert not past.spends_attempt  # a throttle never spends the budget, even the one that ends it
