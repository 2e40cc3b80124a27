"""Issue 16, adaptive retry and receiver steering: an isolated failure retries within seconds, a
persistent one backs off fast, no delivery dead-letters ``attempts_exhausted`` less than 15 minutes
into its cycle, and a receiver can end a delivery with ``webhook-delivery: abort``."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.retry import (
    Action,
    DeadLetterReason,
    OutcomeClass,
    RetryPolicy,
    SendResult,
    decide,
)
from reminders.domain.states import DeliveryState

from tests.unit.fakes import World

POLICY = RetryPolicy()


def _cycle(policy: RetryPolicy, seed: int, outcome: OutcomeClass = OutcomeClass.TRANSIENT) -> list[float]:
    """The start times (seconds into the cycle) of every attempt of a delivery that always fails."""
    rng = random.Random(seed)
    at, starts = 0.0, [0.0]
    for attempts in range(1, 1000):
        d = decide(SendResult(outcome, 503), attempts=attempts, age_seconds=at, policy=policy, rng=rng)
        if d.action is not Action.RETRY:
            assert d.reason is DeadLetterReason.ATTEMPTS_EXHAUSTED
            return starts
        at += d.delay_seconds
        starts.append(at)
    raise AssertionError("never ended")


def test_an_isolated_failure_retries_within_a_few_seconds_jittered() -> None:
    first = {round(_cycle(POLICY, seed)[1], 3) for seed in range(50)}
    assert min(first) >= 1.0 and max(first) <= 2.0  # within 2 s of the failure
    assert len(first) > 20  # jittered: fifty failures do not all come back at the same instant


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    base=st.floats(min_value=0.1, max_value=60),
    multiplier=st.floats(min_value=1.0, max_value=4.0),
    max_attempts=st.integers(min_value=1, max_value=12),
)
def test_no_delivery_dead_letters_attempts_exhausted_within_fifteen_minutes_of_its_cycle(
    seed: int, base: float, multiplier: float, max_attempts: int
) -> None:
    """Whatever the configuration, the last budgeted attempt starts ≥ min_exhaust_seconds into
    the cycle, and the budget is never exceeded."""
    policy = RetryPolicy(base_seconds=base, multiplier=multiplier, max_attempts=max_attempts)
    starts = _cycle(policy, seed)
    assert len(starts) == max_attempts
    if max_attempts > 1:
        assert starts[-1] >= policy.min_exhaust_seconds


def test_the_default_schedule_retries_within_seconds_then_spends_its_last_attempt_at_fifteen_minutes() -> (
    None
):
    for seed in range(20):
        starts = _cycle(POLICY, seed)
        gaps = [b - a for a, b in itertools.pairwise(starts)]
        assert len(starts) == POLICY.max_attempts == 8
        for n, gap in enumerate(gaps[:-1], start=1):
            assert 1.0 - 1e-9 <= gap <= POLICY.base_seconds * POLICY.multiplier ** (n - 1) + 1e-9
        assert starts[-2] < 5 * 60  # seven attempts within minutes ...
        assert starts[-1] == pytest.approx(POLICY.min_exhaust_seconds)  # ... the eighth at 15 minutes


def test_a_quiet_endpoint_down_for_ten_minutes_still_delivers_its_one_reminder() -> None:
    """One reminder, its receiver answering 500 for 10 minutes, then up: delivered (not dead
    lettered), within the attempt budget, once."""
    w = World(shards=1)
    r = w.create("renewal:acct-1:quiet", due_in=0)
    key = w.delivery(r.id).key
    down_until = w.clock.now().timestamp() + 600
    for _ in range(3 * 3600):
        d = w.delivery(r.id)
        if d.state.terminal:
            break
        if w.clock.now().timestamp() < down_until:
            w.sender.script(key, ["500"])
        w.poll()
        w.sender.scripts.pop(key, None)
        w.clock.advance(1)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason, d.attempts)
    assert d.attempts <= POLICY.max_attempts
    assert w.sender.accepted[key] == 1
    assert all(a.policy_version == POLICY.version for a in d.history if a.event == "attempt")


@pytest.mark.parametrize("status", [500, 503, 400, 429])
def test_a_receiver_that_answers_abort_dead_letters_that_delivery_receiver_aborted(status: int) -> None:
    d = decide(
        SendResult(
            OutcomeClass.TRANSIENT if status >= 500 else OutcomeClass.PERMANENT, status, steering="abort"
        ),
        attempts=1,
        age_seconds=0,
        policy=POLICY,
    )
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.RECEIVER_ABORTED


def test_abort_steering_never_overrides_an_acceptance() -> None:
    d = decide(
        SendResult(OutcomeClass.ACCEPTED, 200, steering="abort"), attempts=1, age_seconds=0, policy=POLICY
    )
    assert d.action is Action.DELIVER
