"""Per-destination rate limiting: token buckets on an injected clock (pure, no I/O), and the rate
shared by every consumer instance (:class:`SharedRateLimiter`, on a conditional-write port).

In AWS each consumer instance holds its own buckets, so the configured per-destination rate is
divided by the channel's ``MaximumConcurrency``: together the instances stay inside the provider's
budget; a provider's 429 + Retry-After corrects whatever the split misses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True)
class TokenBucket:
    rate_per_second: float
    burst: float
    tokens: float = -1.0
    updated: float = 0.0

    def take(self, now: float) -> float:
        """Take one token; returns 0 when granted, else the seconds until one is available."""
        if self.tokens < 0:
            self.tokens, self.updated = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate_per_second)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate_per_second


class DestinationLimiter:
    MAX_KEYS = 10_000  # bound memory: forget idle destinations beyond this

    def __init__(self, rate_per_second: float, burst: float | None = None) -> None:
        if rate_per_second <= 0:
            raise ValueError("rate_per_second must be positive")
        self.rate = rate_per_second
        self.burst = burst if burst is not None else max(1.0, rate_per_second)
        self.buckets: dict[str, TokenBucket] = {}

    def acquire(self, destination: str, now: float) -> float:
        bucket = self.buckets.get(destination)
        if bucket is None:
            if len(self.buckets) >= self.MAX_KEYS:
                self.buckets.pop(next(iter(self.buckets)))
            bucket = self.buckets[destination] = TokenBucket(self.rate, self.burst)
        return bucket.take(now)


# -- a rate shared by every consumer instance ---------------------------------------------------------
class RateSlots(Protocol):
    """One record per rate key holding its *theoretical arrival time* (GCRA): the earliest time the
    next send may start. ``advance`` is one conditional write: set it to ``next_at`` if it is absent
    or not after ``now``; else leave it and return what it holds."""

    def advance(self, key: str, now: float, next_at: float) -> tuple[bool, float]:
        """(granted, the stored time after the call)."""
        ...


class SharedRateLimiter:
    """A per-destination rate held across all consumers: the generic cell rate algorithm without
    burst on one record per destination (DynamoDB: one conditional ``UpdateItem`` per try). A grant
    moves the record one interval (1 / rate) ahead, so grants are at least an interval apart whoever
    takes them: any 1 s window holds at most ``rate`` grants. A refused try learns when the next
    grant can come (the caller gives its claim back for that long; no attempt is spent).

    ``rate_of(bucket)``: the bucket's rate per second (an endpoint's own, the SES quota for email),
    None for no limit of ours. ``writes`` counts every conditional write, granted or not."""

    def __init__(self, slots: RateSlots, rate_of: Callable[[str], float | None]) -> None:
        self.slots = slots
        self.rate_of = rate_of
        self.writes = 0
        self.granted = 0

    def acquire(self, bucket: str, now: float) -> float:
        rate = self.rate_of(bucket)
        if rate is None or rate <= 0:
            return 0.0
        self.writes += 1
        ok, stored = self.slots.advance(bucket, now, now + 1.0 / rate)
        if ok:
            self.granted += 1
            return 0.0
        return max(stored - now, 1e-3)
