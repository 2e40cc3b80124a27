"""What the delivery steps share (MISSION §8: survivors of `make mutate` in
services/delivery/messages.py): a record the worker cannot read is refused saying why (what an
operator reads on the failed record before maxReceiveCount moves it to the dead-letter queue); a bare
URL's rate and health bucket is its account's own; a batch's lateness skips what it cannot read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from reminders.domain.errors import MalformedMessageError
from reminders.domain.models import Attempt, ChannelType, Delivery, destination_tag
from reminders.domain.retry import Action, Decision
from reminders.domain.schedule import iso
from reminders.services.delivery.messages import (
    PARKED_LEASE_ATTRIBUTE,
    DeliveryMessage,
    MessageContext,
    _copy_of_parked,
    _still_parked_until,
    batch_behind_seconds,
    destination_bucket,
    has_acceptance,
    may_have_been_accepted,
)


@pytest.mark.parametrize("body", [["reminder_id"], "rem_1", None, 7])
def test_a_record_is_refused_as_not_an_object_when_its_body_is_no_json_object(body: object) -> None:
    with pytest.raises(MalformedMessageError, match=r"^body is not a JSON object$"):
        DeliveryMessage.parse(body)


@pytest.mark.parametrize("missing", ["reminder_id", "channel_id", "version"])
def test_a_record_is_refused_naming_the_field_when_a_field_is_missing(missing: str) -> None:
    body: dict[str, object] = {"reminder_id": "rem_1", "channel_id": "webhook-0", "version": 1}
    del body[missing]
    with pytest.raises(MalformedMessageError, match=rf"^missing {missing}$"):
        DeliveryMessage.parse(body)


def test_a_record_is_read_whole_when_every_field_has_its_type() -> None:
    body = {"reminder_id": "rem_1", "channel_id": "webhook-0", "version": 3}
    assert DeliveryMessage.parse(body) == DeliveryMessage("rem_1", "webhook-0", 3)
    wrong = r"^reminder_id/channel_id must be strings, version an integer$"
    with pytest.raises(MalformedMessageError, match=wrong):
        DeliveryMessage.parse({**body, "version": "3"})


def test_each_account_and_origin_gets_its_own_rate_and_health_bucket_when_it_posts_to_a_bare_url() -> None:
    d = Delivery("webhook-0", ChannelType.WEBHOOK, "https://hooks.example.com/a", "dlv_x")
    mine, theirs = destination_bucket(d, "acct-1"), destination_bucket(d, "acct-2")
    assert mine != theirs  # another account's failures never hold this account's deliveries
    assert mine == destination_bucket(replace(d, destination="https://HOOKS.example.com/b"), "acct-1")
    assert mine != destination_bucket(replace(d, destination="https://other.example.org/a"), "acct-1")
    email = Delivery("email-0", ChannelType.EMAIL, "a@example.com", "dlv_y")
    assert destination_bucket(email, "acct-1") == "email"


@pytest.mark.parametrize("unreadable", [None, "", "not-a-time"])
def test_a_batch_is_behind_by_its_latest_record_when_an_earlier_record_has_no_readable_due(
    unreadable: str | None,
) -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    dues = [unreadable, iso(now - timedelta(seconds=30)), unreadable, iso(now - timedelta(seconds=90))]
    assert batch_behind_seconds(dues, now) == 90.0
    assert batch_behind_seconds([iso(now + timedelta(seconds=5)), unreadable], now) == 0.0  # none late


@pytest.mark.parametrize(
    ("sent_to", "outcome", "counts"),
    [
        ("https://hooks.example.com/now", "accepted", True),  # this key, this destination
        ("", "accepted", True),  # a line from before destinations were tagged: the only one there was
        ("", "reconciled_conflict", True),
        ("https://hooks.example.com/before", "accepted", False),  # accepted at a corrected-away URL
        ("https://hooks.example.com/now", "timeout", False),  # possible, not on record
    ],
)
def test_an_acceptance_is_on_record_only_when_it_went_to_the_current_destination(
    sent_to: str, outcome: str, counts: bool
) -> None:
    line = Attempt(at="2026-11-29T12:00:00.000000Z", event="attempt", outcome=outcome)
    if sent_to:
        line = replace(line, dest=destination_tag(sent_to))
    d = Delivery("webhook-0", ChannelType.WEBHOOK, "https://hooks.example.com/now", "dlv_x", history=[line])
    assert has_acceptance(d) is counts


def test_a_possible_acceptance_counts_only_when_it_may_have_reached_the_current_destination() -> None:
    now, before = "https://hooks.example.com/now", "https://hooks.example.com/before"
    d = Delivery("webhook-0", ChannelType.WEBHOOK, now, "dlv_x", maybe_accepted=[destination_tag(before)])
    assert not may_have_been_accepted(d)  # a 409 here is then no proof of an earlier send
    assert may_have_been_accepted(replace(d, maybe_accepted=[destination_tag(now)]))


def test_only_the_parked_message_carries_a_parked_delivery_while_its_lease_is_ahead() -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    lease = now + timedelta(seconds=600)
    pu = str(int(lease.timestamp()))
    d = Delivery("webhook-0", ChannelType.WEBHOOK, "https://hooks.example.com/a", "dlv_x")
    parked = replace(d, parked_until=iso(lease))

    def ctx(attributes: dict[str, str] | None) -> MessageContext:
        return MessageContext("m-1", "h-1", attributes=attributes)

    assert not _copy_of_parked(d, ctx(None), now)  # not parked: no message is a copy
    assert not _copy_of_parked(parked, ctx({PARKED_LEASE_ATTRIBUTE: pu}), now)  # the parked message
    assert _copy_of_parked(parked, ctx({PARKED_LEASE_ATTRIBUTE: str(int(now.timestamp()))}), now)
    assert _copy_of_parked(parked, ctx({"due": iso(now)}), now)  # an SQS duplicate queued before
    assert _copy_of_parked(parked, ctx(None), now)
    # Once the lease has passed (from the very second it ends), any message carries it on.
    assert not _copy_of_parked(parked, ctx(None), lease)
    assert not _copy_of_parked(parked, ctx({"due": iso(now)}), lease + timedelta(seconds=1))


@pytest.mark.parametrize(
    ("decision", "keeps"),
    [
        (Decision(Action.RETRY, delay_seconds=60, spends_attempt=False), True),  # a failed probe
        (Decision(Action.RETRY, delay_seconds=60), False),  # a budgeted retry: the park is over
        (Decision(Action.HOLD, delay_seconds=60, spends_attempt=False), False),
        (Decision(Action.DELIVER), False),
    ],
)
def test_an_attempt_keeps_the_park_only_when_it_was_a_failed_probe_of_a_held_endpoint(
    decision: Decision, keeps: bool
) -> None:
    lease = "2026-11-29T13:00:00.000000Z"
    d = Delivery("webhook-0", ChannelType.WEBHOOK, "ep_1", "dlv_x", parked_until=lease)
    assert _still_parked_until(d, decision) == (lease if keeps else None)
