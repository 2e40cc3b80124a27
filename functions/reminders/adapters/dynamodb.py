"""The ReminderStore on DynamoDB: one item per reminder holding its channel deliveries (the
ledger), conditional writes for every transition, and a sharded, time-bucketed GSI ``due``.

It speaks to the low-level ``dynamodb`` client (typed attribute values through boto3's
``TypeSerializer``/``TypeDeserializer``), not to a ``boto3.resource`` Table: botocore clients are
thread-safe, resources are not, and the delivery consumer sends a batch's records from a thread pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal, DecimalException
from email.utils import parsedate_to_datetime
from typing import Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from ..domain.models import Delivery, Reminder
from ..domain.ports import ROW_ERRORS, ClaimResult, Cursor, IndexedRow, IndexEntry, IndexKey
from ..domain.schedule import SHARD_HIGH_WATER, bucket_of, iso
from ..domain.states import CLAIMABLE, DeliveryState
from . import attention
from .codec import (
    DERIVED,
    TIME_FIELDS,
    cursor_from_item,
    cursor_item,
    delivery_to_map,
    from_dynamo,
    index_attributes,
    index_entry,
    refuse_empty_range,
    reminder_from_item,
    reminder_to_item,
)
from .dynamo_scan import scan_index_entries

DUE_INDEX = "due"
CURSOR_START_BACK_SECONDS = 3600  # a new shard cursor starts this far back (catch up, bounded)
_CONTROL_KEY = {"pk": "CONTROL", "sk": "C"}
#: The attributes of a reminder item that settling its derived attributes reads (codec.derived_of_item
#: with the written delivery; attention.settle: the key and its condition on every channel's revision).
_SETTLE_READS = frozenset({"pk", "rid", "acct", "due", "r", "chs", "dl", *DERIVED})


class ExactDeserializer(TypeDeserializer):
    """boto3's decoder, except for a number it refuses: DynamoDB answers a large number as its full
    digit string (``1e125`` → 126 digits; boto3#2500), which boto3's 38-digit context refuses
    (``decimal.Rounded``). Such a string is read exactly instead, so no row (and no shard, stream
    record or message) is stuck on a value DynamoDB itself accepted (issue 25 item 13)."""

    def _deserialize_n(self, value: str) -> Decimal:
        try:
            return DYNAMODB_CONTEXT.create_decimal(value)
        except DecimalException:
            return Decimal(value)


class _Serializer(TypeSerializer):
    """boto3's encoder, except for a number read back as DynamoDB answers it (its full digit string):
    written as the same value without its trailing zeros, which is what DynamoDB stores (more than 38
    significant digits are still refused, as boto3 refuses them)."""

    def _serialize_n(self, value: Any) -> str:
        try:
            number = DYNAMODB_CONTEXT.create_decimal(value)
        except DecimalException:
            sign, digits, exponent = Decimal(value).as_tuple()
            if not isinstance(exponent, int):
                raise
            kept = len(digits)
            while kept > 1 and digits[kept - 1] == 0:
                kept -= 1
            number = DYNAMODB_CONTEXT.create_decimal(
                Decimal((sign, digits[:kept], exponent + len(digits) - kept))
            )
        text = str(number)
        if text in ("Infinity", "NaN"):
            raise TypeError("Infinity and NaN not supported")
        return text


_SERIALIZER = _Serializer()
_DESERIALIZER = ExactDeserializer()


def _conditional_failed(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def _cursor_key(shard: int) -> dict[str, str]:
    return {"pk": f"CURSOR#{shard:03d}", "sk": "C"}


def to_typed(item: Mapping[str, Any]) -> dict[str, Any]:
    """A plain item (codec form: Decimals, no floats) as DynamoDB's typed attribute values."""
    return {k: _SERIALIZER.serialize(v) for k, v in item.items()}


def from_typed(item: Mapping[str, Any]) -> dict[str, Any]:
    """Typed attribute values back to the plain form (numbers as Decimals, as the resource layer did)."""
    return {k: _DESERIALIZER.deserialize(v) for k, v in item.items()}


def _rkey(reminder_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"R#{reminder_id}"}, "sk": {"S": "R"}}


def _plain_client(resource_client: Any) -> Any:
    import boto3

    from .clients import client_config

    meta = resource_client.meta
    return boto3.client(
        "dynamodb",
        region_name=meta.region_name,
        endpoint_url=meta.endpoint_url,
        config=client_config("dynamodb"),
    )


class DynamoReminderStore:
    def __init__(
        self,
        table: Any,
        *,
        table_name: str | None = None,
        cursor_start_back_seconds: int = CURSOR_START_BACK_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
        clock_reference: bool = True,
    ) -> None:
        """``table`` is a low-level ``dynamodb`` client with ``table_name`` given, or (older callers,
        tests) a boto3 ``dynamodb.Table`` resource: the store then makes a plain client of the
        default session on the resource's region and endpoint.
        ``clock_reference=False`` offers no reference time: for callers on a virtual clock (tests)
        against a table on wall time."""
        if table_name is None:
            # Not the resource's own client: the resource layer registers handlers on it that
            # serialize parameters a second time. A plain client on the same endpoint instead.
            self._table_resource: Any = table
            self.client: Any = _plain_client(table.meta.client)
            self.table_name: str = table.name
        else:
            self._table_resource = None
            self.client = table
            self.table_name = table_name
        self.cursor_start_back = timedelta(seconds=cursor_start_back_seconds)
        self.monotonic = monotonic
        self._reference: tuple[float, float] | None = None  # (store epoch s, local monotonic s)
        if clock_reference:
            self.client.meta.events.register(
                "after-call.dynamodb", self.note_response, unique_id=f"reminders-store-date-{id(self)}"
            )

    @property
    def table(self) -> Any:
        """A boto3 ``Table`` resource on the same endpoint, for operator tools and tests only (resources
        are not thread-safe: the store itself never uses it)."""
        if self._table_resource is None:
            import boto3

            meta = self.client.meta
            self._table_resource = boto3.resource(
                "dynamodb", region_name=meta.region_name, endpoint_url=meta.endpoint_url
            ).Table(self.table_name)
        return self._table_resource

    # -- low-level calls ------------------------------------------------------------------------
    def _update_plain(
        self,
        *,
        Key: Mapping[str, Any],
        UpdateExpression: str,
        ConditionExpression: str | None = None,
        ExpressionAttributeNames: Mapping[str, str] | None = None,
        ExpressionAttributeValues: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An update in the resource layer's form (plain key and values), on the low-level client."""
        return self._update(
            to_typed(Key),
            UpdateExpression,
            condition=ConditionExpression,
            names=ExpressionAttributeNames,
            values=ExpressionAttributeValues,
        )

    def _update(
        self,
        key: Mapping[str, Any],
        update: str,
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"TableName": self.table_name, "Key": key, "UpdateExpression": update}
        if condition:
            kwargs["ConditionExpression"] = condition
        if names:
            kwargs["ExpressionAttributeNames"] = dict(names)
        if values:
            kwargs["ExpressionAttributeValues"] = to_typed(values)
        kwargs.update(extra)
        resp: dict[str, Any] = self.client.update_item(**kwargs)
        return resp

    def _put_new(self, item: Mapping[str, Any]) -> bool:
        """Put ``item`` unless an item with its key exists (then False, nothing written)."""
        try:
            self.client.put_item(
                TableName=self.table_name, Item=to_typed(item), ConditionExpression="attribute_not_exists(pk)"
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        return True

    def _get(self, key: Mapping[str, Any], consistent: bool = True) -> dict[str, Any] | None:
        resp = self.client.get_item(TableName=self.table_name, Key=key, ConsistentRead=consistent)
        item = resp.get("Item")
        return from_typed(item) if item else None

    # -- the store's clock ----------------------------------------------------------------------
    def note_response(self, http_response: Any = None, **_: Any) -> None:
        """botocore ``after-call`` hook: remember DynamoDB's ``Date`` header as the reference time.
        The header has whole seconds: the server's clock was in [Date, Date + 1), so take the middle
        (error <= 0.5 s plus half a round trip). One tuple assignment: safe across threads."""
        headers = getattr(http_response, "headers", None) or {}
        value = headers.get("Date") or headers.get("date")
        if not value:
            return
        try:
            at = parsedate_to_datetime(value).timestamp() + 0.5
        except (TypeError, ValueError, IndexError):
            return
        self._reference = (at, self.monotonic())

    def reference_now(self) -> datetime | None:
        reference = self._reference
        if reference is None:
            return None
        at, noted = reference
        return datetime.fromtimestamp(at + (self.monotonic() - noted), UTC)

    # -- reminders ------------------------------------------------------------------------------
    def put_new(self, reminder: Reminder, index: IndexKey) -> bool:
        item = reminder_to_item(reminder)
        item.update(index_attributes(index))
        return self._put_new(item)

    def get(self, reminder_id: str) -> Reminder | None:
        item = self._get(_rkey(reminder_id))
        return reminder_from_item(item) if item else None

    def batch_get(
        self, reminder_ids: Sequence[str], *, unreadable: list[str] | None = None
    ) -> list[Reminder]:
        out: list[Reminder] = []
        ids = list(dict.fromkeys(reminder_ids))
        name = self.table_name
        for start in range(0, len(ids), 100):
            request: dict[str, Any] = {name: {"Keys": [_rkey(rid) for rid in ids[start : start + 100]]}}
            while request:
                resp = self.client.batch_get_item(RequestItems=request)
                for typed in resp.get("Responses", {}).get(name, []):
                    try:
                        out.append(reminder_from_item(from_typed(typed)))
                    except ROW_ERRORS:
                        if unreadable is None:
                            raise
                        rid = typed.get("rid", {}).get("S") or str(typed["pk"]["S"]).removeprefix("R#")
                        unreadable.append(str(rid))
                request = resp.get("UnprocessedKeys") or {}
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
        states = sorted(s.value for s in CLAIMABLE)
        # Parked under another message's lease (ahead of now): that message's row, not this copy's.
        named = {":pu": parked_lease} if parked_lease else {}
        try:
            resp = self._update(
                _rkey(reminder_id),
                "SET dl.#c.st = :sending, dl.#c.lo = :w, dl.#c.lu = :lu, dl.#c.rev = dl.#c.rev + :one",
                condition=(
                    "v = :v AND due <= :now AND dl.#c.st IN (:s0, :s1, :s2)"
                    " AND (attribute_not_exists(dl.#c.na) OR dl.#c.na <= :now)"
                    " AND (attribute_not_exists(dl.#c.pu) OR dl.#c.pu <= :now"
                    + (" OR dl.#c.pu = :pu)" if named else ")")
                ),
                names={"#c": channel_id},
                values={
                    **named,
                    ":v": version,
                    ":now": iso(now),
                    ":s0": states[0],
                    ":s1": states[1],
                    ":s2": states[2],
                    ":sending": DeliveryState.SENDING.value,
                    ":w": worker,
                    ":lu": iso(lease_until),
                    ":one": 1,
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise
            raw: dict[str, Any] | None = exc.response.get("Item")  # type: ignore[assignment]
            current = reminder_from_item(from_typed(raw)) if raw else self.get(reminder_id)
            return ClaimResult(False, current)
        return ClaimResult(True, reminder_from_item(from_typed(resp["Attributes"])))

    def claim_expired(
        self,
        reminder_id: str,
        channel_id: str,
        delivery: Delivery,
        worker: str,
        now: datetime,
        lease_until: datetime,
    ) -> ClaimResult:
        try:
            resp = self._update(
                _rkey(reminder_id),
                "SET dl.#c.lo = :w, dl.#c.lu = :lu, dl.#c.rev = dl.#c.rev + :one",
                condition="dl.#c.st = :sending AND dl.#c.rev = :rev AND dl.#c.lu <= :now",
                names={"#c": channel_id},
                values={
                    ":sending": DeliveryState.SENDING.value,
                    ":rev": delivery.rev,
                    ":now": iso(now),
                    ":w": worker,
                    ":lu": iso(lease_until),
                    ":one": 1,
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise
            return ClaimResult(False, self.get(reminder_id))
        return ClaimResult(True, reminder_from_item(from_typed(resp["Attributes"])), lease_expired=True)

    def save_delivery(
        self,
        reminder_id: str,
        delivery: Delivery,
        expected_rev: int,
        *,
        lease_owner: str | None = None,
        version: int | None = None,
    ) -> bool:
        condition = "dl.#c.rev = :rev"
        values: dict[str, Any] = {":rev": expected_rev}
        if lease_owner is not None:
            condition += " AND dl.#c.lo = :lo"
            values[":lo"] = lease_owner
        if version is not None:
            condition += " AND v = :v"
            values[":v"] = version
        delivery.rev = expected_rev + 1
        values[":d"] = delivery_to_map(delivery)
        try:
            resp = self._update(
                _rkey(reminder_id),
                "SET dl.#c = :d",
                condition=condition,
                names={"#c": delivery.channel_id},
                values=values,
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            delivery.rev = expected_rev
            if _conditional_failed(exc):
                return False
            raise
        # Only what the attention/TTL derivation and its condition read is decoded (issue 32 item 3):
        # not the reminder's data, template or time fields, nor the written channel's history.
        written = {k: v for k, v in resp["Attributes"].items() if k in _SETTLE_READS}
        attention.settle(self._update_plain, from_typed(written), delivery)
        return True

    def save_reminder(self, reminder: Reminder, expected: dict[str, int], index: IndexKey | None) -> bool:
        names: dict[str, str] = {}
        values: dict[str, Any] = {":v": expected["version"]}
        conditions = ["v = :v"]
        for i, (cid, d) in enumerate(reminder.deliveries.items()):
            names[f"#c{i}"] = cid
            values[f":r{i}"] = expected[cid]
            conditions.append(f"dl.#c{i}.rev = :r{i}")
            d.rev = expected[cid] + 1
        item = reminder_to_item(reminder)
        sets = ["due = :due", "v = :nv", "dl = :dl", "tv = :tv", "#data = :data"]
        names["#data"] = "data"
        values.update(
            {
                ":due": item["due"],
                ":nv": item["v"],
                ":dl": item["dl"],
                ":tv": item["tv"],
                ":data": item["data"],
            }
        )
        if "tpr" in item:  # recorded by the correction's template check (never unrecorded again)
            sets.append("tpr = :tpr")
            values[":tpr"] = item["tpr"]
        if index is not None:
            sets += ["gpk = :gpk", "gsk = :gsk", "w = :w"]
            values.update({":gpk": index.pk, ":gsk": index.sk, ":w": index.watch})
        removes = [a for a in DERIVED if a not in item]  # derived from the deliveries (codec)
        for a in DERIVED:
            if a in item:
                sets.append(f"{a} = :{a}")
                values[f":{a}"] = item[a]
        # issue 17: local time, window and deadline travel with the reminder
        for f in TIME_FIELDS:
            names[f"#t_{f}"] = f
            if f in item:
                sets.append(f"#t_{f} = :t_{f}")
                values[f":t_{f}"] = item[f]
            else:
                removes.append(f"#t_{f}")
        try:
            self._update(
                _rkey(reminder.id),
                "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else ""),
                condition=" AND ".join(conditions),
                names=names,
                values=values,
            )
        except ClientError as exc:
            for cid, d in reminder.deliveries.items():
                d.rev = expected[cid]
            if _conditional_failed(exc):
                return False
            raise
        return True

    def move_index(
        self, reminder_id: str, index: IndexKey, *, version: int | None = None, from_sk: str | None = None
    ) -> bool:
        condition = "attribute_exists(pk)"
        values: dict[str, Any] = {":gpk": index.pk, ":gsk": index.sk, ":w": index.watch}
        if version is not None:
            condition += " AND v = :v"
            values[":v"] = version
        if from_sk is not None:
            condition += " AND gsk = :from AND w = :w"
            values[":from"] = from_sk
        try:
            self._update(
                _rkey(reminder_id), "SET gpk = :gpk, gsk = :gsk, w = :w", condition=condition, values=values
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise
            return False
        return True

    def scan_index_entries(self, after: str, limit: int) -> tuple[list[IndexedRow], str]:
        return scan_index_entries(self.client, self.table_name, after, limit)

    # -- due index ------------------------------------------------------------------------------
    def query_index(self, pk: str, after: str, until: str, limit: int) -> tuple[list[IndexEntry], bool]:
        # Sort keys (any form) hold no character below a space, so "> after" is ">= after + ' '".
        if after:
            refuse_empty_range(after, until)  # never sent
            cond = "gpk = :pk AND gsk BETWEEN :lo AND :hi"
            values = {":pk": pk, ":lo": after + " ", ":hi": until}
        else:
            cond = "gpk = :pk AND gsk <= :hi"
            values = {":pk": pk, ":hi": until}
        resp = self.client.query(
            TableName=self.table_name,
            IndexName=DUE_INDEX,
            KeyConditionExpression=cond,
            ExpressionAttributeValues=to_typed(values),
            Limit=limit,
        )
        entries = [index_entry(from_typed(typed)) for typed in resp.get("Items", [])]
        return entries, "LastEvaluatedKey" in resp

    # -- shard cursors --------------------------------------------------------------------------
    def acquire_cursor(self, shard: int, worker: str, now: datetime, lease_until: datetime) -> Cursor | None:
        try:
            resp = self._update(
                to_typed(_cursor_key(shard)),
                "SET lo = :w, lu = :lu, b = if_not_exists(b, :b), a = if_not_exists(a, :e),"
                " wb = if_not_exists(wb, :e), wa = if_not_exists(wa, :e) ADD rev :one",
                condition="attribute_not_exists(lo) OR lu <= :now OR lo = :w",
                values={
                    ":now": iso(now),
                    ":w": worker,
                    ":lu": iso(lease_until),
                    ":b": bucket_of(now - self.cursor_start_back),
                    ":e": "",
                    ":one": 1,
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return None
            raise
        return cursor_from_item(shard, from_typed(resp["Attributes"]))

    def ensure_cursor(self, shard: int, start: datetime) -> bool:
        bucket = bucket_of(start)
        return self._put_new({**_cursor_key(shard), **cursor_item(bucket, bucket)})

    def get_cursor(self, shard: int) -> Cursor | None:
        item = self._get(to_typed(_cursor_key(shard)))
        return cursor_from_item(shard, item) if item and "b" in item else None

    def save_cursor(self, cursor: Cursor, release: bool = False) -> bool:
        update = "SET b = :b, a = :a, wb = :wb, wa = :wa, ap = :ap, wp = :wp"
        if release:
            update += " REMOVE lo, lu"
        try:
            self._update(
                to_typed(_cursor_key(cursor.shard)),
                update,
                condition="lo = :w",
                values={
                    ":b": cursor.bucket,
                    ":a": cursor.after,
                    ":wb": cursor.watch_bucket,
                    ":wa": cursor.watch_after,
                    ":ap": cursor.page,
                    ":wp": cursor.watch_page,
                    ":w": cursor.lease_owner,
                },
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        return True

    # -- operator controls ----------------------------------------------------------------------
    def get_controls(self) -> dict[str, Any]:
        item = self._get(to_typed(_CONTROL_KEY), consistent=False) or {}
        return {k: from_dynamo(v) for k, v in item.items() if k not in ("pk", "sk")}

    def set_controls(self, controls: dict[str, Any]) -> None:
        """Set the given switches (``None`` removes one), leaving the others as they are: two operators
        flipping two switches at once do not undo each other."""
        if not controls:
            return
        keys = list(controls)
        names = {f"#k{i}": k for i, k in enumerate(keys)}
        values = {f":v{i}": controls[k] for i, k in enumerate(keys) if controls[k] is not None}
        sets = [f"#k{i} = :v{i}" for i, k in enumerate(keys) if controls[k] is not None]
        removes = [f"#k{i}" for i, k in enumerate(keys) if controls[k] is None]
        update = " ".join(
            p
            for p in (
                "SET " + ", ".join(sets) if sets else "",
                "REMOVE " + ", ".join(removes) if removes else "",
            )
            if p
        )
        self._update(to_typed(_CONTROL_KEY), update, names=names, values=values)

    def raise_shard_high_water(self, shards: int) -> None:
        try:
            self._update(
                to_typed(_CONTROL_KEY),
                "SET #h = :n",
                condition="attribute_not_exists(#h) OR #h < :n",
                names={"#h": SHARD_HIGH_WATER},
                values={":n": shards},
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise
