"""Issue 19 in the randomized fault run: signed receiver receipts in random order, resent, late, and
redelivered by the table's stream. A delivered delivery never regresses, each receipt merges once,
and the standing receipt is the latest stored one whatever the arrival order; the run catches an
order-dependent merge and a merge that moves a delivered delivery."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from reminders.domain.states import DeliveryState
from reminders.services import receipts as receipts_service
from reminders_ops import faultrun

from tests.proof.test_fault_run import HOT

RECEIPTS = replace(HOT, receipt=0.8, receipt_resent=0.3, receipt_stream_redelivered=0.2)


def test_fault_run_receipts_out_of_order_duplicated_late_never_regress() -> None:
    report = faultrun.run(seed=17, n=200, plan=RECEIPTS)
    text = report.format()
    assert report.ok, text
    assert report.receipt_regressions == 0 and report.receipts_merged_twice == 0, text
    assert report.receipt_standing_wrong == 0, text
    for kind in ("receipt_resent", "receipt_stream_redelivered", "receipt_older_after_newer"):
        assert report.injected[kind] > 0, (kind, text)
    assert report.receipt_answers["409"] > 0 and report.receipt_merges["duplicate"] > 0, text
    assert report.receipt_merges["stale"] > 0, text


def test_fault_run_catches_an_order_dependent_receipt_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: the last receipt to arrive stands (not the latest event time)."""
    monkeypatch.setattr(receipts_service, "merge", lambda current, incoming: incoming)
    report = faultrun.run(seed=17, n=200, plan=RECEIPTS)
    assert not report.ok
    assert report.receipt_standing_wrong > 0


def test_fault_run_catches_a_receipt_that_moves_a_delivered_delivery(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: a 'rejected' receipt sends a delivered delivery back to retryable."""
    real = receipts_service.ReceiptMerger.apply

    def apply(self: Any, reminder_id: str, channel_id: str, webhook_id: str, receipt: Any, **kw: Any) -> str:
        outcome = real(self, reminder_id, channel_id, webhook_id, receipt, **kw)
        reminder = self.store.get(reminder_id)
        d = reminder.deliveries[channel_id] if reminder else None
        if d is not None and receipt.status.value == "rejected" and d.state is DeliveryState.DELIVERED:
            from dataclasses import replace as _replace

            self.store.save_delivery(reminder_id, _replace(d, state=DeliveryState.RETRYABLE), d.rev)
        return outcome

    monkeypatch.setattr(receipts_service.ReceiptMerger, "apply", apply)
    report = faultrun.run(seed=17, n=200, plan=RECEIPTS)
    assert not report.ok
    assert report.receipt_regressions > 0
