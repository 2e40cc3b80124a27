"""Reminder intents (create, get, find, reschedule, cancel) with fakes: in-memory store and SQS."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.errors import ConflictError, NotFoundError, ProducersPausedError, ValidationError
from reminders.domain.models import ChannelType, delivery_key, reminder_id
from reminders.domain.states import DeliveryState
from reminders.services.intents import ChannelSpec, Reminders

from tests.unit.fakes import EMAIL, WEBHOOK_URL, World

BOTH = (ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.EMAIL, EMAIL))


@pytest.fixture
def w() -> World:
    return World()


# -- create: idempotency by business key ---------------------------------------------------------------
def test_same_key_same_body_returns_the_existing_reminder(w: World) -> None:
    first, created = w.reminders.create(w.new("renewal:acct-1:2026-12-20", due_in=60))
    again, created_again = w.reminders.create(w.new("renewal:acct-1:2026-12-20", due_in=60))
    assert created and not created_again
    assert again.id == first.id and again.version == 1
    assert len(w.store.items) == 1
    assert w.telemetry.counts["create_duplicate"] == 1
    # The repeat enqueues again (the first SendMessage may have failed); the claim absorbs it.
    assert [m["version"] for m in w.queued()] == [1, 1]
    w.clock.advance(60)
    w.poll()
    assert w.sender.sends(first.deliveries["webhook-0"].key) == 1
    assert w.telemetry.by_dimension[("duplicate_suppressed", (("reason", "delivered"),))] == 1


def test_same_key_same_body_later_is_still_the_same_reminder(w: World) -> None:
    """A client retrying a create a little later sends the same absolute due time."""
    cmd = w.new("k1", due_in=3600)
    first, _ = w.reminders.create(cmd)
    w.clock.advance(30)
    again, created = w.reminders.create(cmd)
    assert not created and again.id == first.id


def test_same_key_different_body_is_a_conflict_and_changes_nothing(w: World) -> None:
    first, _ = w.reminders.create(w.new("k1", due_in=60, data={"plan": "pro"}))
    before = dict(w.store.items[first.id])
    with pytest.raises(ConflictError, match="different body"):
        w.reminders.create(w.new("k1", due_in=60, data={"plan": "basic"}))
    with pytest.raises(ConflictError):
        w.reminders.create(w.new("k1", due_in=120, data={"plan": "pro"}))
    assert w.store.items[first.id] == before
    assert len(w.queued()) == 1


def test_keys_are_unique_per_account_not_across_accounts(w: World) -> None:
    a, created_a = w.reminders.create(w.new("shared-key", account_id="acct-a", due_in=60))
    b, created_b = w.reminders.create(w.new("shared-key", account_id="acct-b", due_in=60))
    assert created_a and created_b and a.id != b.id
    assert a.id == reminder_id("acct-a", "shared-key")
    assert a.deliveries["webhook-0"].key != b.deliveries["webhook-0"].key
    assert w.reminders.find("acct-a", "shared-key").id == a.id
    assert w.reminders.find("acct-b", "shared-key").id == b.id


def test_each_channel_is_its_own_delivery_with_its_own_key_and_queue(w: World) -> None:
    r = w.create("k", due_in=10, channels=BOTH)
    assert set(r.deliveries) == {"webhook-0", "email-0"}
    assert r.deliveries["webhook-0"].key == delivery_key("acct-1", "k", "webhook-0")
    assert r.deliveries["email-0"].key == delivery_key("acct-1", "k", "email-0")
    assert [m["channel_id"] for m in w.queued("webhook")] == ["webhook-0"]
    assert [m["channel_id"] for m in w.queued("email")] == ["email-0"]


def test_two_webhooks_get_distinct_channel_ids(w: World) -> None:
    two = (
        ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL),
        ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL + "/2"),
    )
    r = w.create("k", due_in=10, channels=two)
    assert set(r.deliveries) == {"webhook-0", "webhook-1"}
    assert len({d.key for d in r.deliveries.values()}) == 2


# -- create: the delay window -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("due_in", "delay"), [(0, 0), (1, 1), (300, 300), (300.25, 300), (899, 899), (900, 900)]
)
def test_within_the_window_is_queued_at_once_with_the_exact_delay(
    w: World, due_in: float, delay: int
) -> None:
    r = w.create("k", due_in=due_in)
    assert r.deliveries["webhook-0"].state is DeliveryState.QUEUED
    (msg,) = w.queued()
    assert msg["visible_in"] == delay
    assert {k: msg[k] for k in ("reminder_id", "channel_id", "version")} == {
        "reminder_id": r.id,
        "channel_id": "webhook-0",
        "version": 1,
    }


@pytest.mark.parametrize("overdue", [1, 3600, 86400])
def test_overdue_is_queued_with_delay_zero(w: World, overdue: int) -> None:
    r = w.create("k", due_in=-overdue)
    assert r.deliveries["webhook-0"].state is DeliveryState.QUEUED
    assert [m["visible_in"] for m in w.queued()] == [0]


@pytest.mark.parametrize("due_in", [900.001, 901, 3600, 8 * 86400, 90 * 86400])
def test_beyond_the_window_is_scheduled_without_a_message(w: World, due_in: float) -> None:
    r = w.create("k", due_in=due_in)
    assert r.deliveries["webhook-0"].state is DeliveryState.SCHEDULED
    assert w.queued() == []
    item = w.store.items[r.id]
    assert item["gpk"].startswith((w.clock.now() + timedelta(seconds=due_in)).strftime("%Y%m%d%H%M"))
    assert item["w"] is False  # a dispatch entry, not a watch entry


def test_create_never_waits_for_a_provider(w: World) -> None:
    w.create("k", due_in=0)
    assert w.sender.calls == []


def test_destination_check_failure_writes_nothing(w: World) -> None:
    def refuse(spec: ChannelSpec) -> None:
        raise ValidationError("channels.url", "resolves to a private address")

    w.reminders.check_destination = refuse
    with pytest.raises(ValidationError) as err:
        w.create("k", due_in=0)
    assert err.value.field == "channels.url"
    assert w.store.items == {} and w.queued() == []


def test_paused_producers_are_refused(w: World) -> None:
    w.store.set_controls({"producers_paused": True})
    with pytest.raises(ProducersPausedError):
        w.create("k", due_in=0)
    assert w.store.items == {}


# -- read --------------------------------------------------------------------------------------------------
def test_get_and_find_unknown(w: World) -> None:
    with pytest.raises(NotFoundError):
        w.reminders.get("rem_" + "0" * 32)
    w.create("k", due_in=10)
    with pytest.raises(NotFoundError):
        w.reminders.find("acct-other", "k")
    with pytest.raises(NotFoundError):
        w.reminders.find("acct-1", "k2")


def test_scheduled_rows_passed_by_the_dispatcher_read_as_queued(w: World) -> None:
    r = w.create("k", due_in=3600)
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "scheduled"}
    w.clock.advance(3600 - 600)
    w.run_shards()
    assert w.delivery(r.id).state is DeliveryState.SCHEDULED  # no per-reminder write ...
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "queued"}  # ... the checkpoint says


# -- reschedule --------------------------------------------------------------------------------------------
def test_reschedule_bumps_the_version_and_makes_queued_messages_stale(w: World) -> None:
    r = w.create("k", due_in=60)
    updated = w.reminders.reschedule(r.id, w.clock.now() + timedelta(seconds=120))
    assert updated.version == 2
    assert updated.deliveries["webhook-0"].state is DeliveryState.QUEUED
    assert updated.deliveries["webhook-0"].history[-1].event == "reschedule"
    msgs = w.queued()
    assert [(m["version"], m["visible_in"]) for m in msgs] == [(1, 60), (2, 120)]

    w.clock.advance(60)
    (old,) = w.receive()
    result = w.process(old)
    assert result.ack and result.outcome == "stale_skipped"
    w.sqs.delete("webhook", old.receipt_handle)
    assert w.sender.calls == []

    w.clock.advance(60)
    assert [r.outcome for r in w.poll()] == ["delivered"]
    assert w.sender.sends(r.deliveries["webhook-0"].key) == 1
    assert w.sender.calls[0].at == updated.due_at  # on time for the new due time, not the old one


def test_reschedule_beyond_the_window_goes_back_to_the_due_index(w: World) -> None:
    r = w.create("k", due_in=60)
    updated = w.reminders.reschedule(r.id, w.clock.now() + timedelta(days=2))
    assert updated.deliveries["webhook-0"].state is DeliveryState.SCHEDULED
    assert len(w.queued()) == 1  # only the old, now stale, message
    w.clock.advance(60)
    assert [x.outcome for x in w.poll()] == ["stale_skipped"]
    w.clock.advance(2 * 86400 - 60 - 300)
    w.run_shards()
    (msg,) = w.queued()
    # 300 s ahead exactly: the dispatcher waits 0.85 s for its send moment, so the message turns
    # visible 0.15 s before it is due (tests/unit/test_dispatch_phase.py)
    assert msg["version"] == 2 and msg["visible_in"] == 299


def test_reschedule_of_a_scheduled_reminder_into_the_window_enqueues_it(w: World) -> None:
    r = w.create("k", due_in=86400)
    updated = w.reminders.reschedule(r.id, w.clock.now() + timedelta(seconds=30))
    assert updated.deliveries["webhook-0"].state is DeliveryState.QUEUED
    assert [(m["version"], m["visible_in"]) for m in w.queued()] == [(2, 30)]


def test_reschedule_of_a_retryable_delivery_starts_over_at_the_new_time(w: World) -> None:
    """After an unambiguous retry (a connection refused: nothing reached the receiver). After a
    500 or a timeout a reschedule is refused (tests/unit/test_corrections.py)."""
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["connection"])
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    updated = w.reminders.reschedule(r.id, w.clock.now() + timedelta(seconds=5))
    d = updated.deliveries["webhook-0"]
    assert d.state is DeliveryState.QUEUED and d.next_attempt_at is None
    assert d.attempts == 1  # the budget is per delivery, a reschedule does not refill it


def test_reschedule_when_everything_is_terminal_is_a_conflict(w: World) -> None:
    r = w.create("k", due_in=0)
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DELIVERED
    with pytest.raises(ConflictError):
        w.reminders.reschedule(r.id, w.clock.now() + timedelta(hours=1))
    assert w.get(r.id).version == 1


# -- cancel ------------------------------------------------------------------------------------------------
def test_cancel_after_enqueue_makes_the_message_a_no_op(w: World) -> None:
    r = w.create("k", due_in=30, channels=BOTH)
    canceled = w.reminders.cancel(r.id)
    assert {d.state for d in canceled.deliveries.values()} == {DeliveryState.CANCELED}
    w.clock.advance(30)
    assert [x.outcome for x in w.poll("webhook") + w.poll("email")] == ["canceled_skipped"] * 2
    assert w.sender.calls == []
    assert w.queued("webhook") == w.queued("email") == []
    assert w.telemetry.by_dimension[("stale_skipped", (("reason", "canceled"),))] == 2


def test_cancel_of_a_scheduled_reminder(w: World) -> None:
    r = w.create("k", due_in=86400)
    assert w.reminders.cancel(r.id).deliveries["webhook-0"].state is DeliveryState.CANCELED
    w.clock.advance(86400)
    w.run_shards()
    w.poll()
    assert w.sender.calls == []


def test_cancel_leaves_terminal_deliveries_alone(w: World) -> None:
    r = w.create("k", due_in=0, channels=BOTH)
    w.poll("webhook")  # delivered
    canceled = w.reminders.cancel(r.id)
    assert canceled.deliveries["webhook-0"].state is DeliveryState.DELIVERED
    assert canceled.deliveries["email-0"].state is DeliveryState.CANCELED


def test_cancel_when_everything_is_terminal_is_a_conflict(w: World) -> None:
    r = w.create("k", due_in=0)
    w.poll()
    with pytest.raises(ConflictError, match="terminal"):
        w.reminders.cancel(r.id)
    r2 = w.create("k2", due_in=0)
    w.reminders.cancel(r2.id)
    with pytest.raises(ConflictError):
        w.reminders.cancel(r2.id)


def test_cancel_unknown_is_not_found(w: World) -> None:
    with pytest.raises(NotFoundError):
        w.reminders.cancel("rem_" + "1" * 32)


def test_a_create_beyond_the_maximum_age_is_refused_naming_due_at_and_writes_nothing(w: World) -> None:
    svc = Reminders(
        store=w.store, queues=w.queues, clock=w.clock, telemetry=w.telemetry, shards=1, max_age_seconds=3600
    )
    with pytest.raises(ValidationError) as err:
        svc.create(w.new("too-old", due_in=-3601))
    assert err.value.field == "due_at" and "maximum age" in err.value.message
    assert w.store.items == {} and w.queued() == []
    # an identical create retried after the maximum age still answers with the existing reminder
    cmd = w.new("retried", due_in=-10)
    first, created = svc.create(cmd)
    assert created
    w.clock.advance(7200)
    again, created = svc.create(cmd)
    assert not created and again.id == first.id
    with pytest.raises(ValidationError):
        svc.reschedule(first.id, w.clock.now() - timedelta(hours=2))


# -- the put-then-send gap (issue 10, item 5) ----------------------------------------------------------
class SendFails(Exception):
    pass


def fail_next_send(w: World) -> None:
    real = w.queues.send

    def send(channel_type: str, messages: Any) -> None:
        w.queues.send = real  # type: ignore[method-assign]
        raise SendFails("SendMessage failed after the row was written")

    w.queues.send = send  # type: ignore[method-assign]


def test_a_create_retried_after_its_send_failed_is_delivered_on_time(w: World) -> None:
    cmd = w.new("k", due_in=120)
    fail_next_send(w)
    with pytest.raises(SendFails):
        w.reminders.create(cmd)  # the row is durable, the message is not: the client sees a 5xx
    assert w.queued() == []
    again, created = w.reminders.create(cmd)  # the client retries the same create
    assert not created
    (msg,) = w.queued()
    assert msg["reminder_id"] == again.id and msg["visible_in"] == 120
    w.clock.advance(120)
    assert [r.outcome for r in w.poll()] == ["delivered"]
    assert w.sender.calls[0].at == cmd.due_at  # on time, not after the 15-minute watch lag
    assert w.telemetry.counts["create_reenqueued"] == 1


def test_a_repeated_create_does_not_enqueue_what_was_already_attempted_or_is_not_in_the_window(
    w: World,
) -> None:
    later = w.new("later", due_in=3600)
    w.reminders.create(later)
    w.reminders.create(later)
    assert w.queued() == []  # beyond the window: the dispatcher's job
    now = w.new("now", due_in=0)
    w.reminders.create(now)
    w.sender.script(w.delivery(reminder_id("acct-1", "now")).key, ["500"])
    assert [r.outcome for r in w.poll()] == ["retry_scheduled"]
    w.reminders.create(now)
    assert len(w.queued()) == 1  # only the retry's own message: attempted deliveries are left alone
