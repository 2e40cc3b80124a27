"""In-memory ReminderStore with the same conditional-write semantics as DynamoDB (the stub beside
the real backend). Items are kept in their stored (codec) form so sizes and isolation match.
Used by unit tests and the simulator; proven equivalent by the store contract tests."""

from __future__ import annotations

import bisect
import threading
from collections import ChainMap
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..domain.models import Delivery, Reminder
from ..domain.ports import ROW_ERRORS, ClaimResult, Clock, Cursor, IndexedRow, IndexEntry, IndexKey
from ..domain.schedule import SHARD_HIGH_WATER, bucket_of, iso
from ..domain.states import CLAIMABLE, DeliveryState
from .codec import (
    ATTENTION_PK,
    ATTENTION_SK,
    DERIVED,
    TIME_FIELDS,
    cursor_from_item,
    cursor_item,
    delivery_to_map,
    derived_of_item,
    index_attributes,
    index_entry,
    refuse_empty_range,
    reminder_from_item,
    reminder_to_item,
)
from .dynamodb import CURSOR_START_BACK_SECONDS
from .lost_answers import LostAnswers
from .stale_reads import MISSING, StaleImages

_CLAIMABLE = {s.value for s in CLAIMABLE}
_CONTROLS = "#controls"  # the control item's key among the stale images


def _keys(derived: dict[str, Any]) -> dict[str, Any]:
    return {k: derived[k] for k in (ATTENTION_PK, ATTENTION_SK) if k in derived}


def _index_writes(have: dict[str, Any], want: dict[str, Any]) -> int:
    """GSI writes of a change of the indexed attributes: 0 same, 1 added or removed, 2 moved."""
    if have == want:
        return 0
    return 2 if have and want else 1


class MemoryReminderStore(LostAnswers):
    def __init__(
        self, *, cursor_start_back_seconds: int = CURSOR_START_BACK_SECONDS, clock: Clock | None = None
    ) -> None:
        """``clock`` is the store's own clock (the reference time), separate from its callers' clocks."""
        self.clock = clock
        self.items: dict[str, dict[str, Any]] = {}
        self.index: dict[str, list[tuple[str, str]]] = {}  # gpk -> sorted [(gsk, rid)]
        self.cursors: dict[int, dict[str, Any]] = {}
        self.controls: dict[str, Any] = {}
        self.cursor_start_back = timedelta(seconds=cursor_start_back_seconds)
        self.lock = threading.RLock()
        self.writes = 0
        self.reads = 0
        self.attention_writes = 0  # extra table writes that only settle the attention attributes
        self.attention_index_writes = 0  # writes to the sparse attention GSI (put 1, move 2, remove 1)
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose
        #: fault mode (issue 26): the reads the DynamoDB adapter makes without ConsistentRead (the
        #: controls' get, BatchGetItem, the due and attention GSIs' queries) see
        #: an item as it was up to ``stale.lag`` writes ago; every other read is consistent
        self.stale = StaleImages()

    # -- fault mode: the lost answer ------------------------------------------------------------
    # (adapters/lost_answers.py) operations: ``put_new``, ``save_delivery``, ``save_reminder``,
    # ``claim``, ``claim_expired``, ``move_index``, ``save_cursor``. Each answers as the adapter's retry
    # would: refused when the retry fails the write's own condition (a claim: no longer claimable; a
    # take-over: the rev moved; a move from a sort key; a cursor released), as written otherwise.
    def _answer_lost(self, operation: str) -> bool:
        lost = super()._answer_lost(operation)
        self.writes += lost  # botocore's retry, refused
        return lost

    # -- fault mode: eventually consistent reads ---------------------------------------------------
    def _written(self, reminder_id: str) -> None:
        """Before a write of ``reminder_id`` lands: its image for the eventually consistent reads."""
        self.stale.written(reminder_id, self.items.get(reminder_id))

    def _eventual(self, reminder_id: str) -> dict[str, Any] | None:
        old = self.stale.eventual(reminder_id)
        return self.items.get(reminder_id) if old is MISSING else old

    def eventual_items(self) -> dict[str, dict[str, Any]]:
        """Every reminder row as an eventually consistent read (a GSI query, a scan) may see it."""
        with self.lock:
            lagging = [k for k in self.stale.lagging() if k != _CONTROLS]
            if not lagging:
                return dict(self.items)
            out = dict(self.items)
            for rid in lagging:
                item = self._eventual(rid)
                if item is None:
                    out.pop(rid, None)
                else:
                    out[rid] = item
            return out

    # -- index maintenance ---------------------------------------------------------------------
    def _unindex(self, item: dict[str, Any]) -> None:
        if "gpk" in item:
            rows = self.index.get(item["gpk"], [])
            i = bisect.bisect_left(rows, (item["gsk"], item["rid"]))
            if i < len(rows) and rows[i] == (item["gsk"], item["rid"]):
                rows.pop(i)

    def _reindex(self, item: dict[str, Any], index: IndexKey) -> None:
        self._unindex(item)
        item.update(index_attributes(index))
        bisect.insort(self.index.setdefault(index.pk, []), (index.sk, item["rid"]))

    # -- reminders ------------------------------------------------------------------------------
    def put_new(self, reminder: Reminder, index: IndexKey) -> bool:
        with self.lock:
            self.writes += 1
            if reminder.id in self.items:
                return False
            item = reminder_to_item(reminder)
            self._written(reminder.id)
            self.items[reminder.id] = item
            self._reindex(item, index)
            return not self._answer_lost("put_new")

    def get(self, reminder_id: str) -> Reminder | None:
        with self.lock:
            self.reads += 1
            item = self.items.get(reminder_id)
            return reminder_from_item(item) if item else None

    def batch_get(
        self, reminder_ids: Sequence[str], *, unreadable: list[str] | None = None
    ) -> list[Reminder]:
        with self.lock:
            self.reads += len(reminder_ids)
            out = []
            for r in dict.fromkeys(reminder_ids):  # BatchGetItem: eventually consistent
                item = self._eventual(r)
                if item is None:
                    continue
                try:
                    out.append(reminder_from_item(item))
                except ROW_ERRORS:
                    if unreadable is None:
                        raise
                    unreadable.append(r)
            return out

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
        with self.lock:
            self.writes += 1
            item = self.items.get(reminder_id)
            if item is None:
                return ClaimResult(False, None)
            d = item["dl"].get(channel_id)
            now_s = iso(now)
            ok = (
                d is not None
                and item["v"] == version
                and item["due"] <= now_s
                and d["st"] in _CLAIMABLE
                and ("na" not in d or d["na"] <= now_s)
                and ("pu" not in d or d["pu"] <= now_s or d["pu"] == parked_lease)
            )
            if not ok:
                return ClaimResult(False, reminder_from_item(item))
            assert d is not None
            self._written(reminder_id)
            d.update(st=DeliveryState.SENDING.value, lo=worker, lu=iso(lease_until), rev=d["rev"] + 1)
            # lost: the retry's condition fails (sending is not claimable), ALL_OLD is the row as claimed
            return ClaimResult(not self._answer_lost("claim"), reminder_from_item(item))

    def claim_expired(
        self,
        reminder_id: str,
        channel_id: str,
        delivery: Delivery,
        worker: str,
        now: datetime,
        lease_until: datetime,
    ) -> ClaimResult:
        with self.lock:
            self.writes += 1
            item = self.items.get(reminder_id)
            d = item["dl"].get(channel_id) if item else None
            if (
                item is None
                or d is None
                or d["st"] != DeliveryState.SENDING.value
                or d["rev"] != delivery.rev
                or "lu" not in d  # DynamoDB: ``dl.c.lu <= :now`` is false when lu is absent
                or d["lu"] > iso(now)
            ):
                return ClaimResult(False, reminder_from_item(item) if item else None)
            self._written(reminder_id)
            d.update(lo=worker, lu=iso(lease_until), rev=d["rev"] + 1)
            if self._answer_lost("claim_expired"):  # the retry's rev condition fails: the row re-read
                return ClaimResult(False, reminder_from_item(item))
            return ClaimResult(True, reminder_from_item(item), lease_expired=True)

    def save_delivery(
        self,
        reminder_id: str,
        delivery: Delivery,
        expected_rev: int,
        *,
        lease_owner: str | None = None,
        version: int | None = None,
    ) -> bool:
        with self.lock:
            self.writes += 1
            item = self.items.get(reminder_id)
            d = item["dl"].get(delivery.channel_id) if item else None
            delivery.rev = expected_rev  # as DynamoReminderStore leaves the caller's copy on a refusal
            if item is None or d is None or d["rev"] != expected_rev:
                return False
            if lease_owner is not None and d.get("lo") != lease_owner:
                return False
            if version is not None and item["v"] != version:
                return False
            delivery.rev = expected_rev + 1
            self._written(reminder_id)
            item["dl"][delivery.channel_id] = delivery_to_map(delivery)
            self._settle_attention(item, delivery)
            if self._answer_lost("save_delivery"):
                delivery.rev = expected_rev
                return False
            return True

    def _settle_attention(self, item: dict[str, Any], written: Delivery | None = None) -> None:
        """As DynamoReminderStore: one more write, only when the attention attributes change."""
        want = derived_of_item(item, written)
        have = {k: item[k] for k in DERIVED if k in item}
        if want != have:
            self.writes += 1
            self.attention_writes += 1
            self.attention_index_writes += _index_writes(_keys(have), _keys(want))
            for k in DERIVED:
                item.pop(k, None)
            item.update(want)

    def save_reminder(self, reminder: Reminder, expected: dict[str, int], index: IndexKey | None) -> bool:
        with self.lock:
            self.writes += 1
            item = self.items.get(reminder.id)
            for cid, d in reminder.deliveries.items():
                d.rev = expected[cid]  # as DynamoReminderStore leaves the caller's copies on a refusal
            if item is None or item["v"] != expected["version"]:
                return False
            for cid in reminder.deliveries:
                if item["dl"].get(cid, {}).get("rev") != expected[cid]:
                    return False
            for cid, d in reminder.deliveries.items():
                d.rev = expected[cid] + 1
            new = reminder_to_item(reminder)
            self._written(reminder.id)
            item.update(due=new["due"], v=new["v"], dl=new["dl"], tv=new["tv"], data=new["data"])
            if "tpr" in new:
                item["tpr"] = new["tpr"]
            for f in TIME_FIELDS:  # issue 17: as DynamoReminderStore's SET / REMOVE
                if f in new:
                    item[f] = new[f]
                else:
                    item.pop(f, None)
            want = {k: new[k] for k in DERIVED if k in new}
            have = {k: item.pop(k) for k in DERIVED if k in item}
            self.attention_index_writes += _index_writes(_keys(have), _keys(want))
            item.update(want)
            if index is not None:
                self._reindex(item, index)
            if self._answer_lost("save_reminder"):
                for cid, d in reminder.deliveries.items():
                    d.rev = expected[cid]
                return False
            return True

    def move_index(
        self, reminder_id: str, index: IndexKey, *, version: int | None = None, from_sk: str | None = None
    ) -> bool:
        with self.lock:
            self.writes += 1
            item = self.items.get(reminder_id)
            if item is None or (version is not None and item["v"] != version):
                return False
            if from_sk is not None and (item.get("gsk") != from_sk or item.get("w") != index.watch):
                return False
            self._written(reminder_id)
            moved = from_sk is not None and from_sk != index.sk  # a retry's ``gsk = :from`` fails
            self._reindex(item, index)
            return not (self._answer_lost("move_index") and moved)

    def scan_index_entries(self, after: str, limit: int) -> tuple[list[IndexedRow], str]:
        with self.lock:
            items = self.items  # the backfill's Scan is strongly consistent (ConsistentRead)
            ids = sorted(items)
            start = bisect.bisect_right(ids, after) if after else 0
            page = ids[start : start + limit]
            self.reads += 1
            out = [
                IndexedRow(rid, item["acct"], item["gpk"], item["gsk"], bool(item.get("w", False)))
                for rid in page
                if "gpk" in (item := items[rid])
            ]
            return out, (page[-1] if start + limit < len(ids) else "")

    # -- due index ------------------------------------------------------------------------------
    def query_index(self, pk: str, after: str, until: str, limit: int) -> tuple[list[IndexEntry], bool]:
        refuse_empty_range(after, until)  # as DynamoDB: a caller that issues one fails here too
        with self.lock:
            self.reads += 1
            rows, items = self._index_rows(pk)
            start = bisect.bisect_right(rows, (after, "\uffff")) if after else 0
            end = bisect.bisect_right(rows, (until, "\uffff"))
            picked = rows[start : min(end, start + limit)]
            return [index_entry(items[rid]) for _, rid in picked], start + limit < end

    def _index_rows(self, pk: str) -> tuple[list[tuple[str, str]], Mapping[str, dict[str, Any]]]:
        """The GSI's partition ``pk`` as a query sees it (a GSI is eventually consistent): its rows
        (sort key, rid) and the items they project."""
        lagging = [k for k in self.stale.lagging() if k != _CONTROLS]
        if not lagging:
            return self.index.get(pk, []), self.items
        images = {rid: i for rid in lagging if (i := self._eventual(rid)) is not None}
        moved = set(lagging)
        rows = [row for row in self.index.get(pk, []) if row[1] not in moved]
        rows += [(i["gsk"], rid) for rid, i in images.items() if i.get("gpk") == pk]
        return sorted(rows), ChainMap(images, self.items)

    # -- shard cursors --------------------------------------------------------------------------
    def acquire_cursor(self, shard: int, worker: str, now: datetime, lease_until: datetime) -> Cursor | None:
        with self.lock:
            self.writes += 1
            c = self.cursors.get(shard)
            now_s = iso(now)
            if c is not None and c.get("lo") and c["lu"] > now_s and c["lo"] != worker:
                return None
            if c is None:
                c = self.cursors[shard] = cursor_item(bucket_of(now - self.cursor_start_back))
            c.update(lo=worker, lu=iso(lease_until), rev=c["rev"] + 1)
            return cursor_from_item(shard, c)

    def ensure_cursor(self, shard: int, start: datetime) -> bool:
        with self.lock:
            self.writes += 1
            if shard in self.cursors:
                return False
            bucket = bucket_of(start)
            self.cursors[shard] = cursor_item(bucket, bucket)
            return True

    def get_cursor(self, shard: int) -> Cursor | None:
        with self.lock:
            self.reads += 1
            c = self.cursors.get(shard)
            return cursor_from_item(shard, c) if c else None

    def save_cursor(self, cursor: Cursor, release: bool = False) -> bool:
        with self.lock:
            self.writes += 1
            c = self.cursors.get(cursor.shard)
            if c is None or c.get("lo") != cursor.lease_owner:
                return False
            c.update(b=cursor.bucket, a=cursor.after, wb=cursor.watch_bucket, wa=cursor.watch_after)
            c.update(ap=cursor.page, wp=cursor.watch_page)
            if release:
                c.pop("lo", None)
                c.pop("lu", None)
            return not (self._answer_lost("save_cursor") and release)  # a retry's ``lo = :w`` fails

    def reference_now(self) -> datetime | None:
        return self.clock.now() if self.clock is not None else None

    # -- operator controls ----------------------------------------------------------------------
    def get_controls(self) -> dict[str, Any]:
        old = self.stale.eventual(_CONTROLS)  # an eventually consistent read, as the adapter's
        return dict(self.controls if old is MISSING else old or {})

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.stale.written(_CONTROLS, dict(self.controls))
        for k, v in controls.items():
            if v is None:
                self.controls.pop(k, None)
            else:
                self.controls[k] = v

    def raise_shard_high_water(self, shards: int) -> None:
        with self.lock:
            self.writes += 1
            if int(self.controls.get(SHARD_HIGH_WATER, 0)) < shards:
                self.stale.written(_CONTROLS, dict(self.controls))
                self.controls[SHARD_HIGH_WATER] = shards
