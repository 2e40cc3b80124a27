"""Per-destination rate limiting: token buckets on an injected clock (pure, no I/O), and the rate
shared by every consumer instance (:class:`SharedRateLimiter`, on a conditional-write port).

In AWS each consumer instance holds its own buckets, so the configured per-destination rate is
divided by the channel's ``MaximumConcurrency``: together the instances stay inside the provider's
budget; a provider's 429 + Retry-After corrects whatever the split misses.
"""

from __future__ import annotations

import threading
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
#: How far ahead a consumer may reserve the next send of a busy destination and wait for it in its
#: lane (a timer under a second, like the sub-second wait before a claim) instead of giving its claim
#: back for whole seconds: every refused claim of a busy destination came back in the same second
#: and tried again (~30 conditional writes per send, the rate met at 0.72 R in the drain).
RESERVE_AHEAD_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class RateGrant:
    """``wait`` 0: send now. ``reserved``: the send slot ``wait`` seconds from now is this caller's
    (wait it out, then send; nobody else is granted it). Neither: refused; the next free slot is
    ``wait`` seconds away (give the claim back for that long)."""

    wait: float = 0.0
    reserved: bool = False

    @property
    def now(self) -> bool:
        return self.wait <= 0.0


GRANTED = RateGrant()


class RateSlots(Protocol):
    """One record per rate key holding its *theoretical arrival time* (GCRA): the earliest time the
    next send may start. Each method is one conditional write."""

    def advance(self, key: str, now: float, next_at: float) -> tuple[bool, float]:
        """Set the time to ``next_at`` if it is absent or not after ``now``; else leave it.
        (granted, the stored time after the call)."""
        ...

    def reserve(self, key: str, now: float, latest: float, interval: float) -> tuple[bool, float]:
        """Move the time on by ``interval`` if it is after ``now`` and not after ``latest`` (the
        caller's send starts at the time it held). (reserved, the stored time after the call)."""
        ...


class SharedRateLimiter:
    """A per-destination rate held across all consumers: the generic cell rate algorithm without
    burst on one record per destination (DynamoDB: one conditional ``UpdateItem`` per try). A grant
    moves the record one interval (1 / rate) ahead, so grants are at least an interval apart whoever
    takes them: any 1 s window holds at most ``rate`` grants. A destination that is busy (its next
    slot in the future) is *reserved*: one more conditional write takes the next slot if it is at most
    :data:`RESERVE_AHEAD_SECONDS` away, and the caller waits for it; only beyond that is a try refused
    (the caller gives its claim back for that long; no attempt is spent).

    ``rate_of(bucket)``: the bucket's rate per second (an endpoint's own, the SES quota for email),
    None for no limit of ours. ``writes`` counts every conditional write, granted or not."""

    def __init__(
        self,
        slots: RateSlots,
        rate_of: Callable[[str], float | None],
        *,
        reserve_ahead_seconds: float = RESERVE_AHEAD_SECONDS,
    ) -> None:
        self.slots = slots
        self.rate_of = rate_of
        self.reserve_ahead = reserve_ahead_seconds
        self.writes = 0
        self.granted = 0
        self.reserved = 0
        self._counting = threading.Lock()  # the records of a batch call in from their threads

    def _count(self, writes: int, granted: int = 0, reserved: int = 0) -> None:
        with self._counting:
            self.writes += writes
            self.granted += granted
            self.reserved += reserved

    def acquire(self, bucket: str, now: float) -> RateGrant:
        rate = self.rate_of(bucket)
        if rate is None or rate <= 0:
            return GRANTED
        interval = 1.0 / rate
        for _ in range(3):  # the record may fall idle between two tries: grant, then reserve
            ok, stored = self.slots.advance(bucket, now, now + interval)
            if ok:
                self._count(1, granted=1)
                return GRANTED
            if stored - now > self.reserve_ahead:
                self._count(1)
                return RateGrant(stored - now)
            ok, after = self.slots.reserve(bucket, now, now + self.reserve_ahead, interval)
            if ok:
                self._count(2, reserved=1)
                return RateGrant(max(after - interval - now, 0.0), reserved=True)
            self._count(2)
            if after - now > self.reserve_ahead:
                return RateGrant(after - now)
        return RateGrant(max(interval, 1e-3))
