"""A receiver's signed receipt end to end on the in-memory world (MISSION §8: survivors of
`make mutate` in services/receipts.py): the inbox stores it with its 30-day expiry, the stream's
merge (``apply_item``) records it on the delivery it names, and a refusal is counted."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.domain.receipts import Receipt, ReceiptRejectedError, ReceiptStatus, decode
from reminders.domain.signing import signing_key
from reminders.domain.states import DeliveryState
from reminders.services.receipts import RETENTION_SECONDS
from standardwebhooks.webhooks import Webhook

from tests.unit.fakes import World


def _signed(body: bytes) -> dict[str, str]:
    """Signed now (Standard Webhooks checks the timestamp against the real clock)."""
    at, msg_id = datetime.now(UTC), "msg_1"
    sig = Webhook(signing_key(DEV_WEBHOOK_SECRET)).sign(msg_id, at, body.decode())
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": sig}


def test_a_signed_receipt_is_stored_to_expire_and_merged_into_the_delivery_it_names() -> None:
    w = World()
    r = w.create("k", due_in=0)
    w.poll()
    key = w.delivery(r.id).key
    body = json.dumps(
        {
            "webhook_id": key,
            "reminder_id": r.id,
            "event_id": "evt-7",
            "status": "rejected",
            "reason": "schema",
            "event_time": "2026-11-29T11:59:00Z",
        }
    ).encode()
    now = w.clock.now()
    assert w.receipt_inbox.accept(body, _signed(body)) == "accepted"
    (item,) = w.receipt_log.items.values()
    assert w.telemetry.by_dimension[("receipt_accepted", (("status", "rejected"),))] == 1
    assert int(item["expires_at"]) == int(now.timestamp()) + RETENTION_SECONDS  # DynamoDB TTL reaps it
    assert w.receipt_merger.apply_item(item) == "noted"  # what the table's stream does
    assert w.receipt_merger.apply_item(item) == "duplicate"  # a replayed stream record writes nothing
    assert sum(1 for a in w.delivery(r.id).history if a.event == "receipt") == 1
    stored = decode(w.delivery(r.id).receiver_receipt)
    assert stored is not None and (stored.event_id, stored.status) == ("evt-7", ReceiptStatus.REJECTED)
    logged = [f for action, f in w.telemetry.logs if action == "receipt"]
    assert logged == [{"reminder_id": r.id, "delivery_key": key, "outcome": "noted"}]  # delivered stays


def test_a_refused_receipt_is_counted_when_it_is_unsigned() -> None:
    w = World()
    with pytest.raises(ReceiptRejectedError):
        w.receipt_inbox.accept(b"{}", {})
    assert w.telemetry.counts["receipt_refused"] == 1


def test_a_receipt_settles_a_dead_letter_delivered_with_no_dlq_message_left_pending() -> None:
    w = World()
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["timeout_after", "400"])  # it may have arrived; then a refusal ends it
    while w.delivery(r.id).state is not DeliveryState.DEAD_LETTER:
        w.clock.advance(max([0.0] + [m["visible_in"] for m in w.queued()]))
        w.poll()
    d = w.delivery(r.id)
    w.store.save_delivery(r.id, replace(d, dlq_pending=True), d.rev)  # its DLQ message not sent yet
    receipt = Receipt("evt-9", ReceiptStatus.PROCESSED, "2026-11-29T12:00:00.000000Z")
    assert w.receipt_merger.apply(r.id, "webhook-0", key, receipt) == "reconciled"
    after = w.delivery(r.id)
    assert after.state is DeliveryState.DELIVERED and after.dlq_pending is False


def test_a_receipt_whose_log_write_lost_its_answer_is_answered_accepted_not_already_received() -> None:
    """Issue 26 (every API answer agrees with what was stored): the receipt's conditional put lands,
    its answer is lost, botocore's retry finds the item and the log answers False. The inbox read
    that as a replay of an earlier receipt and answered 409 ``already_received`` — for the receipt
    this very request stored (the explorer's ``answer_disagrees_with_store``, seed 7)."""
    w = World()
    r = w.create("k", due_in=0)
    w.poll()
    key = w.delivery(r.id).key
    doc = {"webhook_id": key, "reminder_id": r.id, "event_id": "evt-1", "status": "processed"}
    body = json.dumps({**doc, "event_time": "2026-11-29T11:59:00Z"}).encode()
    w.receipt_log.lose_next_answer("put_new")
    assert w.receipt_inbox.accept(body, _signed(body)) == "accepted"
    assert len(w.receipt_log.items) == 1
    with pytest.raises(ReceiptRejectedError):  # a true replay (later, the same event id) still is one
        w.clock.advance(1)
        w.receipt_inbox.accept(body, _signed(body))
