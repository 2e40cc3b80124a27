"""A host's clock corrected by the store's (issue 25 item 7).

Every component that turns a time into a due index entry or a delay reads "now" from its own clock
corrected by ``ReminderStore.reference_now`` (DynamoDB's ``Date`` header, advanced by the local
monotonic clock since), as the dispatcher does (services/dispatch.py): an offset up to
``SKEW_TOLERANCE_SECONDS`` is within the header's resolution and ignored, a larger one is applied.
With no reference yet (no response seen) the host's own clock is used.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..domain.ports import Clock, ReminderStore

SKEW_TOLERANCE_SECONDS = 1.0  # as the dispatcher's: the Date header has whole seconds


class StoreCorrectedClock:
    """``now()``: the wrapped clock plus the store's measured offset (re-measured at every call: a
    local computation, no store call)."""

    def __init__(self, clock: Clock, store: ReminderStore) -> None:
        self.clock = clock
        self.store = store
        self.skew = timedelta(0)

    def now(self) -> datetime:
        local = self.clock.now()
        reference = getattr(self.store, "reference_now", lambda: None)()
        if reference is not None:
            skew = (reference - local).total_seconds()
            self.skew = timedelta(seconds=skew) if abs(skew) > SKEW_TOLERANCE_SECONDS else timedelta(0)
        return local + self.skew

    def __getattr__(self, name: str) -> object:  # sleep, advance: the wrapped clock's
        return getattr(self.clock, name)


#: ``ReminderStore.reference_now`` is the middle of the ``Date`` header's second; the header's own
#: value (the start of that second) is this much earlier.
REFERENCE_MIDPOINT_SECONDS = 0.5


class StoreFloorClock:
    """The delivery consumer's clock (its claims compare due times with it): between a LOWER and an
    UPPER bound of the store's time.

    The lower bound is the ``Date`` header's value itself (``reference_now`` less its mid-second
    estimate), advanced by the local monotonic clock since the response: the server's clock read at
    least that when it answered, and at least as much time has passed since. When it is ahead of the
    local clock by more than ``SKEW_TOLERANCE_SECONDS`` it is used. The upper bound is the end of the
    header's second (``reference_now`` plus the same half second), advanced likewise: when the local
    clock is ahead of it, it is used (issue 26: a consumer 300 s fast claimed a copy of a message
    visible before due and sent it 300 s early). Otherwise (local clock right, or no reference yet)
    the local clock is. A claim by this clock is never early when the local clock is not ahead of
    the store's, and at most the header's resolution (1 s) early when it is."""

    def __init__(self, clock: Clock, store: ReminderStore) -> None:
        self.clock = clock
        self.store = store

    def now(self) -> datetime:
        local = self.clock.now()
        reference = getattr(self.store, "reference_now", lambda: None)()
        if reference is None:
            return local
        floor = reference - timedelta(seconds=REFERENCE_MIDPOINT_SECONDS)
        if (floor - local).total_seconds() > SKEW_TOLERANCE_SECONDS:
            return floor
        ceiling = reference + timedelta(seconds=REFERENCE_MIDPOINT_SECONDS)
        return min(local, ceiling)

    def __getattr__(self, name: str) -> object:  # sleep, advance: the wrapped clock's
        return getattr(self.clock, name)
