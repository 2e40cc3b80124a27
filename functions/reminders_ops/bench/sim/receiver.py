"""A simulated provider behind the Sender port: answer latency, a rate limit R (429 + Retry-After
when exceeded), a fraction p of transient failures (500), and Standard Webhooks deduplication by
the idempotency key (409 for a key it has already accepted, which the webhook adapter reports as
``reconciled_conflict``). It records when each key was first attempted (lateness) and every send
to a key it had already accepted (what a receiver that ignores the key would have duplicated)."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field

from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import Rendered
from reminders.domain.retry import OutcomeClass, SendResult

from .model import Latency, SimClock

SLOTS_PER_SECOND = 10  # the rate limit is enforced per 100 ms slot (R/10 each): smooth, order-robust


@dataclass
class ReceiverStats:
    posts: int = 0
    accepted: int = 0
    throttled: int = 0
    failed: int = 0
    resent_after_accept: int = 0  # sends of an already accepted key (409 here)
    first_attempt: dict[str, float] = field(default_factory=dict)
    lateness: list[float] = field(default_factory=list)  # first attempt - due, per key
    accepted_keys: Counter[str] = field(default_factory=Counter)
    post_times: list[float] = field(default_factory=list)  # every request, as it arrived
    down_posts: list[float] = field(default_factory=list)  # POST times while the receiver was down


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most requests within any ``window`` seconds (a sliding window over sorted times)."""
    ordered, most, lo = sorted(times), 0, 0
    for hi, t in enumerate(ordered):
        while ordered[lo] <= t - window:
            lo += 1
        most = max(most, hi - lo + 1)
    return most


class SimReceiver:
    def __init__(
        self,
        clock: SimClock,
        latency: Latency,
        *,
        rate_per_second: float | None = None,
        failure_rate: float = 0.0,
        seed: int = 7,
    ) -> None:
        self.clock = clock
        self.latency = latency
        self.rate = rate_per_second
        self.failure_rate = failure_rate
        self.rng = random.Random(seed)
        self.stats = ReceiverStats()
        self._slots: dict[int, int] = {}
        self._per_slot = (rate_per_second or 0.0) / SLOTS_PER_SECOND
        #: Issue 16: (from, until) epoch seconds when the receiver is down for everyone (503).
        self.down: list[tuple[float, float]] = []

    def _admit(self, t: float) -> float:
        """0 when admitted, else the Retry-After (whole seconds, as HTTP sends it)."""
        if self.rate is None:
            return 0.0
        slot = int(t * SLOTS_PER_SECOND)
        used = self._slots.get(slot, 0)
        # fractional budgets accumulate over slots of the same second
        allowed = math.floor(self._per_slot * (slot % SLOTS_PER_SECOND + 1)) - math.floor(
            self._per_slot * (slot % SLOTS_PER_SECOND)
        )
        if used >= max(allowed, 0):
            return float(max(1, math.ceil((slot + 1) / SLOTS_PER_SECOND - t)))
        self._slots[slot] = used + 1
        if len(self._slots) > 4096:
            for old in [s for s in self._slots if s < slot - 100]:
                del self._slots[old]
        return 0.0

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        s = self.stats
        t = self.clock.t
        key = delivery.key
        s.posts += 1
        s.post_times.append(t)
        if key not in s.first_attempt:
            s.first_attempt[key] = t
            s.lateness.append(t - reminder.due_at.timestamp())
        fp = rendered.fingerprint
        if any(a <= t < b for a, b in self.down):
            s.failed += 1
            s.down_posts.append(t)
            self.clock.advance(self.latency.provider)
            return SendResult(OutcomeClass.TRANSIENT, 503, detail="http_503_down", fingerprint=fp)
        retry_after = self._admit(t)
        if retry_after:
            s.throttled += 1
            self.clock.advance(self.latency.throttled_answer)
            return SendResult(
                OutcomeClass.THROTTLED,
                429,
                retry_after_seconds=retry_after,
                detail="http_429",
                fingerprint=fp,
            )
        self.clock.advance(self.latency.provider)
        if self.failure_rate and self.rng.random() < self.failure_rate:
            s.failed += 1
            return SendResult(OutcomeClass.TRANSIENT, 500, detail="http_500", fingerprint=fp)
        if s.accepted_keys[key]:
            s.resent_after_accept += 1
            return SendResult(
                OutcomeClass.RECONCILED_CONFLICT,
                409,
                receipt=f"conflict:{key}",
                detail="receiver_confirmed_duplicate",
                fingerprint=fp,
            )
        s.accepted_keys[key] += 1
        s.accepted += 1
        return SendResult(OutcomeClass.ACCEPTED, 200, receipt=f"rcpt-{key[-12:]}-1", fingerprint=fp)
