"""The seeded randomized fault run (functions/reminders_ops/faultrun.py) in the default suite: a
small seed with every fault made frequent, two planted bugs it must catch, and (REMINDERS_SLOW=1)
the full run at N=5,000 that ``make verify`` prints."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from reminders.domain.retry import Action, DeadLetterReason, Decision, OutcomeClass
from reminders_ops import faultrun
from reminders_ops.faultrun import FaultPlan, Report

#: Every fault an order of magnitude more often, so a small run exercises all of them.
HOT = replace(
    FaultPlan(),
    crash_after_claim=0.05,
    crash_after_send=0.05,
    crash_after_record=0.05,
    crash_before_ack=0.05,
    dispatch_crash_after_publish=0.1,
    duplicate_send=0.08,
    race_after_claim=0.05,
    race_before_claim=0.05,
    api_race_at_send=0.03,
    timeout_after_accept=0.06,
    ses_timeout_after_accept=0.05,
    ses_unreachable=0.05,  # (2 % missed it once when endpoint holds changed the draws)
    ses_timeout_before_accept=0.05,  # (the default 1 % drew none once the send moments moved the draws)
    email_flaky=0.03,  # always 5xx (1 %: as above)
    webhook_gone=0.08,  # (0.05 drew no 404 target once issue 24-25 moved the draws)
    webhook_flaky=0.03,
    webhook_throttled=0.02,  # (0.01 drew no always-429 target once a 2 h disable limit moved the draws)
    webhook_rebind=0.02,
    email_bounce=0.05,
    cancel=0.1,
    reschedule=0.1,
    dns_failure=0.05,
    ses_event_duplicate=0.1,
    ses_event_lost=0.05,
    ses_event_retried=0.1,
    rotate_on_retry=0.3,  # (0.08 missed it once endpoint holds parked the retries of held hosts)
)

#: Every kind the run can inject (faultrun.FAULT_KINDS): each must have happened in the short run.
ALWAYS_INJECTED = tuple(sorted(faultrun.FAULT_KINDS))


def never_injected(report: Report) -> list[str]:
    return [f for f in ALWAYS_INJECTED if report.injected[f] == 0]


def test_the_coverage_check_names_a_fault_kind_that_was_never_injected() -> None:
    """Control for the check above: with the resolver's failures off, the short run says so."""
    report = faultrun.run(seed=11, n=60, plan=replace(HOT, dns_failure=0.0))
    assert "webhook_dns_eai_again" in never_injected(report)


def _assert_invariant(report: Report) -> None:
    text = report.format()
    assert report.ok, text
    assert report.lost == 0, text
    assert report.duplicate_accepted_sends == 0, text
    assert report.unexplained_posts == 0 and report.posts_after_delivered == 0, text
    assert report.unexplained_email_duplicates == 0 and report.early_sends == 0, text
    assert report.rejected_signatures == 0, text
    accounted = report.delivered + sum(report.dead_letters.values()) + report.canceled
    assert accounted == sum(report.deliveries.values()), text
    assert sum(report.dead_letters.values()) + report.dlq_superseded == report.dlq_messages, text


def test_small_seeded_fault_run_holds_the_invariant_with_every_fault_injected() -> None:
    report = faultrun.run(seed=11, n=400, plan=HOT)
    _assert_invariant(report)
    missing = never_injected(report)
    assert not missing, f"not exercised: {missing}\n{report.format()}"
    unregistered = set(report.injected) - faultrun.FAULT_KINDS - faultrun.NOTED_KINDS
    assert not unregistered, f"injected but not in FAULT_KINDS (so never required): {unregistered}"
    # Ambiguous faults really happened and were answered by the receiver's dedupe, not resent blind.
    assert report.posts_after_acceptance["timeout_after_accept"] > 0
    assert report.posts_after_acceptance["crash_after_send"] > 0
    assert report.receiver_409 == sum(report.posts_after_acceptance.values()) or report.receiver_409 > 0
    assert report.telemetry["lease_expired"] > 0 and report.telemetry["duplicate_suppressed"] > 0
    assert {"permanent_failure", "invalid_destination"} <= set(report.dead_letters)
    # An always-failing target ends by its budget, or (its endpoint held: probes spend no attempt,
    # issue 16) by the maximum age.
    assert {"attempts_exhausted", "expired"} & set(report.dead_letters)


def test_fault_run_catches_a_claim_that_ignores_the_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: a claim that also takes delivered rows (and a deliverer without its own check of
    the acceptance on record, which would refuse that send). The run must report sends after a
    recorded delivery (the receiver's dedupe hides them from the accepted count)."""
    from reminders.adapters import memory
    from reminders.services.delivery import attempt as deliver

    monkeypatch.setattr(memory, "_CLAIMABLE", {*memory._CLAIMABLE, "delivered"})
    monkeypatch.setattr(deliver, "has_acceptance", lambda d: False)
    report = faultrun.run(seed=5, n=150, plan=HOT)
    assert not report.ok
    assert report.posts_after_delivered > 0


def test_fault_run_catches_dead_lettering_the_unclear_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: a timeout (the provider may have accepted) dead-letters at once. The run must
    refuse those dead letters: no injected permanent fault explains them."""
    from reminders.services.delivery import attempt as deliver

    real = deliver.decide

    def decide(result: deliver.SendResult, **kwargs: object) -> Decision:
        if result.outcome is OutcomeClass.TIMEOUT:
            return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.PERMANENT)
        return real(result, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(deliver, "decide", decide)
    report = faultrun.run(seed=5, n=150, plan=HOT)
    assert not report.ok
    assert any("permanent_failure without an injected permanent fault" in v for v in report.violations)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("REMINDERS_SLOW") != "1", reason="set REMINDERS_SLOW=1 (make verify)")
def test_fault_run_at_5000_reminders_zero_lost_zero_duplicate_accepted_sends() -> None:
    report = faultrun.run(seed=7, n=5000)
    print(report.format())
    _assert_invariant(report)
    assert report.reminders == 5000
