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
