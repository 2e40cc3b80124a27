"""PATCH corrections in the service: one version bump per correction, old messages no-ops, the
history names fields only, and the 409 rules (sending; ambiguous last attempt)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from reminders.domain.corrections import Data, Destination, DueAt, TemplateVersion
from reminders.domain.errors import ConflictError, PreconditionFailedError, ValidationError
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import EMAIL, WEBHOOK_URL, World

NEW_URL = "https://hooks.example.com/corrected"
NEW_EMAIL = "corrected@example.com"
BOTH = (ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.EMAIL, EMAIL))


@pytest.fixture
def w() -> World:
    return World()


def test_corrected_destination_while_queued_is_used_and_the_old_message_is_a_no_op(w: World) -> None:
    r = w.create("k", due_in=30)
    updated = w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)], if_match=1)
    assert updated.version == 2 and updated.deliveries["webhook-0"].destination == NEW_URL
    assert [m["version"] for m in w.queued()] == [1, 2]
    w.clock.advance(30)
    outcomes = sorted(x.outcome for x in w.poll())
    assert outcomes[0].startswith("delivered") and "stale" in outcomes[1]
    assert [c.key for c in w.sender.calls] == [r.deliveries["webhook-0"].key]
    assert w.delivery(r.id).state is DeliveryState.DELIVERED


def test_the_worker_reads_the_corrected_row_at_delivery_time(w: World) -> None:
    r = w.create("k", due_in=10)
    w.reminders.correct(r.id, [Data({"plan": "enterprise"}), TemplateVersion(3)])
    w.clock.advance(10)
    w.poll()
    body = w.sender.calls[-1].body
    assert '"plan":"enterprise"' in body and '"version":3' in body


def test_a_stale_if_match_is_a_precondition_failure_and_writes_nothing(w: World) -> None:
    r = w.create("k", due_in=30)
    before = dict(w.store.items[r.id])
    with pytest.raises(PreconditionFailedError, match="stale"):
        w.reminders.correct(r.id, [Data({"plan": "x"})], if_match=7)
    assert w.store.items[r.id] == before


def test_history_names_the_fields_never_the_values(w: World) -> None:
    r = w.create("k", due_in=30, channels=BOTH)
    updated = w.reminders.correct(
        r.id, [Destination("email-0", ChannelType.EMAIL, NEW_EMAIL), Data({"secret": "s3cr3t"})]
    )
    for d in updated.deliveries.values():
        line = d.history[-1]
        assert (line.event, line.detail) == ("correct", "destination,data")
    lines = str([m["h"] for m in w.store.items[r.id]["dl"].values()])
    assert "s3cr3t" not in lines and NEW_EMAIL not in lines
    assert w.telemetry.logs[-1][1]["fields"] == "destination,data"
    assert NEW_EMAIL not in str(w.telemetry.logs) and "s3cr3t" not in str(w.telemetry.logs)


def test_correcting_one_channel_plans_every_open_delivery_again_under_the_new_version(w: World) -> None:
    r = w.create("k", due_in=30, channels=BOTH)
    w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])
    assert [m["version"] for m in w.queued("email")] == [1, 2]
    w.clock.advance(30)
    w.poll("email")
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_patch_while_sending_is_a_conflict_then_allowed_once_recorded(w: World) -> None:
    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    w.sender.script(key, ["429"])
    refused: list[Exception] = []

    def during_send(*_: object) -> None:
        try:
            w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])
        except ConflictError as exc:
            refused.append(exc)

    w.sender.before_send = during_send
    w.poll()
    assert len(refused) == 1 and "sending" in str(refused[0])
    assert w.get(r.id).version == 1
    updated = w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])
    assert updated.version == 2 and updated.deliveries["webhook-0"].state is DeliveryState.QUEUED


def test_reschedule_while_sending_is_now_a_conflict(w: World) -> None:
    """Tightened: a reschedule used to be allowed while an attempt was in flight."""
    r = w.create("k", due_in=0)
    refused: list[Exception] = []

    def during_send(*_: object) -> None:
        try:
            w.reminders.reschedule(r.id, w.clock.now() + timedelta(hours=1))
        except ConflictError as exc:
            refused.append(exc)

    w.sender.before_send = during_send
    w.poll()
    assert len(refused) == 1


@pytest.mark.parametrize("outcome", ["timeout_before", "500", "connection_closed"])
def test_correction_after_an_ambiguous_last_attempt_is_a_conflict(w: World, outcome: str) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, [outcome])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.RETRYABLE
    before = dict(w.store.items[r.id])
    with pytest.raises(ConflictError, match="ambiguous"):
        w.reminders.correct(r.id, [Data({"plan": "x"})])
    with pytest.raises(ConflictError, match="ambiguous"):
        w.reminders.reschedule(r.id, w.clock.now() + timedelta(minutes=5))
    assert w.store.items[r.id] == before


def test_correction_after_an_unambiguous_retry_is_allowed(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["429"])
    w.poll()
    assert w.reminders.correct(r.id, [Data({"plan": "x"})]).version == 2


def test_a_destination_of_the_other_type_or_an_unknown_channel_is_invalid(w: World) -> None:
    r = w.create("k", due_in=30)
    with pytest.raises(ValidationError, match="webhook channel"):
        w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.EMAIL, NEW_EMAIL)])
    with pytest.raises(ValidationError, match="no such channel"):
        w.reminders.correct(r.id, [Destination("email-3", ChannelType.EMAIL, NEW_EMAIL)])


def test_a_delivered_reminder_cannot_be_corrected(w: World) -> None:
    r = w.create("k", due_in=0)
    w.poll()
    with pytest.raises(ConflictError):
        w.reminders.correct(r.id, [Data({"plan": "x"})])
    with pytest.raises(ConflictError, match="delivered"):
        w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])


def test_a_dead_letter_with_a_corrected_destination_keeps_its_state_until_redriven(w: World) -> None:
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["400"])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    updated = w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])
    d = updated.deliveries["webhook-0"]
    assert d.state is DeliveryState.DEAD_LETTER and d.destination == NEW_URL
    assert d.history[-1].event == "correct"


def test_due_at_change_with_other_fields_restarts_the_cycle_at_the_new_time(w: World) -> None:
    r = w.create("k", due_in=30)
    due = w.clock.now() + timedelta(days=2)
    updated = w.reminders.correct(r.id, [DueAt(due), Data({"plan": "y"})])
    assert updated.deliveries["webhook-0"].state is DeliveryState.SCHEDULED
    assert updated.deliveries["webhook-0"].cycle_started_at is not None
