"""Issue 28 item 1 inside the explorer: preview's promise judged against what the consumers then do
(explorer/preview_check.py). A clean run holds in tests/proof/test_explorer.py (seeds 7 and 8); here
a planted defect in the preview is found, so the check is shown able to fail.

Sized in steps, never in seconds.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.schedule import iso, parse_iso
from reminders.services import support
from reminders_ops.proof.explorer.engine import explore

STEPS = 1500
SEED = 7  # its run judges promised and unpromised first attempts within their horizons


def _planted(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    real = support.preview

    def preview(*args: Any, **kwargs: Any) -> dict[str, Any]:
        out = real(*args, **kwargs)
        if kwargs.get("account_id") is not None:
            change(out)
        return out

    monkeypatch.setattr(support, "preview", preview)


def test_the_explorer_finds_an_attempt_the_preview_did_not_promise_when_the_preview_forgets_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _planted(monkeypatch, lambda out: out.update(attempts=[]))
    outcome = explore(SEED, STEPS)
    assert outcome.violation is not None and outcome.violation.kind == "preview_unpromised_attempt", (
        outcome.violation
    )


def test_the_explorer_finds_an_attempt_before_its_minute_when_the_preview_promises_it_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def later(out: dict[str, Any]) -> None:
        for a in out["attempts"]:
            a["at"] = iso(parse_iso(a["at"]) + timedelta(minutes=10))

    _planted(monkeypatch, later)
    outcome = explore(SEED, STEPS)
    assert outcome.violation is not None and outcome.violation.kind == "preview_attempt_before_its_minute", (
        outcome.violation
    )


def test_the_explorer_finds_a_promise_not_kept_when_a_consumer_puts_a_due_message_back_unrecorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Promised => attempted: the planted consumer puts every email message back without a claim or
    a line (a silent drop): preview promised it, a consumer had it after its minute, nothing shows."""
    from reminders.services.deliver import Deliverer
    from reminders.services.delivery.messages import RecordResult

    real = Deliverer.process

    def process(self: Deliverer, msg: Any, ctx: Any) -> RecordResult:
        if msg.channel_id.startswith("email"):
            return RecordResult(ack=False, visibility_seconds=30, outcome="planted")
        return real(self, msg, ctx)

    monkeypatch.setattr(Deliverer, "process", process)
    # Seed 4 (full catalogue, step 661): since the explorer also draws local times, send windows and
    # the backfill, seeds 7 and 8 promise no email that a consumer then holds past its minute within
    # 1,500 steps (the platform's settle finds the drop there instead, as lost_after_settle); seed 3,
    # which found it at step 326, now runs the evidence profile (webhooks only).
    outcome = explore(4, STEPS)
    assert outcome.violation is not None and outcome.violation.kind == "preview_promise_not_kept", (
        outcome.violation
    )


def test_a_promise_is_kept_when_a_repeated_throttle_folds_into_the_last_history_line() -> None:
    """Collide seed 18 (step 1093): a promised webhook answered 429 again; the repeated throttle
    folds into the last history line (``repeat: 2``, a later time, no new line), which the check once
    read as "nothing recorded since the preview" (preview_promise_not_kept)."""
    outcome = explore(18, 1_100)
    assert outcome.violation is None, outcome.violation
