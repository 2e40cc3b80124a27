"""The reminder's stored item (adapters/codec.py): every field reads back as written, an item written
before a field existed reads with that field's default, and DynamoDB's number type reaches nested
values (lists and maps inside a reminder's data)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from reminders.adapters.codec import (
    from_dynamo,
    index_attributes,
    reminder_from_item,
    reminder_to_item,
    to_dynamo,
)
from reminders.domain.models import ChannelType, Delivery, Reminder
from reminders.domain.ports import IndexKey

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _reminder(**kw: object) -> Reminder:
    d = Delivery("webhook-0", ChannelType.WEBHOOK, "https://hooks.example.com/a", "dlv_x")
    fields: dict[str, object] = {
        "id": "rem_1",
        "account_id": "acct-1",
        "key": "k",
        "kind": "renewal",
        "due_at": T0,
        "template_id": "renewal",
        "template_version": 1,
        "data": {},
        "version": 1,
        "created_at": T0,
        "fingerprint": "f" * 64,
        "deliveries": {"webhook-0": d},
    }
    return Reminder(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_reminder_with_a_shard_and_a_key_generation_reads_back_with_both() -> None:
    r = _reminder(shard=5, generation=2)
    got = reminder_from_item(reminder_to_item(r))
    assert (got.shard, got.generation) == (5, 2)
    assert got == r


def test_an_item_written_before_shards_and_generations_reads_at_shard_zero_generation_zero() -> None:
    item = reminder_to_item(_reminder(shard=5, generation=2))
    del item["shard"], item["g"]
    got = reminder_from_item(item)
    assert (got.shard, got.generation) == (0, 0)


def test_an_item_read_with_its_due_index_keys_knows_its_sort_key_unless_it_is_watched() -> None:
    r = _reminder()
    item = reminder_to_item(r)
    assert (
        reminder_from_item({**item, **index_attributes(IndexKey("D#x", "sk-1", False))}).index_sort_key
        == "sk-1"
    )
    assert (
        reminder_from_item({**item, **index_attributes(IndexKey("W#x", "sk-2", True))}).index_sort_key is None
    )
    assert reminder_from_item(item).index_sort_key is None  # not in the index


def test_numbers_inside_lists_become_decimals_and_read_back_as_numbers() -> None:
    data = {"plan": [1.5, {"seats": 2.5, "gone": None}, "x", 3, [0.25]]}
    stored = to_dynamo(data)
    assert stored == {"plan": [Decimal("1.5"), {"seats": Decimal("2.5")}, "x", 3, [Decimal("0.25")]]}
    assert from_dynamo(stored) == {"plan": [1.5, {"seats": 2.5}, "x", 3, [0.25]]}


def test_a_last_error_with_an_empty_detail_is_stored_without_it_and_reads_back_the_same() -> None:
    """A delivered item with six attempts and the 16-character account tag stays under one write
    unit (tests/proof/test_nothing_lost.py): an empty ``detail`` of the last error is not stored
    (7 bytes) and is read back as ""; a detail that says something is stored as it is; a None one
    (never stored: DynamoDB maps hold no nulls here) reads back as "" too."""
    from reminders.adapters.codec import delivery_from_map, delivery_to_map, from_dynamo
    from reminders.domain.models import ChannelType, Delivery
    from reminders.domain.states import DeliveryState

    for detail in ("", "read timeout", None):
        err = {"class": "transient", "status": 500, "detail": detail}
        d = Delivery(
            channel_id="webhook-0",
            type=ChannelType.WEBHOOK,
            destination="https://hooks.example.com/x",
            key="dlv_1",
            state=DeliveryState.DELIVERED,
            last_error=dict(err),
        )
        stored = delivery_to_map(d)
        assert ("detail" in stored["le"]) is bool(detail)
        assert delivery_from_map("webhook-0", from_dynamo(stored)).last_error == {
            **err,
            "detail": detail or "",
        }
