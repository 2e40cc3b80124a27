"""Local time, send windows and deadlines through the real services on the in-memory world: a
quiet-hours deferral spends no attempt, a deadline dead-letters as ``deadline_passed`` without a
send, a local reschedule keeps the zone, a tzdata change moves the due-index entry, and the new
fields are stored compactly (a delivered single-channel item stays under one write unit)."""

from __future__ import annotations

import json
import struct
import zoneinfo
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.adapters.codec import reminder_from_item, reminder_to_item
from reminders.domain.errors import ValidationError
from reminders.domain.localtime import SendWindow, rules_version, zone
from reminders.domain.models import Reminder
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import bucket_of, index_pk, iso
from reminders.domain.states import DeliveryState
from reminders.services.intents import Reminders, resolve_local
from reminders_ops.bench.sim.model import item_size

from tests.unit.fakes import World

NIGHT = SendWindow.parse("22:00", "06:00")  # T0 is 12:00 UTC: closed for ten hours
DATA = Path(__file__).parents[1] / "proof" / "data"


@pytest.fixture
def w() -> World:
    return World(shards=1)


def dlq(w: World) -> list[dict[str, Any]]:
    return [
        {**json.loads(m.body), "attributes": m.attributes}
        for m in w.sqs.queues["webhook-dlq"].messages.values()
    ]


def create(w: World, key: str = "k", due_in: float = 0, **fields: Any) -> Reminder:
    reminder, _ = w.reminders.create(replace(w.new(key, due_in=due_in), **fields))
    return reminder


def local(w: World, key: str, wall: str, tz: str, **fields: Any) -> Reminder:
    instant, wall = resolve_local(wall, tz)
    reminder, _ = w.reminders.create(
        replace(w.new(key), due_at=instant, due_local=wall, time_zone=tz, **fields)
    )
    return reminder


# -- local time ----------------------------------------------------------------------------------
def test_a_local_time_reminder_stores_wall_time_zone_rules_and_instant(w: World) -> None:
    r = local(w, "k", "2027-03-28T02:30", "Europe/Berlin")
    stored = w.get(r.id)
    assert stored.due_at == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)  # in the gap: offset before it
    assert (stored.due_local, stored.time_zone, stored.tz_rules) == (
        "2027-03-28T02:30",
        "Europe/Berlin",
        rules_version(),
    )


def test_a_reschedule_in_local_time_keeps_the_zone(w: World) -> None:
    r = local(w, "k", "2027-10-31T02:30", "America/New_York")
    moved = w.reminders.reschedule(r.id, None, due_local="2027-11-07T01:30")
    assert moved.time_zone == "America/New_York"
    assert moved.due_at == datetime(2027, 11, 7, 5, 30, tzinfo=UTC)  # overlap: first occurrence (EDT)
    assert w.get(r.id).time_zone == "America/New_York" and w.get(r.id).version == 2


def test_a_reschedule_to_an_instant_drops_the_wall_time_but_keeps_the_windows_zone(w: World) -> None:
    r = local(w, "k", "2027-10-31T09:00", "Europe/Berlin")
    moved = w.reminders.reschedule(r.id, datetime(2027, 11, 1, 8, 0, tzinfo=UTC))
    assert (moved.due_local, moved.time_zone, moved.tz_rules) == (None, "Europe/Berlin", None)


def test_a_local_reschedule_without_any_zone_is_refused_naming_time_zone(w: World) -> None:
    r = create(w, due_in=3600)
    with pytest.raises(ValidationError) as exc:
        w.reminders.reschedule(r.id, None, due_local="2027-01-01T09:00")
    assert exc.value.field == "time_zone"
    assert w.get(r.id).version == 1


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(
        ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "Pacific/Chatham"]
    ),
    st.datetimes(min_value=datetime(2027, 1, 1), max_value=datetime(2030, 12, 31)),
)
def test_property_a_local_reschedule_keeps_the_zone_and_is_never_early(tz: str, wall: datetime) -> None:
    w = World(shards=1)
    r = local(w, "k", "2027-01-01T09:00", tz)
    text = wall.replace(second=0, microsecond=0).isoformat(timespec="minutes")
    moved = w.reminders.reschedule(r.id, None, due_local=text)
    assert moved.time_zone == tz and moved.due_local == text
    assert moved.due_at.astimezone(zone(tz)).replace(tzinfo=None) >= datetime.fromisoformat(text)


# -- send windows --------------------------------------------------------------------------------------
def test_quiet_hours_defer_the_first_attempt_without_spending_it(w: World) -> None:
    r = create(w, send_window=NIGHT)
    (res,) = w.poll()
    assert not res.ack and res.outcome == "deferred_quiet_hours"
    assert res.visibility_seconds == 10 * 3600
    d = w.delivery(r.id)
    assert (d.state, d.attempts, d.next_attempt_at) == (
        DeliveryState.QUEUED,
        0,
        iso(datetime(2026, 11, 29, 22, 0, tzinfo=UTC)),
    )
    assert d.history[-1].event == "defer" and d.history[-1].detail == "quiet_hours"
    assert w.sender.calls == [] and w.telemetry.counts["deferred_quiet_hours"] == 1
    w.clock.advance(10 * 3600)
    (res,) = w.poll()
    assert res.outcome == "delivered"
    assert w.sender.calls[0].at == datetime(2026, 11, 29, 22, 0, tzinfo=UTC)


def test_a_retry_that_would_land_in_quiet_hours_waits_for_the_opening() -> None:
    w = World(shards=1, policy=RetryPolicy(base_seconds=600))  # the first backoff: ~194 s (seed 7)
    window = SendWindow.parse("08:00", "12:01")  # T0 = 12:00: open for one more minute
    r = create(w, send_window=window)
    w.sender.script(w.delivery(r.id).key, ["500"])
    (res,) = w.poll()
    assert res.outcome == "retry_scheduled"
    d = w.delivery(r.id)
    assert d.attempts == 1 and d.next_attempt_at == iso(datetime(2026, 11, 30, 8, 0, tzinfo=UTC))
    assert w.telemetry.counts["deferred_quiet_hours"] == 1


# -- deadlines -----------------------------------------------------------------------------------------
def test_after_deliver_by_no_attempt_starts_and_it_dead_letters_deadline_passed(w: World) -> None:
    r = create(w, due_in=0, deliver_by=w.clock.now() + timedelta(seconds=30))
    (m,) = w.receive()
    w.clock.advance(31)  # the message sat in the queue past the deadline
    res = w.process(m)
    assert res.ack and res.outcome == "dead_lettered"
    d = w.delivery(r.id)
    assert (d.state, d.dead_letter_reason, d.attempts) == (DeliveryState.DEAD_LETTER, "deadline_passed", 0)
    assert w.sender.calls == []
    assert dlq(w)[0]["attributes"]["reason"] == "deadline_passed"


def test_a_429_whose_retry_after_passes_the_deadline_dead_letters_at_once(w: World) -> None:
    r = create(w, deliver_by=w.clock.now() + timedelta(hours=1))
    w.sender.script(w.delivery(r.id).key, ["429_retry_after_4h"])
    (res,) = w.poll()
    assert res.outcome == "dead_lettered"
    d = w.delivery(r.id)
    assert (d.dead_letter_reason, d.attempts, len(w.sender.calls)) == ("deadline_passed", 0, 1)


def test_quiet_hours_that_outlast_the_deadline_dead_letter_now(w: World) -> None:
    r = create(w, send_window=NIGHT, deliver_by=w.clock.now() + timedelta(hours=2))
    (res,) = w.poll()
    assert res.outcome == "dead_lettered" and w.delivery(r.id).dead_letter_reason == "deadline_passed"


# -- a tzdata change -----------------------------------------------------------------------------------
def tzif_fixed(offset_seconds: int, abbr: bytes) -> bytes:
    """A TZif v1 file of one fixed offset (RFC 8536): a zone whose rules changed."""
    chars = abbr + b"\0"
    header = b"TZif" + b"\0" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, len(chars))
    return header + struct.pack(">lBB", offset_seconds, 0, 0) + chars


def test_a_tzdata_change_moves_the_future_local_reminder_and_its_index_entry(w: World) -> None:
    r = local(w, "k", "2027-06-01T09:00", "Europe/Berlin")  # 07:00Z under today's rules (CEST)
    old_pk = index_pk(bucket_of(r.due_at), r.shard)
    assert r.id in [rid for _, rid in w.store.index[old_pk]]
    # The next release: Berlin on a fixed +03:00 (a substituted zone, read from its own TZif).
    changed = zoneinfo.ZoneInfo.from_file(BytesIO(tzif_fixed(3 * 3600, b"XEST")), key="Europe/Berlin")

    def zones(name: str) -> tzinfo:
        return changed if name == "Europe/Berlin" else zone(name)

    bumped = Reminders(
        store=w.store,
        queues=w.queues,
        clock=w.clock,
        telemetry=w.telemetry,
        shards=1,
        zones=zones,
        rules=lambda: "2099z",
    )
    past = local(w, "past", "2026-11-29T12:00", "Europe/Berlin")  # already due: left alone
    report = bumped.reresolve_local_times([r.id, past.id, "rem_" + "0" * 32])
    assert report.moved == [r.id] and report.examined == 3 and not report.more
    moved = w.get(r.id)
    assert moved.due_at == datetime(2027, 6, 1, 6, 0, tzinfo=UTC)
    assert (moved.tz_rules, moved.due_local, moved.version) == ("2099z", "2027-06-01T09:00", 2)
    new_pk = index_pk(bucket_of(moved.due_at), moved.shard)
    assert r.id not in [rid for _, rid in w.store.index.get(old_pk, [])]
    assert r.id in [rid for _, rid in w.store.index[new_pk]]
    # Run again: resolved under the current release, nothing to do.
    assert bumped.reresolve_local_times([r.id]).moved == []


def test_the_re_resolution_is_bounded(w: World) -> None:
    ids = [local(w, f"k{i}", "2027-06-01T09:00", "Europe/Berlin").id for i in range(5)]
    bumped = Reminders(
        store=w.store, queues=w.queues, clock=w.clock, telemetry=w.telemetry, shards=1, rules=lambda: "2099z"
    )
    report = bumped.reresolve_local_times(ids, limit=2)
    assert report.examined == 2 and report.more and report.unchanged == 2 and report.moved == []


# -- stored compactly ----------------------------------------------------------------------
def test_the_time_fields_round_trip_and_are_omitted_when_absent(w: World) -> None:
    plain = create(w, "plain", due_in=60)
    item = reminder_to_item(plain)
    assert not {"dlo", "tz", "tzv", "sw", "dby"} & set(item)
    r = local(
        w,
        "k",
        "2027-03-28T09:00",
        "Europe/Berlin",
        send_window=NIGHT,
        deliver_by=datetime(2027, 3, 29, tzinfo=UTC),
    )
    item = reminder_to_item(r)
    assert item["sw"] == "2200-0600" and item["dby"] == "20270329T000000.000000Z"
    back = reminder_from_item(item)
    assert (back.due_local, back.time_zone, back.send_window, back.deliver_by) == (
        r.due_local,
        r.time_zone,
        r.send_window,
        r.deliver_by,
    )


def test_an_item_written_before_local_time_still_reads() -> None:
    item = json.loads((DATA / "item_written_2026-11-30.json").read_text())
    r = reminder_from_item(item)
    assert (r.due_local, r.time_zone, r.tz_rules, r.send_window, r.deliver_by) == (None,) * 5


def test_a_delivered_single_channel_item_with_every_time_field_stays_under_one_write_unit(w: World) -> None:
    plain = create(w, "plain")
    timed = local(
        w,
        "renewal-reminder:acct-1:2027-03-28:webhook",
        "2026-11-29T09:30",  # 12:30Z
        "America/Argentina/ComodRivadavia",  # the longest zone name there is
        send_window=SendWindow.parse("08:00", "21:00"),
        deliver_by=datetime(2026, 11, 30, tzinfo=UTC),
    )
    w.clock.advance(3600)
    w.poll()
    w.run_shards()
    w.poll()
    sizes = {}
    for r in (plain, timed):
        stored = w.get(r.id)
        assert stored.deliveries["webhook-0"].state is DeliveryState.DELIVERED
        sizes[r.id] = item_size(w.store.items[r.id])
    print(f"delivered item bytes: without time fields {sizes[plain.id]}, with them {sizes[timed.id]}")
    assert sizes[timed.id] < 1024
    assert sizes[timed.id] - sizes[plain.id] < 150


def test_the_watchdog_does_not_take_a_quiet_hours_deferral_for_a_lost_message(w: World) -> None:
    r = create(w, send_window=NIGHT)
    w.run_shards()
    w.poll()  # deferred to 22:00
    for _ in range(8):  # hourly through the quiet hours: nothing re-enqueued
        w.clock.advance(3600)
        reports = w.run_shards()
        assert sum(rep.requeued for rep in reports) == 0
    assert len(w.queued()) == 1
    w.clock.advance(2 * 3600)
    (res,) = w.poll()
    assert res.outcome == "delivered" and w.delivery(r.id).attempts == 1
