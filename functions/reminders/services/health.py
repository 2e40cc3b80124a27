"""Endpoint health, the use case the deliverer asks before and tells after every webhook send
(issue 16). The rules are domain/health.py; the item is adapters/health_store.py.

- ``admit``: send, probe (this delivery won the one probe lease), park (held: look again at the
  returned time, no attempt spent) or disabled (dead-letter ``endpoint_disabled``). Held past the
  disable limit moves the endpoint to ``disabled`` here.
- ``observe``: count the outcome; hold the endpoint when its window fails broadly; a probe's answer
  resumes it, a probe's failure schedules the next probe (interval growing, capped); a receiver's
  ``webhook-delivery: disable`` disables it.

Write cost: a failure is one ``ADD`` (with the answers this consumer counted since its last write);
an answer writes nothing while the endpoint is active and the consumer's view of the window shows no
failure; with failures in the window, answers are flushed in groups (at most every
``bucket_seconds`` or ``min_sends`` answers, else with the next failure). Reads: one per endpoint per
``cache_seconds`` per consumer instance. The consumers of one batch run in threads: the cache and
the pending counts are guarded by one lock.

Every call names the delivery's account, and the view is (account, endpoint) (issue 24): an item
another account owns is no health of this delivery's — it neither governs it (no hold, no probe)
nor is written by it (the store's writes are conditional on the owner, fixed at the endpoint's
creation), so one account's failures never hold, disable or report another account's endpoint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from ..domain.health import (
    EndpointHealth,
    EndpointState,
    HealthPolicy,
    HealthWhy,
    counts_against,
    held_past_limit,
    should_disable,
    should_hold,
)
from ..domain.ports import Telemetry
from ..domain.retry import STEERING_DISABLE, OutcomeClass, SendResult


class HealthStore(Protocol):
    def get(self, endpoint_id: str, consistent: bool = True) -> EndpointHealth | None: ...

    def own(self, endpoint_id: str, account_id: str) -> None: ...

    def record(
        self,
        endpoint_id: str,
        account_id: str,
        now: float,
        ok: int,
        failed: int,
        error: str = "",
        prune: list[int] | tuple[int, ...] = (),
    ) -> EndpointHealth | None: ...

    def transition(
        self, current: EndpointHealth, state: EndpointState, why: HealthWhy, now: float, account_id: str = ""
    ) -> EndpointHealth | None: ...

    def take_probe(self, current: EndpointHealth, now: float) -> EndpointHealth | None: ...

    def probe_failed(self, current: EndpointHealth, now: float, error: str) -> EndpointHealth | None: ...


class Admission(StrEnum):
    SEND = "send"
    PROBE = "probe"
    PARK = "park"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class Admit:
    kind: Admission
    until: float | None = None  # PARK: when to look again (epoch seconds)
    health: EndpointHealth | None = None  # PROBE: the leased image (its tv)


SEND = Admit(Admission.SEND)


@dataclass(slots=True)
class _Pending:
    ok: int = 0
    since: float = 0.0


class EndpointHealthGuard:
    def __init__(
        self,
        *,
        store: HealthStore,
        policy: HealthPolicy,
        telemetry: Telemetry,
        on_transition: Callable[[EndpointHealth], None] | None = None,
    ) -> None:
        self.store = store
        self.policy = policy
        self.telemetry = telemetry
        self.on_transition = on_transition
        #: (account, endpoint) -> (when read, the item if that account owns it, else None)
        self._cache: dict[tuple[str, str], tuple[float, EndpointHealth | None]] = {}
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._lock = threading.Lock()
        self.sends = 0  # outcomes observed (for the bench's writes per send)

    # -- the consumer's view -------------------------------------------------------------------
    def view(
        self, endpoint_id: str, account_id: str, now: float, *, consistent: bool = False
    ) -> EndpointHealth | None:
        """The endpoint's health as this account's deliveries see it (None: none, or not its own).
        ``consistent``: read the item as last written, past the cache (the support desk's preview:
        a stale image once promised a dead letter for a delivery then sent, the explorer's seed 36)."""
        with self._lock:
            hit = self._cache.get((account_id, endpoint_id))
        if not consistent and hit is not None and now - hit[0] < self.policy.cache_seconds:
            return hit[1]
        return self._remember(
            endpoint_id, account_id, self.store.get(endpoint_id, consistent=consistent), now
        )

    def _remember(
        self, endpoint_id: str, account_id: str, h: EndpointHealth | None, now: float
    ) -> EndpointHealth | None:
        if h is not None and h.account_id and h.account_id != account_id:
            h = None  # another account's item: never this delivery's health
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[(account_id, endpoint_id)] = (now, h)
        return h

    def _transition(
        self, h: EndpointHealth, state: EndpointState, why: HealthWhy, now: float, account_id: str = ""
    ) -> EndpointHealth | None:
        owner = account_id or h.account_id
        moved = self.store.transition(h, state, why, now, owner)
        if moved is None:  # someone else moved it first: read what it is now
            self._remember(h.endpoint_id, owner, self.store.get(h.endpoint_id), now)
            return None
        self._remember(h.endpoint_id, owner, moved, now)
        self.telemetry.count("endpoint_transition", state=state.value, why=why.value)
        self.telemetry.log(
            "endpoint_transition", endpoint_id=h.endpoint_id, state=state.value, why=why.value, tv=moved.tv
        )
        if self.on_transition is not None:
            self.on_transition(moved)
        return moved

    def resumed_at(self, endpoint_id: str, account_id: str, now: float) -> float | None:
        """When the endpoint last became active again (a probe's answer or an operator), from the
        consumer's view; None while it was never held or is not active."""
        h = self.view(endpoint_id, account_id, now)
        return h.since if h is not None and h.state is EndpointState.ACTIVE else None

    # -- before a send -------------------------------------------------------------------------
    def admit(self, endpoint_id: str, account_id: str, now: float) -> Admit:
        h = self.view(endpoint_id, account_id, now)
        if h is not None and h.state is EndpointState.DISABLED:
            # Terminal for the delivery (endpoint_disabled): never on a cached or eventually
            # consistent view, which may predate an operator's enable (issue 25 item 8).
            h = self._remember(endpoint_id, account_id, self.store.get(endpoint_id), now)
        if h is not None and (why := should_hold(h, now, self.policy)) is not None:
            # Every send failed for 60 s by now (the last ones long ago): held before this one goes.
            h = self._transition(h, EndpointState.HELD, why, now, account_id) or self.view(
                endpoint_id, account_id, now
            )
        if h is None or h.state is EndpointState.ACTIVE:
            return SEND
        if should_disable(h, now, self.policy):
            h = self._transition(
                h, EndpointState.DISABLED, HealthWhy.HELD_PAST_DISABLE_LIMIT, now, account_id
            ) or self.view(endpoint_id, account_id, now)
            if h is None or h.state is EndpointState.ACTIVE:
                return SEND
        if h.state is EndpointState.DISABLED:
            return Admit(Admission.DISABLED)
        if h.probe_due(now):
            won = self.store.take_probe(h, now)
            if won is not None:
                self._remember(endpoint_id, account_id, won, now)
                self.telemetry.count("endpoint_probe")
                return Admit(Admission.PROBE, health=won)
            fresh = self._remember(endpoint_id, account_id, self.store.get(endpoint_id), now)
            if fresh is None or fresh.state is EndpointState.ACTIVE:
                return SEND
            if fresh.state is EndpointState.DISABLED:
                return Admit(Admission.DISABLED)
            h = fresh
        return Admit(Admission.PARK, until=h.park_until(now, self.policy))

    def parked(self, endpoint_id: str, account_id: str, now: float) -> float | EndpointHealth | None:
        """The pre-claim check of a parked message: the time to look again while the endpoint stays
        held; the leased image when a probe is due and this message won the lease; None when the
        delivery should be judged (claimed) now (active, disabled, or held past the limit)."""
        h = self.view(endpoint_id, account_id, now)
        if h is None or h.state is not EndpointState.HELD or should_disable(h, now, self.policy):
            return None
        if h.probe_due(now):
            won = self.store.take_probe(h, now)
            if won is not None:
                self._remember(endpoint_id, account_id, won, now)
                self.telemetry.count("endpoint_probe")
                return won
            h = self._remember(endpoint_id, account_id, self.store.get(endpoint_id), now)
            if h is None or h.state is not EndpointState.HELD:
                return None
        return h.park_until(now, self.policy)

    # -- after a send --------------------------------------------------------------------------
    def observe(
        self, endpoint_id: str, account_id: str, result: SendResult, now: float, probe: EndpointHealth | None
    ) -> EndpointHealth | None:
        """Count one send's outcome; returns the endpoint's health when this call learnt it."""
        kind = counts_against(result)
        with self._lock:
            self.sends += 1
        accepted = result.outcome in (OutcomeClass.ACCEPTED, OutcomeClass.RECONCILED_CONFLICT)
        if result.steering == STEERING_DISABLE and not accepted:
            return self._receiver_disable(endpoint_id, account_id, now)
        if probe is not None and (probe.endpoint_id, probe.account_id) != (endpoint_id, account_id):
            probe = None  # a lease on another account's item (or endpoint) is never this one's probe
        if probe is not None:
            if kind == "ok":
                resumed = HealthWhy.PROBE_SUCCEEDED
                return self._transition(probe, EndpointState.ACTIVE, resumed, now, account_id)
            if kind == "":  # failed on our side: not a failed probe (its lease expires; probe again)
                return None
            failed = self.store.probe_failed(probe, now, result.outcome.value)
            if failed is not None:
                self._remember(endpoint_id, account_id, failed, now)
                if failed.since is not None:
                    self.telemetry.observe("endpoint_held_seconds", now - failed.since)
                if held_past_limit(failed, now, self.policy):
                    disabled = self._transition(
                        failed, EndpointState.DISABLED, HealthWhy.HELD_PAST_DISABLE_LIMIT, now, account_id
                    )
                    return disabled or failed
            return failed
        if kind == "":
            return None
        if kind == "ok":
            return self._answered(endpoint_id, account_id, now)
        key = (account_id, endpoint_id)
        with self._lock:
            pending = self._pending.pop(key, None)
            cached = self._cache.get(key)
        stale = cached[1].stale_buckets(now, self.policy) if cached and cached[1] else []
        h = self.store.record(
            endpoint_id, account_id, now, pending.ok if pending else 0, 1, result.outcome.value, stale
        )
        self._remember(endpoint_id, account_id, h, now)
        if h is None:
            return None  # another account's item: nothing counted
        why = should_hold(h, now, self.policy)
        if why is not None:
            return self._transition(h, EndpointState.HELD, why, now, account_id) or h
        return h

    def _answered(self, endpoint_id: str, account_id: str, now: float) -> EndpointHealth | None:
        key = (account_id, endpoint_id)
        with self._lock:
            cached = self._cache.get(key)
            h = cached[1] if cached else None
            failing = h is not None and (
                h.state is not EndpointState.ACTIVE
                or h.window(now, self.policy)[1] > 0
                or h.failed_in_row > 0
            )
            p = self._pending.setdefault(key, _Pending(0, now))
            if p.ok == 0 or now - p.since > self.policy.window_seconds:
                p.ok, p.since = 0, now  # answers older than the window tell nothing
            p.ok += 1
            if not failing:
                return None  # kept for the next failure's write (the window's answers)
            streak = h is not None and h.failed_in_row > 0
            if not (streak or p.ok >= self.policy.min_sends or now - p.since >= self.policy.bucket_seconds):
                return None
            ok = p.ok
            del self._pending[key]
        stale = h.stale_buckets(now, self.policy) if h else []
        fresh = self.store.record(endpoint_id, account_id, now, ok, 0, "", stale)
        return self._remember(endpoint_id, account_id, fresh, now)

    def _receiver_disable(self, endpoint_id: str, account_id: str, now: float) -> EndpointHealth | None:
        for _ in range(3):
            h = self.store.get(endpoint_id) or EndpointHealth(endpoint_id, account_id)
            if h.account_id and h.account_id != account_id:
                return None  # another account's endpoint: its receiver's answer is not this one's
            if h.state is EndpointState.DISABLED:
                return self._remember(endpoint_id, account_id, h, now)
            moved = self._transition(h, EndpointState.DISABLED, HealthWhy.RECEIVER_DISABLE, now, account_id)
            if moved is not None:
                return moved
        return None

    # -- the operator ----------------------------------------------------------------------------
    def set_state(
        self, endpoint_id: str, account_id: str, state: EndpointState, now: float
    ) -> EndpointHealth:
        """Enable (``active``: the window cleared) or disable an endpoint (``why=operator``).
        ``account_id``: the endpoint's own (its owner's item; one another account's deliveries wrote
        before issue 24 is replaced)."""
        for _ in range(5):
            h = self.store.get(endpoint_id) or EndpointHealth(endpoint_id, account_id)
            if h.account_id and h.account_id != account_id:
                self.store.own(endpoint_id, account_id)
                continue
            if h.state is state:
                return h
            moved = self._transition(h, state, HealthWhy.OPERATOR, now, account_id)
            if moved is not None:
                return moved
        raise RuntimeError("endpoint health kept moving")


def writes_of(store: Any) -> int:
    """The store's write count (both stores count their writes)."""
    return int(getattr(store, "writes", 0))


# -- what an operator sees (GET /endpoints/{id}) ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class HealthReport:
    state: str
    why: str
    since: float | None
    transitions: int
    recent_success_ratio: float | None
    backlog: int
    oldest_pending_age_seconds: float | None
    last_error_class: str
    next_probe_at: float | None


def backlog(endpoints: Any, endpoint_id: str, now: float) -> tuple[int, float | None]:
    """The non-terminal deliveries naming the endpoint (the uses a delete counts) and the age of the
    oldest (since its due time or its cycle's start). Read-only."""
    from ..domain.schedule import parse_iso

    uses = endpoints.store.uses(endpoint_id)
    if not uses:
        return 0, None
    rows = {r.id: r for r in endpoints.reminders.batch_get(sorted({rid for rid, _, _ in uses}))}
    count, oldest = 0, None
    for rid, cid, _ in uses:
        r = rows.get(rid)
        d = r.deliveries.get(cid) if r else None
        if r is None or d is None or d.state.terminal or d.destination != endpoint_id:
            continue
        count += 1
        started = parse_iso(d.cycle_started_at).timestamp() if d.cycle_started_at else r.due_at.timestamp()
        age = max(0.0, now - started)
        oldest = age if oldest is None else max(oldest, age)
    return count, oldest


def report(
    guard: EndpointHealthGuard, endpoints: Any, endpoint_id: str, now: float, account_id: str = ""
) -> HealthReport:
    """``account_id``: the endpoint's owner; an item another account's deliveries wrote (before the
    owner was fixed at creation) is not its health and is shown as none."""
    h = guard.store.get(endpoint_id) or EndpointHealth(endpoint_id)
    if account_id and h.account_id and h.account_id != account_id:
        h = EndpointHealth(endpoint_id, account_id)
    count, oldest = backlog(endpoints, endpoint_id, now)
    return HealthReport(
        state=h.state.value,
        why=h.why,
        since=h.since,
        transitions=h.tv,
        recent_success_ratio=h.success_ratio(now, guard.policy),
        backlog=count,
        oldest_pending_age_seconds=oldest,
        last_error_class=h.last_error,
        next_probe_at=h.next_probe_at if h.state is EndpointState.HELD else None,
    )
