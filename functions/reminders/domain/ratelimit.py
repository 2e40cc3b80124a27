"""Per-destination rate limiting: token buckets on an injected clock (pure, no I/O).

In AWS each consumer instance holds its own buckets, so the configured per-destination rate is
divided by the channel's ``MaximumConcurrency``: together the instances stay inside the provider's
budget; a provider's 429 + Retry-After corrects whatever the split misses.
"""

from __future__ import annotations

from dataclasses import dataclass


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
