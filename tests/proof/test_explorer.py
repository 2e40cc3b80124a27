"""The deterministic explorer (issue 26): every operation of the document is an action; a short run
holds on the seeds ``make verify`` names; a planted defect is found, shrunk and replayed.

Sized in steps, never in seconds (``make verify`` runs it long).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from reminders.domain.retry import OutcomeClass, SendResult
from reminders_ops.proof.explorer import actions
from reminders_ops.proof.explorer.engine import explore, run_actions
from reminders_ops.proof.explorer.shrink import shrink
from reminders_ops.proof.explorer.sim import Sim, principal_of

#: Steps per seed in ``make test`` (``make verify`` runs thousands more per seed).
STEPS = 1500


def _document() -> dict[str, Any]:
    sim = Sim(1)
    with sim.installed():
        status, document = sim.call("GET", "/openapi.json", principal=principal_of("acct-a"))
    assert status == 200
    return dict(document)


def test_every_operation_of_the_document_is_an_explorer_action() -> None:
    document = _document()
    assert actions.uncovered_operations(document) == [], (
        "operations of /openapi.json the explorer never takes"
    )
    names = set(actions.NAMES)
    for method, path in actions.BUILDERS:
        assert actions.operation_name((method, path)) in names


def test_an_operation_the_explorer_does_not_know_fails_the_coverage_when_the_document_grows() -> None:
    document = _document()
    document["paths"]["/reminders/{reminder_id}/snooze"] = {"post": {}}
    assert actions.uncovered_operations(document) == [("POST", "/reminders/{reminder_id}/snooze")]


@pytest.mark.parametrize("seed", [7, 8])
def test_the_explorer_finds_no_violation_when_it_runs_seed(seed: int) -> None:
    outcome = explore(seed, STEPS)
    replay = f"python -m reminders_ops.proof.explorer.engine --seed {seed} --steps {STEPS}"
    assert outcome.ok, f"seed {seed}: {outcome.violation} (`{replay}` prints the shrunk trace)"
    assert outcome.steps == STEPS
    # The run reached the product, not only its refusals: every kind of action was taken.
    taken = set(outcome.counts)
    assert taken >= {actions.operation_name(k) for k in actions.BUILDERS}
    assert taken >= set(actions.OTHER_ACTIONS)


def test_the_same_seed_replays_the_same_trace() -> None:
    first = explore(11, 200)
    again = run_actions(11, first.trace)
    assert again.trace == first.trace and again.ok == first.ok
    assert json.loads(json.dumps(first.trace)) == [list(a) for a in first.trace]


def test_a_sender_that_reports_acceptance_without_sending_is_found_shrunk_and_replayed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect: the webhook sender says accepted and never POSTs."""

    def lying_send(self: Any, delivery: Any, reminder: Any, rendered: Any) -> SendResult:
        return SendResult(OutcomeClass.ACCEPTED, 200, receipt="never-sent", fingerprint=rendered.fingerprint)

    monkeypatch.setattr("reminders.adapters.webhook.WebhookSender.send", lying_send)
    found = explore(7, 400)
    assert found.violation is not None and found.violation.kind == "delivered_without_acceptance"
    minimal = shrink(run_actions, 7, found.trace, budget=150)
    assert len(minimal) < len(found.trace)
    assert [name for name, _ in minimal].count("POST /reminders") >= 1
    replayed = run_actions(7, minimal)
    assert replayed.violation is not None and replayed.violation.kind == "delivered_without_acceptance"


#: Seed 1's run to step 1040 (before the template actions joined), shrunk: two creates, one delivery
#: parked while a copy of its message is due.
PARKED_COPIES_TRACE: list[tuple[str, dict[str, Any]]] = [
    ("POST /reminders", {"as": "acct-a", "i": 2, "v": 11, "due": 600, "key": 3}),
    ("POST /reminders", {"as": "acct-a", "i": 6, "v": 3, "due": 600, "key": 29}),
    ("advance", {"seconds": 3600}),
    ("dispatch", {"as": "acct-a", "i": 6, "v": 9}),
    ("deliver", {"queue": "webhook", "worker": "w2", "n": 10}),
    ("advance", {"seconds": 61}),
    ("deliver", {"queue": "webhook", "worker": "w2", "n": 2}),
    ("advance", {"seconds": 61}),
    ("deliver", {"queue": "webhook", "worker": "w2", "n": 10}),
    ("advance", {"seconds": 5}),
    ("deliver", {"queue": "webhook", "worker": "w1", "n": 10}),
]


def test_parked_delivery_keeps_one_live_message_when_a_copy_claims_it_while_a_probe_is_due() -> None:
    """Found by the explorer: the dispatcher's message (``due`` attribute) parks the delivery for 2 s
    (a probe due) and is replaced by a parked message; a copy queued before the park claims the row
    once its short wait has passed, sends (503) and schedules its retry by visibility — two live
    messages for one parked delivery (``parked_copies``). The trace is seed 1's, shrunk to 11 steps and
    pinned (new actions change what a seed draws)."""
    outcome = run_actions(1, PARKED_COPIES_TRACE)
    assert outcome.ok, str(outcome.violation)


def test_a_template_rendered_for_another_accounts_reminder_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (issue 30): the send's template lookup forgets the account and renders any
    account's version of that id — a receiver sees another account's template text."""
    from reminders.services.templates import Templates

    def any_account(self: Any, account_id: str, template_id: str, version: int) -> Any:
        for (owner, tid, ver), tv in sorted(self.store.items.items()):
            if (tid, ver) == (template_id, version) and owner != account_id:
                return tv
        return self._version(account_id, template_id, version, None)

    monkeypatch.setattr(Templates, "for_send", any_account)
    found = explore(7, STEPS)
    assert found.violation is not None and found.violation.kind == "template_crossed_accounts"


def test_a_retry_sends_the_same_body_when_the_account_registers_the_named_version_between_attempts() -> None:
    """Found by the explorer: acct-a's reminder names ``renewal`` v2 (unregistered: the create's check
    has nothing to check, the webhook document is the generic one); the plain receiver takes the
    first attempt and its answer is lost; acct-a then registers ``renewal`` v2 with
    ``webhook_rendered``; the retry under the same delivery key adds ``rendered`` — the receiver
    accepted two different bodies for one key (MISSION: the same bytes on every retry). The email
    channel has the same gap (SES's copies are not compared by the checker)."""
    trace: list[tuple[str, dict[str, Any]]] = [
        ("POST /reminders", {"as": "acct-a", "i": 0, "v": 1, "due": 30, "key": 1}),
        ("receiver_fault", {"answer": "timeout_after"}),
        ("advance", {"seconds": 61}),
        ("dispatch", {}),
        ("deliver", {"queue": "webhook", "worker": "w1", "n": 10}),
        ("PUT /templates/{template_id}/versions/{version}", {"as": "acct-a", "i": 0, "v": 1}),
        ("advance", {"seconds": 900}),
        ("dispatch", {}),
        ("deliver", {"queue": "webhook", "worker": "w1", "n": 10}),
    ]
    outcome = run_actions(7, trace)
    assert outcome.ok, str(outcome.violation)


def test_a_resent_permanent_4xx_dead_letter_after_a_timeout_after_acceptance_keeps_its_reason() -> None:
    """A timeout after the receiver took the body, then a 400: a dead letter ``permanent_failure`` with
    a possible acceptance. ``PATCH`` with ``resend: true`` gives it a new key for its redrive and keeps
    the reason its old key earned: the receiver's 400 under that old key explains it."""
    trace: list[tuple[str, dict[str, Any]]] = [
        ("POST /reminders", {"as": "acct-a", "i": 0, "v": 1, "due": 0, "key": 1}),
        ("receiver_fault", {"answer": "timeout_after"}),
        ("deliver", {"queue": "webhook", "worker": "w1", "n": 10}),
        ("receiver_fault", {"answer": "400"}),
        ("advance", {"seconds": 30}),
        ("deliver", {"queue": "webhook", "worker": "w1", "n": 10}),
        ("PATCH /reminders/{reminder_id}", {"as": "acct-a", "i": 0, "v": 3}),
        ("advance", {"seconds": 61}),
    ]
    outcome = run_actions(7, trace)
    assert outcome.ok, str(outcome.violation)


# -- what the retired in-memory fault run (faultrun.py) asserted, asserted by the explorer -------------
def test_a_claim_that_ignores_the_ledger_is_found_when_it_takes_a_delivered_delivery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's): a claim that also takes delivered rows, and an attempt
    without its own check of the acceptance on record — the delivered row is taken back to sending
    (and its key sent again)."""
    from reminders.adapters import memory
    from reminders.services.delivery import attempt

    monkeypatch.setattr(memory, "_CLAIMABLE", {*memory._CLAIMABLE, "delivered"})
    monkeypatch.setattr(attempt, "has_acceptance", lambda d: False)
    found = explore(7, STEPS)
    assert found.violation is not None, "a claim of delivered rows went unnoticed"
    assert found.violation.kind in ("delivered_regressed", "sent_after_delivered"), found.violation


def test_a_timeout_dead_lettered_at_once_is_found_when_no_receiver_refused_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's): a timeout (the receiver may have taken it) dead-letters as
    a permanent failure; no receiver's answer explains that dead letter."""
    from reminders.domain.retry import Action, DeadLetterReason, Decision
    from reminders.services.delivery import attempt

    real = attempt.decide

    def decide(result: SendResult, **kwargs: Any) -> Decision:
        if result.outcome is OutcomeClass.TIMEOUT:
            return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.PERMANENT)
        return real(result, **kwargs)

    monkeypatch.setattr(attempt, "decide", decide)
    found = explore(7, STEPS)
    assert found.violation is not None and found.violation.kind == "dead_letter_disagrees", found.violation


def test_a_sender_that_signs_only_with_the_new_secret_is_found_during_a_rotations_overlap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's): during a rotation's overlap the sender signs with the newest
    key only; a receiver still on the old key would refuse the webhook."""
    from reminders.domain import endpoints

    real = endpoints.Endpoint.signing_secrets
    monkeypatch.setattr(endpoints.Endpoint, "signing_secrets", lambda self, now: real(self, now)[:1])
    found = explore(7, STEPS)
    assert found.violation is not None and found.violation.kind == "signature_missing_key", found.violation


def test_an_order_dependent_receipt_merge_is_found_when_the_stream_replays_or_reverses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's): the last receipt to arrive stands, not the latest one."""
    from reminders.services import receipts

    monkeypatch.setattr(receipts, "merge", lambda current, incoming: incoming)
    found = explore(7, STEPS)
    assert found.violation is not None and found.violation.kind == "receipt_standing_wrong", found.violation


def test_a_receipt_that_moves_a_delivered_delivery_back_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (the fault run's): a 'rejected' receipt sends a delivered delivery back to
    retryable."""
    from dataclasses import replace

    from reminders.domain.states import DeliveryState
    from reminders.services import receipts

    real = receipts.ReceiptMerger.apply

    def apply(self: Any, reminder_id: str, channel_id: str, webhook_id: str, receipt: Any, **kw: Any) -> str:
        outcome = real(self, reminder_id, channel_id, webhook_id, receipt, **kw)
        reminder = self.store.get(reminder_id)
        d = reminder.deliveries.get(channel_id) if reminder else None
        if d is not None and receipt.status.value == "rejected" and d.state is DeliveryState.DELIVERED:
            self.store.save_delivery(reminder_id, replace(d, state=DeliveryState.RETRYABLE), d.rev)
        return str(outcome)

    monkeypatch.setattr(receipts.ReceiptMerger, "apply", apply)
    found = explore(7, STEPS)
    assert found.violation is not None and found.violation.kind == "delivered_regressed", found.violation
