"""The shared rate limiter reserves the next send slot of a busy destination (issue 15, drain): a
consumer waits for a slot under a second away in its lane instead of giving its claim back for
whole seconds, and the rate still holds: grants and reservations are at least an interval apart.
Both slot stores — DynamoDB (on moto and dynalite) and the in-memory twin — give the same answers."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from moto import mock_aws
from reminders.adapters.ratelimit_store import MemoryRateSlots
from reminders.domain.ratelimit import RateGrant, SharedRateLimiter
from reminders_ops.bench.limiter import dynamo_slots

from tests.conftest import DYNAMODB_BACKENDS, skip_if_moto_only

_TABLES = itertools.count()


@pytest.fixture(params=["memory", *DYNAMODB_BACKENDS])
def slots(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryRateSlots()
        return
    table = f"limiter-slots-{next(_TABLES)}"  # fresh per test; AWS wants names of 3+ characters
    if request.param == "dynamodb-dynalite":
        skip_if_moto_only(request)
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", request.getfixturevalue("_dynalite"))
        yield dynamo_slots(table)
        return
    with mock_aws():
        yield dynamo_slots(table)


@pytest.mark.moto_only(
    "dynalite 4.0.0 does not return the old item on a failed condition "
    "(ReturnValuesOnConditionCheckFailure=ALL_OLD); the refusal's wait is read from it"
)
def test_a_busy_destination_reserves_consecutive_slots_then_refuses_past_a_second(slots: Any) -> None:
    limiter = SharedRateLimiter(slots, lambda _: 4.0)  # one send per 0.25 s
    now = 1_000.0
    grants = [limiter.acquire("ep", now) for _ in range(6)]
    assert grants[0] == RateGrant()  # free: now
    assert [g.reserved for g in grants[1:5]] == [True] * 4
    assert [round(g.wait, 6) for g in grants[1:5]] == [0.25, 0.5, 0.75, 1.0]  # an interval apart
    assert not grants[5].reserved and round(grants[5].wait, 6) == 1.25  # beyond a second: given back
    assert limiter.granted == 1 and limiter.reserved == 4


def test_an_idle_destination_is_granted_at_once_without_a_reservation(slots: Any) -> None:
    limiter = SharedRateLimiter(slots, lambda _: 4.0)
    assert limiter.acquire("ep", 1_000.0) == RateGrant()
    assert limiter.acquire("ep", 1_000.3) == RateGrant()  # the last slot has passed
    assert limiter.writes == 2  # one conditional write each


def test_reservations_never_put_two_sends_in_one_interval(slots: Any) -> None:
    limiter = SharedRateLimiter(slots, lambda _: 10.0)
    starts: list[float] = []
    now = 500.0
    for step in range(200):  # callers arrive every 20 ms, five times the rate
        t = now + step * 0.02
        g = limiter.acquire("ep", t)
        if g.now or g.reserved:
            starts.append(t + g.wait)
    starts.sort()
    gaps = [b - a for a, b in pairwise(starts)]
    assert min(gaps) >= 0.1 - 1e-6
    in_any_second = max(sum(1 for s in starts if a <= s < a + 1.0) for a in starts)
    assert in_any_second <= 10


def test_no_rate_means_no_write(slots: Any) -> None:
    limiter = SharedRateLimiter(slots, lambda _: None)
    assert limiter.acquire("ep", 1.0) == RateGrant() and limiter.writes == 0
