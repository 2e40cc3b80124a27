"""Bounces, complaints and the per-account suppression list (issue 19): an email to a suppressed
address ends at once as ``dead_letter`` ``suppressed`` (no send, no attempt); a redrive re-checks;
feedback after delivery annotates the delivery without changing its state."""

from __future__ import annotations

import pytest
from reminders.adapters.codec import reminder_to_item
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.domain.suppression import ALL_KINDS, SuppressionEntry, SuppressionReason, address_hash
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import World

EMAIL = "user@example.com"
MAIL = (ChannelSpec(ChannelType.EMAIL, EMAIL),)


@pytest.fixture
def w() -> World:
    return World()


def _suppress(w: World, account: str = "acct-1", scope: str = ALL_KINDS, address: str = EMAIL) -> None:
    w.suppressions.add(
        SuppressionEntry(
            account, address_hash(address), SuppressionReason.BOUNCE, "test", "2026-11-29T12:00:00Z", scope
        )
    )


def _deliver(w: World, key: str, **kwargs: object) -> str:
    r = w.create(key, channels=MAIL, **kwargs)  # type: ignore[arg-type]
    w.poll("email")
    return r.id


def test_email_to_a_suppressed_address_dead_letters_suppressed_without_send_or_attempt(w: World) -> None:
    _suppress(w, address="  USER@Example.com ")  # the hash ignores case and surrounding space
    r = w.create("k1", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "suppressed"
    assert d.attempts == 0 and w.sender.calls == []
    assert [a.event for a in d.history] == ["suppressed"]
    (dl,) = w.sqs.receive("email-dlq")
    assert dl.attributes["reason"] == "suppressed"


def test_suppression_is_per_account_another_tenants_recipient_is_still_sent(w: World) -> None:
    _suppress(w, account="acct-2")
    r = w.create("k1", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["delivered"]
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_a_kind_scoped_entry_suppresses_that_kind_only(w: World) -> None:
    _suppress(w, scope="other-kind")
    r = w.create("k1", channels=MAIL)  # kind "renewal"
    assert [x.outcome for x in w.poll("email")] == ["delivered"]
    _suppress(w, scope="renewal")
    r2 = w.create("k2", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED
    assert w.delivery(r2.id, "email-0").dead_letter_reason == "suppressed"


def test_webhooks_are_not_checked_against_the_email_suppression_list(w: World) -> None:
    _suppress(w)
    r = w.create("k1")
    assert [x.outcome for x in w.poll("webhook")] == ["delivered"]
    assert w.delivery(r.id).state is DeliveryState.DELIVERED


def test_dlq_redrive_of_a_suppressed_dead_letter_rechecks_the_list(w: World) -> None:
    _suppress(w)
    r = w.create("k1", channels=MAIL)
    w.poll("email")
    (dl,) = w.sqs.receive("email-dlq")
    w.sqs.delete("email-dlq", dl.receipt_handle)
    w.sqs.send("email", dl.body, attributes=dl.attributes)  # still suppressed: suppressed again
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.sender.calls == []
    (dl,) = w.sqs.receive("email-dlq")
    w.sqs.delete("email-dlq", dl.receipt_handle)
    assert w.suppressions.remove("acct-1", address_hash(EMAIL)) == 1  # the operator removes it
    w.sqs.send("email", dl.body, attributes=dl.attributes)
    assert [x.outcome for x in w.poll("email")] == ["delivered"]
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.DELIVERED and d.cycle == 2 and len(w.sender.calls) == 1


def test_permanent_bounce_suppresses_the_next_reminder_and_annotates_the_delivered_one(w: World) -> None:
    rid = _deliver(w, "k1")
    d = w.delivery(rid, "email-0")
    out = w.reconciler.provider_feedback(
        rid,
        "email-0",
        d.key,
        "bounced",
        "ses-1",
        recipients=[EMAIL],
        suppress=True,
        source="ses:bounce:f1",
        detail="Permanent/General",
    )
    assert out == "bounced_noted_delivered"
    after = w.delivery(rid, "email-0")
    assert after.state is DeliveryState.DELIVERED and after.feedback == "bounced"
    assert after.history[-1].outcome == "bounced" and after.history[-1].receipt == "ses-1"
    (entry,) = w.suppressions.list("acct-1")
    assert entry.reason is SuppressionReason.BOUNCE and entry.source == "ses:bounce:f1"
    assert entry.address_hash == address_hash(EMAIL) and EMAIL not in repr(entry)
    r2 = w.create("k2", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(r2.id, "email-0").dead_letter_reason == "suppressed"
    # the same SES event again (EventBridge is at least once): nothing changes
    again = w.reconciler.provider_feedback(
        rid, "email-0", d.key, "bounced", "ses-1", recipients=[EMAIL], suppress=True, source="ses:bounce:f1"
    )
    assert again == "bounced_known" and len(w.suppressions.list("acct-1")) == 1


def test_transient_bounce_annotates_without_suppressing(w: World) -> None:
    rid = _deliver(w, "k1")
    d = w.delivery(rid, "email-0")
    w.reconciler.provider_feedback(
        rid, "email-0", d.key, "bounced", "ses-1", recipients=[EMAIL], suppress=False, source="ses"
    )
    assert w.suppressions.list("acct-1") == []
    assert w.delivery(rid, "email-0").feedback == "bounced"


def test_complaint_after_delivery_is_recorded_without_changing_state_and_outranks_a_bounce(w: World) -> None:
    rid = _deliver(w, "k1")
    key = w.delivery(rid, "email-0").key
    w.reconciler.provider_feedback(
        rid, "email-0", key, "complained", "ses-1", recipients=[EMAIL], suppress=True, source="s"
    )
    w.reconciler.provider_feedback(
        rid, "email-0", key, "rejected", "ses-1", recipients=[EMAIL], suppress=False, source="s"
    )
    d = w.delivery(rid, "email-0")
    assert d.state is DeliveryState.DELIVERED and d.feedback == "complained"
    (entry,) = w.suppressions.list("acct-1")
    assert entry.reason is SuppressionReason.COMPLAINT


def test_crash_after_send_then_bounce_event_reconciles_delivered_and_is_not_resent(w: World) -> None:
    r = w.create("k1", channels=MAIL)
    key = w.delivery(r.id, "email-0").key
    w.sender.script(key, ["timeout_after"])
    w.poll("email")
    assert w.delivery(r.id, "email-0").state is DeliveryState.RETRYABLE
    out = w.reconciler.provider_feedback(
        r.id, "email-0", key, "bounced", "ses-9", recipients=[EMAIL], suppress=True, source="s"
    )
    assert out == "bounced_reconciled"
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.DELIVERED and d.feedback == "bounced" and d.receipt == "ses-9"
    assert [a.outcome for a in d.history[-2:]] == ["accepted", "bounced"]


def test_feedback_for_an_unknown_delivery_is_unmatched_and_suppresses_nothing(w: World) -> None:
    out = w.reconciler.provider_feedback(
        "rem_" + "0" * 32,
        "email-0",
        "dlv_x",
        "complained",
        "ses-1",
        recipients=[EMAIL],
        suppress=True,
        source="s",
    )
    assert out == "unmatched" and w.suppressions.items == {}


def test_a_delivered_item_with_feedback_stays_under_one_write_unit(w: World) -> None:
    rid = _deliver(w, "renewal-reminder:acct-1:2026-12-20:email")
    key = w.delivery(rid, "email-0").key
    w.reconciler.provider_feedback(
        rid,
        "email-0",
        key,
        "complained",
        "0100018c-ses-message-id-000000000000",
        recipients=[EMAIL],
        suppress=True,
        source="s",
    )
    import json

    size = len(json.dumps(reminder_to_item(w.get(rid)), default=str).encode())
    assert size < 1024, size
    assert w.delivery(rid, "email-0").feedback == "complained"


def test_an_item_written_before_feedback_existed_still_reads_with_no_feedback() -> None:
    import json
    from pathlib import Path

    from reminders.adapters.codec import reminder_from_item

    item = json.loads(
        (Path(__file__).parents[1] / "proof" / "data" / "item_written_2026-11-30.json").read_text()
    )
    r = reminder_from_item(item)
    assert all(d.feedback is None for d in r.deliveries.values())
    assert all("fb" not in m for m in reminder_to_item(r)["dl"].values())  # omitted at its default
