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
