"""Counting wrappers around the in-memory backends: every AWS API call the real services make is
counted per operation and per cost step, DynamoDB read/write units are computed from item sizes,
and each call moves the virtual clock by its modelled latency.

Cost steps: create (the reminder row), index (due-index writes of the GSI), dispatch, consume
(queue receive/delete/visibility and the delivery Lambda), claim, record, watchdog.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import MemorySqs, Received, _Message, _Queue
from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import ClaimResult, Cursor, IndexEntry, IndexKey

from .model import Latency, SimClock, item_size, read_units, write_units

STEPS = ("create", "index", "dispatch", "consume", "claim", "record", "watchdog")


class Meter:
    def __init__(self, clock: SimClock, latency: Latency) -> None:
        self.clock = clock
        self.latency = latency
        self.step = "create"
        self.calls: Counter[tuple[str, str, str]] = Counter()  # (service, operation, step)
        self.units: defaultdict[tuple[str, str], float] = defaultdict(float)  # (WRU|RRU|GSI_WRU, step)
        self.busy: defaultdict[str, float] = defaultdict(float)  # modelled seconds in calls, per step
        self.invocations: Counter[tuple[str, str]] = Counter()  # (function, step)
        self.gb_seconds: defaultdict[tuple[str, str], float] = defaultdict(float)  # (function, step)

    @contextmanager
    def stepping(self, step: str) -> Iterator[None]:
        previous, self.step = self.step, step
        try:
            yield
        finally:
            self.step = previous

    def call(self, service: str, op: str, seconds: float, step: str | None = None) -> None:
        s = step or self.step
        self.calls[(service, op, s)] += 1
        if seconds:
            self.clock.advance(seconds)
            self.busy[s] += seconds

    def add_units(self, kind: str, units: float, step: str | None = None) -> None:
        self.units[(kind, step or self.step)] += units

    def lambda_run(self, function: str, seconds: float, memory_mb: int, step: str) -> None:
        self.invocations[(function, step)] += 1
        self.gb_seconds[(function, step)] += max(0.001, seconds) * memory_mb / 1024

    def calls_by_op(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (service, op, _), n in self.calls.items():
            out[f"{service}:{op}"] += n
        return out


# -- DynamoDB ---------------------------------------------------------------------------------------


def _projected_size(pk: str, entry: IndexEntry) -> int:
    """Size of one item of the ``due`` GSI (keys, table keys, rid, v, chs, w)."""
    rid = entry.reminder_id
    return (
        3 + len(pk) + 3 + len(entry.sort_key)  # gpk, gsk
        + 2 + len(rid) + 2 + 2 + 1  # pk "R#<id>", sk "R"
        + 3 + len(rid) + 1 + 2 + 3  # rid, v
        + 3 + 3 + sum(len(c) + 1 for c in entry.channels) + 1 + 1  # chs, w
    )  # fmt: skip


class MeteredStore:
    """A ReminderStore over :class:`MemoryReminderStore` that counts calls and capacity units.

    ``size_every`` > 1 computes item sizes on every n-th write of each operation only (items of one
    workload are alike) and reuses the last figure in between: large runs stay fast."""

    def __init__(self, inner: MemoryReminderStore, meter: Meter, *, size_every: int = 1) -> None:
        self.inner = inner
        self.meter = meter
        self.size_every = max(1, size_every)
        self._seen: Counter[str] = Counter()
        self._last_units: dict[str, float] = {}

    # -- helpers -------------------------------------------------------------------------------
    def _step(self, op: str) -> str:
        step = self.meter.step
        if step == "consume":
            return "claim" if op in ("claim", "claim_expired") else "record"
        return step

    def _size(self, rid: str) -> int:
        item = self.inner.items.get(rid)
        return item_size(item) if item is not None else 0

    def _write(self, op: str, rid: str, fn: Callable[[], Any]) -> Any:
        """Run a write; WRU = size of the larger of the item before and after, >= 1."""
        step = self._step(op)
        lat = self.meter.latency.ddb_write
        self._seen[op] += 1
        sample = self._seen[op] % self.size_every == 1 or self.size_every == 1 or op not in self._last_units
        before_gsi = self._gsi_key(rid)
        if sample:
            before = self._size(rid)
            result = fn()
            units = float(write_units(max(before, self._size(rid))))
            self._last_units[op] = units
        else:
            result = fn()
            units = self._last_units[op]
        self.meter.call("dynamodb", "PutItem" if op == "put_new" else "UpdateItem", lat, step)
        self.meter.add_units("WRU", units, step)
        after_gsi = self._gsi_key(rid)
        if after_gsi != before_gsi and after_gsi is not None:
            # A new GSI item, or a changed key (delete + put), or a changed projected attribute.
            writes = 1 if before_gsi is None or before_gsi[:2] == after_gsi[:2] else 2
            self.meter.add_units("GSI_WRU", writes, "index" if step == "create" else step)
        return result

    def _gsi_key(self, rid: str) -> tuple[Any, ...] | None:
        item = self.inner.items.get(rid)
        if item is None or "gpk" not in item:
            return None
        return (item["gpk"], item["gsk"], item.get("v"), item.get("w"), tuple(item.get("chs", ())))

    # -- ReminderStore -------------------------------------------------------------------------
    def put_new(self, reminder: Reminder, index: IndexKey) -> bool:
        return bool(self._write("put_new", reminder.id, lambda: self.inner.put_new(reminder, index)))

    def get(self, reminder_id: str) -> Reminder | None:
        step = self._step("get")
        self.meter.call("dynamodb", "GetItem", self.meter.latency.ddb_read, step)
        self.meter.add_units("RRU", read_units(self._size(reminder_id), consistent=True), step)
        return self.inner.get(reminder_id)

    def batch_get(
        self, reminder_ids: Sequence[str], *, unreadable: list[str] | None = None
    ) -> list[Reminder]:
        step = self._step("batch_get")
        ids = list(dict.fromkeys(reminder_ids))
        for _ in range(0, len(ids), 100):
            self.meter.call("dynamodb", "BatchGetItem", self.meter.latency.ddb_batch_get, step)
        units = sum(read_units(self._size(r), consistent=False) for r in ids if r in self.inner.items)
        self.meter.add_units("RRU", units, step)
        return self.inner.batch_get(ids, unreadable=unreadable)

    def claim(
        self,
        reminder_id: str,
        channel_id: str,
        version: int,
        worker: str,
        now: datetime,
        lease_until: datetime,
        parked_lease: str | None = None,
    ) -> ClaimResult:
        result: ClaimResult = self._write(
            "claim",
            reminder_id,
            lambda: self.inner.claim(
                reminder_id, channel_id, version, worker, now, lease_until, parked_lease
            ),
        )
        return result

    def claim_expired(
        self,
        reminder_id: str,
        channel_id: str,
        delivery: Delivery,
        worker: str,
        now: datetime,
        lease_until: datetime,
    ) -> ClaimResult:
        result: ClaimResult = self._write(
            "claim_expired",
            reminder_id,
            lambda: self.inner.claim_expired(reminder_id, channel_id, delivery, worker, now, lease_until),
        )
        if not result.claimed and result.reminder is not None:
            # DynamoReminderStore reads the row again after a refused take-over
            self.meter.call("dynamodb", "GetItem", self.meter.latency.ddb_read, self._step("get"))
            self.meter.add_units(
                "RRU", read_units(self._size(reminder_id), consistent=True), self._step("get")
            )
        return result

    def save_delivery(
        self,
        reminder_id: str,
        delivery: Delivery,
        expected_rev: int,
        *,
        lease_owner: str | None = None,
        version: int | None = None,
    ) -> bool:
        return bool(
            self._write(
                "save_delivery",
                reminder_id,
                lambda: self.inner.save_delivery(
                    reminder_id, delivery, expected_rev, lease_owner=lease_owner, version=version
                ),
            )
        )

    def save_reminder(self, reminder: Reminder, expected: dict[str, int], index: IndexKey | None) -> bool:
        return bool(
            self._write(
                "save_reminder", reminder.id, lambda: self.inner.save_reminder(reminder, expected, index)
            )
        )

    def move_index(
        self, reminder_id: str, index: IndexKey, *, version: int | None = None, from_sk: str | None = None
    ) -> bool:
        return bool(
            self._write(
                "move_index",
                reminder_id,
                lambda: self.inner.move_index(reminder_id, index, version=version, from_sk=from_sk),
            )
        )

    def query_index(self, pk: str, after: str, until: str, limit: int) -> tuple[list[IndexEntry], bool]:
        step = self.meter.step
        self.meter.call("dynamodb", "Query", self.meter.latency.ddb_query, step)
        entries, more = self.inner.query_index(pk, after, until, limit)
        size = sum(_projected_size(pk, e) for e in entries)
        self.meter.add_units("RRU", read_units(size, consistent=False), step)
        return entries, more

    def acquire_cursor(self, shard: int, worker: str, now: datetime, lease_until: datetime) -> Cursor | None:
        self.meter.call("dynamodb", "UpdateItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1)
        return self.inner.acquire_cursor(shard, worker, now, lease_until)

    def ensure_cursor(self, shard: int, start: datetime) -> bool:
        self.meter.call("dynamodb", "PutItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1)
        return self.inner.ensure_cursor(shard, start)

    def get_cursor(self, shard: int) -> Cursor | None:
        self.meter.call("dynamodb", "GetItem", self.meter.latency.ddb_read)
        self.meter.add_units("RRU", 1)
        return self.inner.get_cursor(shard)

    def save_cursor(self, cursor: Cursor, release: bool = False) -> bool:
        self.meter.call("dynamodb", "UpdateItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1)
        return self.inner.save_cursor(cursor, release)

    def reference_now(self) -> datetime | None:
        return self.inner.reference_now()

    def get_controls(self) -> dict[str, Any]:
        self.meter.call("dynamodb", "GetItem", self.meter.latency.ddb_read)
        self.meter.add_units("RRU", 0.5)
        return self.inner.get_controls()

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.meter.call("dynamodb", "PutItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1)
        self.inner.set_controls(controls)

    def raise_shard_high_water(self, shards: int) -> None:
        self.meter.call("dynamodb", "UpdateItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1)
        self.inner.raise_shard_high_water(shards)


# -- SQS --------------------------------------------------------------------------------------------

_SQS_LATENCY = {
    "SendMessage": "sqs_send",
    "SendMessageBatch": "sqs_send",
    "DeleteMessage": "sqs_delete",
    "DeleteMessageBatch": "sqs_delete",
    "ChangeMessageVisibility": "sqs_change_visibility",
}


class MeteredSqs(MemorySqs):
    """:class:`MemorySqs` that bills each call to the current step, moves the virtual clock by the
    call's latency (receives and the event source's deletes are made by Lambda's pollers, not on a
    function's clock), and tells the simulator when a message becomes visible."""

    def __init__(self, clock: SimClock, meter: Meter) -> None:
        super().__init__(clock.time)
        self.meter = meter
        self.on_visible: Callable[[str, float], None] | None = None
        self.poller = False  # True while Lambda's pollers (not a function) make the call

    def _count(self, op: str) -> None:
        super()._count(op)
        if op == "ReceiveMessage":
            return  # counted by receive() once its result is known
        step = self.meter.step
        if step == "consume" and op.startswith("Send"):
            step = "record"  # a renewal or a DLQ message written by the delivery function
        seconds = 0.0 if self.poller else getattr(self.meter.latency, _SQS_LATENCY.get(op, "sqs_send"))
        self.meter.call("sqs", op, seconds, step)

    def receive(
        self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None
    ) -> list[Received]:
        got = super().receive(queue, max_messages, visibility_timeout)
        self.meter.call("sqs", "ReceiveMessage" if got else "ReceiveMessage(empty)", 0.0)
        return got

    def _push(self, q: _Queue, m: _Message) -> None:
        super()._push(q, m)
        if self.on_visible is not None:
            self.on_visible(q.name, m.visible_at)


class SimTelemetry:
    """Counts what the services count (lease expiries, duplicates suppressed, ...)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.counts[name] += int(value)

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        return None

    def log(self, action: str, **fields: Any) -> None:
        return None
