"""Endpoint health (issue 16): hold, probe, resume, disable. Pure rules, no I/O.

Per endpoint, the recent outcomes of its sends are counted in time buckets (a sliding window). An
endpoint that fails broadly is **held**: its deliveries are not sent (no attempt spent), one
**probe** at a time goes out, the probes back off (interval growing, capped), and the first probe
the receiver answers resumes it. Held longer than the disable limit, it is **disabled**: its
deliveries dead-letter ``endpoint_disabled`` until an operator enables it again (redrive then sends
them). A receiver's ``webhook-delivery: disable`` disables it at once.

Counted as a failure: the transient classes (5xx/408/425, timeout, connection). Counted as an
answer (the endpoint is up): every other HTTP answer (2xx, 409, 4xx, 429). Our own configuration
errors and refused destinations count as neither.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from .models import Attempt
from .retry import OutcomeClass, SendResult
from .schedule import parse_iso


class EndpointState(StrEnum):
    ACTIVE = "active"
    HELD = "held"
    DISABLED = "disabled"


class HealthWhy(StrEnum):
    """Why the last transition happened (the item's ``why``; a metric dimension)."""

    FAILURE_RATIO = "failure_ratio"
    ALL_FAILED_60S = "all_failed_60s"
    RECEIVER_DISABLE = "receiver_disable"
    PROBE_SUCCEEDED = "probe_succeeded"
    HELD_PAST_DISABLE_LIMIT = "held_past_disable_limit"
    OPERATOR = "operator"


FAILURES = frozenset({OutcomeClass.TRANSIENT, OutcomeClass.TIMEOUT, OutcomeClass.CONNECTION})
ANSWERS = frozenset(
    {
        OutcomeClass.ACCEPTED,
        OutcomeClass.RECONCILED_CONFLICT,
        OutcomeClass.CONFLICT_UNCONFIRMED,
        OutcomeClass.THROTTLED,
        OutcomeClass.PERMANENT,
    }
)


def counts_against(result: SendResult) -> str:
    """What a send's outcome says about its endpoint (issue 25 item 9): only the receiver's answers
    and failures to reach its address count; our own failures (an endpoint lookup, our resolver,
    our configuration) say nothing (``""``)."""
    return "" if result.ours else counts_as(result.outcome)


def counts_as(outcome: OutcomeClass) -> str:
    """``"fail"``, ``"ok"`` or ``""`` (not about the endpoint's health)."""
    if outcome in FAILURES:
        return "fail"
    if outcome in ANSWERS:
        return "ok"
    return ""


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    bucket_seconds: int = 2
    #: The sliding window the ratio is taken over: short, so a busy endpoint that goes down is held
    #: within seconds (its earlier successes leave the window); a quiet one by the 60 s rule.
    window_seconds: int = 10
    min_sends: int = 20
    failure_ratio: float = 0.5
    all_failed_seconds: float = 60.0  # every send failed for this long ...
    all_failed_min_sends: int = 3  # ... and at least this many of them
    probe_base_seconds: float = 2.0
    probe_multiplier: float = 2.0
    probe_cap_seconds: float = 300.0
    #: The interval also stays within this fraction of the hold so far (never under the floor): an
    #: endpoint back after a short outage resumes within ~1/32 of it (or the 2 s floor), a long one is
    #: probed sparsely (every 112 s after an hour, 300 s at most). Measured: 1/8 with a 15 s floor
    #: resumed 27 s after a 120 s outage ended (drain 1.26x its goal's bound), 1/32 and 5 s: 7 s (1.12x);
    #: 1/32 and 2 s (one request per 2 s to a down endpoint, for its first minute) with the backoff
    #: restarted at the resume (retry.decide ``backoff_attempts``): 1.08x.
    probe_hold_fraction: float = 0.03125
    probe_floor_seconds: float = 2.0
    probe_lease_seconds: float = 30.0  # a probe in flight; longer than a send and its record
    disable_after_seconds: float = 24 * 3600.0  # the retry policy's maximum age by default
    cache_seconds: float = 1.0  # how long a consumer trusts its last read of an endpoint's health

    @classmethod
    def from_env(
        cls, env: dict[str, str] | None = None, *, max_age_seconds: float | None = None
    ) -> HealthPolicy:
        """Overrides from ``REMINDERS_HEALTH_*``; the disable limit defaults to ``max_age_seconds``."""
        env = dict(os.environ) if env is None else env
        d = cls() if max_age_seconds is None else cls(disable_after_seconds=max_age_seconds)

        def num(name: str, default: float) -> float:
            raw = env.get(f"REMINDERS_HEALTH_{name}")
            return float(raw) if raw not in (None, "") else default

        return cls(
            bucket_seconds=int(num("BUCKET_SECONDS", d.bucket_seconds)),
            window_seconds=int(num("WINDOW_SECONDS", d.window_seconds)),
            min_sends=int(num("MIN_SENDS", d.min_sends)),
            failure_ratio=num("FAILURE_RATIO", d.failure_ratio),
            all_failed_seconds=num("ALL_FAILED_SECONDS", d.all_failed_seconds),
            all_failed_min_sends=int(num("ALL_FAILED_MIN_SENDS", d.all_failed_min_sends)),
            probe_base_seconds=num("PROBE_BASE_SECONDS", d.probe_base_seconds),
            probe_multiplier=num("PROBE_MULTIPLIER", d.probe_multiplier),
            probe_cap_seconds=num("PROBE_CAP_SECONDS", d.probe_cap_seconds),
            probe_hold_fraction=num("PROBE_HOLD_FRACTION", d.probe_hold_fraction),
            probe_floor_seconds=num("PROBE_FLOOR_SECONDS", d.probe_floor_seconds),
            probe_lease_seconds=num("PROBE_LEASE_SECONDS", d.probe_lease_seconds),
            disable_after_seconds=num("DISABLE_AFTER_SECONDS", d.disable_after_seconds),
            cache_seconds=num("CACHE_SECONDS", d.cache_seconds),
        )

    def bucket(self, at: float) -> int:
        return int(at // self.bucket_seconds) * self.bucket_seconds

    def probe_interval(self, probes: int, held_seconds: float = math.inf) -> float:
        """The wait after the ``probes``-th failed probe (1, 2, ...) of an endpoint held for
        ``held_seconds``: base, doubling, capped, and within ``probe_hold_fraction`` of the hold so
        far (at least ``probe_floor_seconds``)."""
        exponent = max(0, min(probes, 64) - 1)
        grown = self.probe_base_seconds * self.probe_multiplier**exponent
        within = max(self.probe_floor_seconds, self.probe_hold_fraction * max(0.0, held_seconds))
        return min(self.probe_cap_seconds, grown, within)


@dataclass(frozen=True, slots=True)
class EndpointHealth:
    """One endpoint's health as stored (times in epoch seconds)."""

    endpoint_id: str
    account_id: str = ""
    state: EndpointState = EndpointState.ACTIVE
    tv: int = 0  # transition counter: bumped by every state change
    since: float | None = None  # the last transition
    why: str = ""
    buckets: dict[int, tuple[int, int]] = field(default_factory=dict)  # start -> (ok, failed)
    failing_since: float | None = None  # the first failure since the last answer
    failed_in_row: int = 0
    probes: int = 0  # probes that failed since it was held
    next_probe_at: float | None = None
    probe_until: float | None = None  # a probe in flight until then
    last_error: str = ""

    def window(self, now: float, policy: HealthPolicy) -> tuple[int, int]:
        """(answered, failed) within the sliding window ending at ``now``."""
        start = now - policy.window_seconds
        ok = failed = 0
        for b, (o, f) in self.buckets.items():
            if b + policy.bucket_seconds > start and b <= now:
                ok, failed = ok + o, failed + f
        return ok, failed

    def success_ratio(self, now: float, policy: HealthPolicy) -> float | None:
        ok, failed = self.window(now, policy)
        return None if ok + failed == 0 else ok / (ok + failed)

    def stale_buckets(self, now: float, policy: HealthPolicy) -> list[int]:
        """Buckets that fell out of the window (pruned by the next write)."""
        return [b for b in self.buckets if b + policy.bucket_seconds <= now - policy.window_seconds]

    def probe_due(self, now: float) -> bool:
        return (self.next_probe_at is None or self.next_probe_at <= now) and (
            self.probe_until is None or self.probe_until <= now
        )

    def park_until(self, now: float, policy: HealthPolicy) -> float:
        """When a parked delivery looks again: the next probe, or shortly after a probe in flight."""
        if self.probe_until is not None and self.probe_until > now:
            return now + min(self.probe_until - now, policy.probe_base_seconds)
        if self.next_probe_at is not None and self.next_probe_at > now:
            return self.next_probe_at
        return now + 1.0


def failures_since(history: Sequence[Attempt], since: float) -> int:
    """The failed attempts (the classes counted as failures) a delivery's history shows at or after
    ``since`` (epoch seconds): what its retry backoff grows with once its endpoint resumed then."""
    failed = {o.value for o in FAILURES}
    return sum(
        1
        for a in history
        if a.event == "attempt" and a.outcome in failed and parse_iso(a.at).timestamp() >= since
    )


def should_hold(h: EndpointHealth, now: float, policy: HealthPolicy) -> HealthWhy | None:
    """Whether an active endpoint fails broadly enough to be held now."""
    if h.state is not EndpointState.ACTIVE:
        return None
    ok, failed = h.window(now, policy)
    if ok + failed >= policy.min_sends and failed >= policy.failure_ratio * (ok + failed):
        return HealthWhy.FAILURE_RATIO
    if (
        h.failing_since is not None
        and h.failed_in_row >= policy.all_failed_min_sends
        and now - h.failing_since >= policy.all_failed_seconds
    ):
        return HealthWhy.ALL_FAILED_60S
    return None


def held_past_limit(h: EndpointHealth, now: float, policy: HealthPolicy) -> bool:
    """Held longer than the disable limit: a probe that fails now disables it."""
    return (
        h.state is EndpointState.HELD and h.since is not None and now - h.since > policy.disable_after_seconds
    )


def should_disable(h: EndpointHealth, now: float, policy: HealthPolicy) -> bool:
    """Whether a delivery finding the endpoint held past the disable limit dead-letters at once: only
    if its probes have been failing lately. An endpoint nobody probed for half the disable limit (no
    traffic since it was held: it may have recovered long ago) gets a probe first, and a failed
    probe then disables it (:func:`held_past_limit`)."""
    if not held_past_limit(h, now, policy):
        return False
    idle_after = max(policy.probe_cap_seconds, policy.disable_after_seconds / 2)
    idle = h.next_probe_at is not None and now - h.next_probe_at > idle_after
    return not idle


def observed(
    h: EndpointHealth, now: float, ok: int, failed: int, policy: HealthPolicy, error: str = ""
) -> EndpointHealth:
    """The health after ``ok`` answers and ``failed`` failures (answers first, then the failures)
    recorded at ``now`` — what the store's write computes (the in-memory twin uses it)."""
    buckets = {b: c for b, c in h.buckets.items() if b not in set(h.stale_buckets(now, policy))}
    b = policy.bucket(now)
    o, f = buckets.get(b, (0, 0))
    buckets[b] = (o + ok, f + failed)
    failing_since, in_row = h.failing_since, h.failed_in_row
    if ok:
        failing_since, in_row = None, 0
    if failed:
        failing_since = now if failing_since is None else failing_since
        in_row += failed
    return replace(
        h,
        buckets=buckets,
        failing_since=failing_since,
        failed_in_row=in_row,
        last_error=error or h.last_error,
    )


def transitioned(
    h: EndpointHealth, state: EndpointState, why: HealthWhy, now: float, policy: HealthPolicy
) -> EndpointHealth:
    """The health after a transition: ``tv`` bumped; held starts the probe schedule; active and
    disabled clear the window."""
    held = state is EndpointState.HELD
    return replace(
        h,
        state=state,
        tv=h.tv + 1,
        since=now,
        why=why.value,
        buckets={} if not held else h.buckets,
        failing_since=None if not held else h.failing_since,
        failed_in_row=0 if not held else h.failed_in_row,
        probes=0,
        next_probe_at=now + policy.probe_base_seconds if held else None,
        probe_until=None,
    )
