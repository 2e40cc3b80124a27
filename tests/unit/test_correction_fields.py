"""What a correction stores (MISSION §8 survivors of `make mutate` in domain/corrections.py): a
wall-time reschedule keeps its wall time, zone and tzdata release; an instant alone keeps the zone
and drops the wall time and its release; an explicit resend starts a fresh generation with nothing
of the old one's budget or evidence."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from reminders.domain.corrections import Data, DueAt, resend_generation
from reminders.domain.schedule import iso
from reminders.domain.states import DeliveryState

from tests.unit.fakes import World
from tests.unit.test_delivery_evidence import attempts_until


@pytest.fixture
def w() -> World:
    return World()


def test_a_wall_time_reschedule_stores_its_wall_time_zone_and_rules_when_the_reminder_had_no_zone(
    w: World,
) -> None:
    r = w.create("k", due_in=3600)
    assert r.time_zone is None
    moved = w.reminders.reschedule(r.id, None, due_local="2027-01-04T09:00", time_zone="Europe/Paris")
    stored = w.get(r.id)
    assert (stored.due_local, stored.time_zone) == ("2027-01-04T09:00", "Europe/Paris")
    assert stored.tz_rules is not None and stored.tz_rules == moved.tz_rules == w.reminders.rules()
    assert stored.due_at.isoformat().startswith("2027-01-04T08:00")  # 09:00 in Paris is 08:00 UTC


def test_an_instant_reschedule_keeps_the_zone_and_drops_the_wall_time_and_its_rules(w: World) -> None:
    r = w.create("k", due_in=3600)
    w.reminders.reschedule(r.id, None, due_local="2027-01-04T09:00", time_zone="Europe/Paris")
    instant = w.clock.now() + timedelta(days=3)
    w.reminders.reschedule(r.id, instant)
    stored = w.get(r.id)
    assert (stored.due_at, stored.time_zone) == (instant, "Europe/Paris")
    assert stored.due_local is None and stored.tz_rules is None


def test_an_instant_change_drops_a_rules_stamp_when_no_wall_time_comes_with_it(w: World) -> None:
    r = w.create("k", due_in=3600)
    instant = w.clock.now() + timedelta(days=1)
    applied = DueAt(instant, tz_rules="2099z").apply(r)  # rules qualify a wall time only
    assert applied.tz_rules is None and applied.due_local is None and applied.due_at == instant


def test_a_resend_starts_a_fresh_budget_with_no_evidence_when_the_old_key_may_have_been_accepted(
    w: World,
) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["timeout_after", "429"])
    attempts_until(w, r.id, 2)
    old = w.delivery(r.id)
    assert (old.attempts, old.throttles, old.throttle_streak) == (1, 1, 1)  # a 429 spends no attempt
    assert old.last_error is not None and old.may_have_been_accepted()
    w.clock.advance(5)
    d = w.reminders.correct(r.id, [Data({"plan": "enterprise"})], resend=True).deliveries["webhook-0"]
    assert (d.attempts, d.throttles, d.throttle_streak) == (0, 0, 0)
    assert d.last_error is None and d.receipt is None and d.maybe_accepted == []
    assert d.cycle_started_at == iso(w.clock.now())  # the new cycle starts at the resend
    assert d.history[-1].event == "resend" and d.history[-1].detail == "intentional #1"
    assert d.state is DeliveryState.RETRYABLE or d.state is DeliveryState.QUEUED


@pytest.mark.parametrize("field", ["account_id", "key", "channel_id", "generation"])
def test_a_resend_never_reuses_a_key_when_another_reminder_differs_only_in_one_identity_field(
    w: World, field: str
) -> None:
    r = w.create("k", due_in=0)
    d = r.deliveries["webhook-0"]
    other_r, other_d = r, d
    if field == "channel_id":
        other_d = replace(d, channel_id="webhook-1")
    else:
        other_r = replace(r, **{field: {"account_id": "acct-2", "key": "k2", "generation": 2}[field]})
    at = iso(w.clock.now())
    keys = {resend_generation(r, d, at).key, resend_generation(other_r, other_d, at).key}
    keys |= {d.key, resend_generation(r, resend_generation(r, d, at), at).key}  # the first life, #2
    assert len(keys) == 4  # a receiver deduplicating by key never collapses one into another


def test_a_resend_carries_no_receipt_when_the_old_key_had_one(w: World) -> None:
    r = w.create("k", due_in=0)
    d = replace(r.deliveries["webhook-0"], receipt="evt-1|rejected|2026-11-29T12:00:01.000000Z|schema")
    assert resend_generation(r, d, iso(w.clock.now())).receipt is None
