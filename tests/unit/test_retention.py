"""Retention (the TTL attribute, derived, 0 extra writes) and delivery-key generations."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from reminders.adapters.codec import reminder_from_item, reminder_to_item
from reminders.domain.models import delivery_key
from reminders.domain.retention import GENERATION_EPOCH, GENERATION_SECONDS, generation_of, retain_seconds
from reminders.domain.schedule import parse_iso
from reminders_ops.bench.sim.model import item_size

from tests.unit.fakes import World

FIXTURE = Path(__file__).parents[1] / "proof" / "data" / "item_written_2026-11-30.json"


def test_generation_0_is_exactly_todays_key() -> None:
    today = "dlv_" + hashlib.sha256(b"acct-1\x1frenewal:1\x1fwebhook-0").hexdigest()[:32]
    assert delivery_key("acct-1", "renewal:1", "webhook-0") == today
    assert delivery_key("acct-1", "renewal:1", "webhook-0", 0) == today
    assert delivery_key("acct-1", "renewal:1", "webhook-0", 1) != today


def test_two_lives_of_a_key_never_share_a_generation() -> None:
    """The second life's create is at least the retention period after the first one's."""
    first = GENERATION_EPOCH + timedelta(days=17)
    shortest_gap = timedelta(days=30)  # the minimum retention
    assert generation_of(first + shortest_gap) != generation_of(first)
    assert generation_of(GENERATION_EPOCH - timedelta(days=400)) == 0
    with pytest.raises(ValueError, match="at least 30"):
        retain_seconds(29, 86400)
    assert GENERATION_SECONDS == 30 * 86400


def test_a_create_after_expiry_in_a_later_generation_gets_new_keys() -> None:
    w = World(start=GENERATION_EPOCH + timedelta(days=95))
    r = w.create("renewal:acct-1:2027", due_in=0)
    assert r.generation == 3
    assert r.deliveries["webhook-0"].key == delivery_key("acct-1", "renewal:acct-1:2027", "webhook-0", 3)
    assert r.deliveries["webhook-0"].key != delivery_key("acct-1", "renewal:acct-1:2027", "webhook-0")
    assert w.store.items[r.id]["g"] == 3


def test_the_ttl_is_due_plus_max_age_plus_retention_and_delivery_does_not_write_it() -> None:
    w = World()
    r = w.create("k", due_in=60)
    item = w.store.items[r.id]
    expected = r.due_at.timestamp() + 24 * 3600 + 90 * 86400
    assert item["xp"] == int(expected)
    w.clock.advance(60)
    writes = w.store.writes
    w.poll()
    assert w.delivery(r.id).state.value == "delivered"
    assert w.store.items[r.id]["xp"] == int(expected)
    assert w.store.attention_writes == 0 and w.store.writes - writes == 2  # claim + record


def test_a_reschedule_and_a_redrive_move_the_ttl_with_their_own_write() -> None:
    w = World()
    r = w.create("k", due_in=60)
    later = w.clock.now() + timedelta(days=3)
    w.reminders.reschedule(r.id, later)
    assert w.store.items[r.id]["xp"] == int(later.timestamp()) + 24 * 3600 + 90 * 86400


def test_an_item_written_before_retention_reads_and_never_expires() -> None:
    item = json.loads(FIXTURE.read_text())
    r = reminder_from_item(item)
    assert r.generation == 0 and r.retain_seconds == 0
    again = reminder_to_item(r)
    assert "xp" not in again and "g" not in again and "r" not in again


def test_a_delivered_single_channel_item_with_retention_stays_under_one_write_unit() -> None:
    w = World(start=datetime(2027, 6, 1, tzinfo=UTC))
    r = w.create("renewal-reminder:acct-000001:2026-12-20:webhook", due_in=0)
    w.poll()
    item = w.store.items[r.id]
    assert w.delivery(r.id).state.value == "delivered" and item["g"] > 0
    size = item_size(item)  # DynamoDB's own rule: names + values
    assert size < 1024, size
    assert parse_iso(item["due"]) == r.due_at
