"""The order-insensitive merge of receiver receipts (issue 19, MISSION §5), by permutations: every
arrival order of the same receipts — duplicated, late, tied — ends in the same standing receipt,
and a delivered delivery is delivered after every one of them."""

from __future__ import annotations

import itertools

import pytest
from reminders.domain.receipts import Receipt, ReceiptStatus, decode, encode, merge
from reminders.domain.states import DeliveryState

from tests.unit.fakes import World

P, R = ReceiptStatus.PROCESSED, ReceiptStatus.REJECTED
RECEIPTS = [
    Receipt("evt-1", R, "2026-11-29T12:00:01.000000Z", "schema"),
    Receipt("evt-2", P, "2026-11-29T12:00:02.000000Z"),
    Receipt("evt-3", R, "2026-11-29T12:00:02.000000Z", "tie-loses-to-processed"),
    Receipt("evt-4", P, "2026-11-29T12:00:00.500000Z"),
    Receipt("evt-2", P, "2026-11-29T12:00:02.000000Z"),  # a duplicate
]


def _fold(receipts: tuple[Receipt, ...]) -> Receipt | None:
    standing = None
    for r in receipts:
        standing = merge(standing, r)
    return standing


def test_merge_is_order_insensitive_over_every_permutation() -> None:
    results = {_fold(p) for p in itertools.permutations(RECEIPTS)}
    assert results == {RECEIPTS[1]}  # the latest; on the tie, processed outranks rejected


def test_merge_is_idempotent_and_commutative_pairwise() -> None:
    for a, b in itertools.product(RECEIPTS, repeat=2):
        assert merge(merge(None, a), a) == a
        assert merge(merge(None, a), b) == merge(merge(None, b), a)


def test_the_compact_form_round_trips() -> None:
    for r in RECEIPTS:
        back = decode(encode(r))
        assert back is not None and back.order_key() == r.order_key()


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_every_arrival_order_leaves_the_delivered_delivery_delivered_with_the_same_standing_receipt(
    order: tuple[int, ...],
) -> None:
    w = World()
    r = w.create("k1")
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED
    for i in order:
        w.receipt_merger.apply(r.id, "webhook-0", d.key, RECEIPTS[i])
        assert w.delivery(r.id).state is DeliveryState.DELIVERED  # never regresses, at any step
    w.receipt_merger.apply(r.id, "webhook-0", d.key, RECEIPTS[4])  # the duplicate, last
    after = w.delivery(r.id)
    assert decode(after.receiver_receipt) == Receipt("evt-2", P, RECEIPTS[1].event_time)
    assert sum(1 for a in after.history if a.event == "receipt") == 4


def test_a_merged_receipt_never_moves_a_delivery_with_no_claim_to_its_destination() -> None:
    """Issue 24: even a stored receipt (as if accepted) leaves a queued, never-attempted delivery
    queued — only its annotation moves; a claimed one (its lease on the row, the outcome not yet
    written) is moved to delivered by the same receipt, whatever the order."""
    from dataclasses import replace

    w = World()
    r = w.create("k-unclaimed", due_in=3600)
    d = w.delivery(r.id)
    assert d.state in (DeliveryState.SCHEDULED, DeliveryState.QUEUED) and not d.history
    assert w.receipt_merger.apply(r.id, "webhook-0", d.key, RECEIPTS[1]) == "noted"
    after = w.delivery(r.id)
    assert after.state is d.state and decode(after.receiver_receipt) is not None
    leased = replace(after, state=DeliveryState.SENDING, lease_owner="w1", lease_until="2999-01-01T00:00:00Z")
    assert w.store.save_delivery(r.id, leased, after.rev)
    assert w.receipt_merger.apply(r.id, "webhook-0", d.key, RECEIPTS[3]) == "reconciled"
    assert w.delivery(r.id).state is DeliveryState.DELIVERED


def test_receipt_refusal_does_the_same_lookups_when_the_delivery_is_missing_or_badly_signed() -> None:
    """Verify-first and one answer (issue 24 item 3) hold for the bytes; the work before the answer
    must not depend on what exists either: one secrets look-up (one endpoint read in the runtime)
    whether the body names a sent delivery or nothing at all."""
    import json

    from reminders.adapters.receipts import SharedReceiverSecrets
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders.domain.receipts import ReceiptRejectedError
    from standardwebhooks.webhooks import Webhook

    w = World()
    r = w.create("k-oracle")
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED
    lookups: list[tuple[str, str]] = []
    shared = SharedReceiverSecrets(lambda: DEV_WEBHOOK_SECRET)

    class Counting:
        def secrets_for(self, account_id: str, destination: str) -> list[str]:
            lookups.append((account_id, destination))
            return shared.secrets_for(account_id, destination)

    w.receipt_inbox.secrets = Counting()
    forged = Webhook("whsec_" + "Zm9yZ2Vk" * 4)  # the attacker's own secret: a bad signature

    def refused(webhook_id: str, reminder_id: str) -> tuple[int, str, int]:
        body = json.dumps(
            {
                "webhook_id": webhook_id,
                "reminder_id": reminder_id,
                "status": "processed",
                "event_id": "evt-oracle",
                "event_time": "2026-11-29T12:00:00Z",
            }
        ).encode()
        now = w.clock.now()
        headers = {
            "webhook-id": "msg_1",
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": forged.sign("msg_1", now, body.decode()),
        }
        before = len(lookups)
        with pytest.raises(ReceiptRejectedError) as err:
            w.receipt_inbox.accept(body, headers)
        return err.value.status, str(err.value), len(lookups) - before

    sent = refused(d.key, r.id)
    missing = refused("dlv_" + "0" * 32, "rem_" + "0" * 32)
    assert sent[:2] == missing[:2]  # one answer, whatever exists
    assert sent[2] == missing[2] == 1, (sent, missing)


def test_receipt_moves_nothing_when_merged_after_a_correction_to_another_destination() -> None:
    """A receipt proves only the webhook sent where it was verified (issue 24 item 2). Accepted while
    the claim to X was on the row (signed with X's secret), it may reach the merge (the table's
    stream, which retries for up to a day) after the attempt to X failed for good, the destination
    was corrected to Y and a claim to Y is in flight: it proves nothing about Y."""
    import json
    from dataclasses import replace
    from datetime import UTC, datetime

    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
    from standardwebhooks.webhooks import Webhook

    w = World()
    r = w.create("k-moved", due_in=3600)
    d = w.delivery(r.id)
    to_x = replace(d, state=DeliveryState.SENDING, lease_owner="w1", lease_until="2999-01-01T00:00:00Z")
    assert w.store.save_delivery(r.id, to_x, d.rev)
    body = json.dumps(
        {
            "webhook_id": d.key,
            "reminder_id": r.id,
            "status": "processed",
            "event_id": "evt-x",
            "event_time": "2026-11-29T12:00:00Z",
        }
    ).encode()
    now = datetime.now(UTC)  # the library checks its tolerance against the wall clock
    headers = {
        "webhook-id": "msg_x",
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(signing_key(DEV_WEBHOOK_SECRET)).sign("msg_x", now, body.decode()),
    }
    w.receipt_inbox.accept(body, headers)  # verified for the claim to X; the merge is later
    (item,) = w.receipt_log.items.values()
    # The attempt to X ends refused (no evidence), the destination is corrected to Y, a claim to Y
    # is in flight: as the row stands when the stream's retry finally merges the receipt.
    before = w.delivery(r.id)
    to_y = replace(
        before, destination="https://y.example.com/hook", lease_owner="w2", lease_until="2999-01-01T00:00:00Z"
    )
    assert not to_y.may_have_been_accepted()
    assert w.store.save_delivery(r.id, to_y, before.rev)
    w.receipt_merger.apply_item(item)
    after = w.delivery(r.id)
    assert after.state is DeliveryState.SENDING, after.state  # its own course: Y's outcome decides
