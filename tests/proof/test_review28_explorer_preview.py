"""Review rev28: the explorer's preview check (explorer/preview_check.py) against a planted preview
that promises what cannot happen. Sized in steps, never in seconds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from reminders.adapters.codec import reminder_from_item
from reminders.domain.schedule import iso
from reminders.services import support
from reminders_ops.proof.explorer.engine import explore

STEPS = 1500
SEED = 7


def test_the_explorer_finds_a_promise_not_kept_when_the_preview_promises_a_cancelled_reminder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = support.preview
    planted = 0

    def preview(store: Any, now: Any, minutes: int, shards: int, **kwargs: Any) -> dict[str, Any]:
        nonlocal planted
        out = real(store, now, minutes, shards, **kwargs)
        account = kwargs.get("account_id")
        for item in list(store.items.values()) if account is not None else []:
            if item.get("acct") != account:
                continue
            r = reminder_from_item(item)
            for cid, d in r.deliveries.items():
                if d.state.value == "canceled":  # the defect issue 28 item 1 reported first
                    line = {"at": iso(now + timedelta(minutes=1)), "reminder_id": r.id, "channel_id": cid}
                    out["attempts"].append({**line, "reason": None, "shifted_from": None})
                    planted += 1
        return out

    monkeypatch.setattr(support, "preview", preview)
    outcome = explore(SEED, STEPS)
    assert planted > 0
    assert outcome.violation is not None and outcome.violation.kind == "preview_promise_not_kept", (
        outcome.violation
    )
