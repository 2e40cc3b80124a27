"""What the in-memory fault run (``faultrun.py``) judged at its end, judged by the explorer after the
platform settles (``proof/explorer/settle.py``): nothing lost, every dead letter explained by its
history and by the provider's trace, a gate's dead letter a ``gate`` line. Each check with a planted
defect the explorer finds (sized in steps, never in seconds).
"""

from __future__ import annotations

from typing import Any

import pytest
from reminders.domain.retry import DeadLetterReason
from reminders_ops.proof.explorer import cycles, lateness, preview_check
from reminders_ops.proof.explorer.engine import explore

from tests.proof.test_explorer import STEPS


def _found(seed: int, kind: str | tuple[str, ...], *, late: bool = False) -> None:
    # Each end-of-run check is shown finding its defect on its own: preview's check (issue 28) sees
    # some of these defects earlier, as a broken promise, so it takes no preview here; and the
    # settle's lateness judge (which sees a delivery never carried on as late before it is lost)
    # takes part only where it is the one shown (``late``). A redrive's fresh cycle (``cycles.py``)
    # sees a dead letter relabelled ``attempts_exhausted`` in a redriven cycle first: not judged here.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preview_check, "EVERY", 10**9)
        mp.setattr(cycles.Cycles, "judge", lambda *a, **k: None)
        if not late:
            mp.setattr(lateness, "ON_TIME_BOUND", float("inf"))
            mp.setattr(lateness, "WATCHDOG_BOUND", float("inf"))
        outcome = explore(seed, STEPS)
    assert outcome.violation is not None, f"seed {seed}: the planted defect went unnoticed"
    assert outcome.violation.kind in ((kind,) if isinstance(kind, str) else kind), outcome.violation


def test_a_watchdog_that_never_requeues_is_found_when_a_purged_delivery_is_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect: the dispatcher's watchdog pass does nothing — a delivery whose message the
    operator purged (or whose message was lost) is never carried on: lost once the platform settles."""
    from reminders.services.dispatch import Dispatcher

    monkeypatch.setattr(Dispatcher, "_watch", lambda self, *a, **k: None)
    _found(7, "lost_after_settle")


def test_a_consumer_that_hands_messages_back_twenty_minutes_past_their_time_is_found_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (issue 26: "lateness stays within its stated bound"): the consumer hands every
    message it keeps back twenty minutes later than it should (a retry past its recorded next attempt,
    a not-yet-due message past its due time, a deferral past its window's opening). Nothing is lost,
    nothing early: only the lateness judge sees it (``late_without_reason``). Twenty minutes, not ten:
    the settle's on-time bound (one 300 s round + 300 s of consumer skew + a minute) is 660 s, and a
    hand-back 600 s late is taken by the first round after it."""
    from dataclasses import replace

    from reminders.services.deliver import Deliverer

    real = Deliverer.process

    def late(self: Any, msg: Any, ctx: Any) -> Any:
        result = real(self, msg, ctx)
        return (
            result
            if result.ack
            else replace(result, visibility_seconds=min(result.visibility_seconds + 1200, 43_200))
        )

    monkeypatch.setattr(Deliverer, "process", late)
    _found(7, "late_without_reason", late=True)


def test_a_gate_dead_letter_recorded_as_an_attempt_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (the fault run's gate-line test, issue 28 item 2): the record forgets that the
    gate ended the delivery unsent — a disabled endpoint's or an expired delivery's dead letter reads
    as an attempt (a send that never happened)."""
    from reminders.services.delivery.record import RecordStep

    real = RecordStep._apply

    def as_attempt(self: Any, d: Any, result: Any, decision: Any, now: Any, *, unsent: bool = False) -> Any:
        return real(self, d, result, decision, now, unsent=False)

    monkeypatch.setattr(RecordStep, "_apply", as_attempt)
    _found(7, "gate_line_as_attempt")


def test_an_endpoint_disabled_while_its_host_still_answers_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (the fault run's health test, issue 16): every held endpoint counts as held past
    the disable limit, so one failed answer disables it and its deliveries dead-letter
    ``endpoint_disabled`` — the host's trace shows no failure that long."""
    from reminders.services import health

    monkeypatch.setattr(health, "should_disable", lambda h, now, policy: h.state.value == "held")
    _found(7, "dead_letter_disagrees")


def test_a_dead_letter_reason_its_history_does_not_record_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect: the record stores a permanent failure's dead letter as ``attempts_exhausted``
    while its history line says ``permanent_failure`` (the fault run's "not explained by its history")."""
    from reminders.services.delivery.record import RecordStep

    real = RecordStep._apply

    def relabelled(self: Any, d: Any, result: Any, decision: Any, now: Any, *, unsent: bool = False) -> Any:
        new = real(self, d, result, decision, now, unsent=unsent)
        if new.dead_letter_reason == DeadLetterReason.PERMANENT.value:
            new.dead_letter_reason = DeadLetterReason.ATTEMPTS_EXHAUSTED.value
        return new

    monkeypatch.setattr(RecordStep, "_apply", relabelled)
    # Seed 8 (and 1): since every store write may lose its answer (h26x2), seed 7's draws dead-letter
    # no delivery as a permanent failure within STEPS.
    _found(8, "dead_letter_unexplained")


def test_a_dead_letter_that_never_reaches_its_dlq_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (the fault run's "every dead letter sits in its DLQ with its reason"): the
    hand-off records the dead letter and clears its pending DLQ message without sending it — the
    operator has nothing to redrive."""
    from reminders.adapters.memory_sqs import MemoryQueues

    monkeypatch.setattr(MemoryQueues, "dead_letter", lambda self, channel_type, message: None)
    _found(7, "dead_letter_not_in_dlq")


def test_a_gate_that_ignores_the_send_window_is_found_when_it_sends_in_quiet_hours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's issue-17 reminders: local due times, quiet hours): the gate
    reads every send window as open — a reminder created in its quiet hours is sent at once."""
    from reminders.domain.localtime import SendWindow

    monkeypatch.setattr(SendWindow, "is_open", lambda self, instant, tz: True)
    _found(7, "sent_in_quiet_hours")


def test_a_create_the_store_acknowledges_without_writing_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted defect (the fault run's "reminder missing from the ledger"): the store's conditional
    put answers written and keeps nothing — the API answers 201 with an id no row carries."""
    from reminders.adapters.memory import MemoryReminderStore

    monkeypatch.setattr(MemoryReminderStore, "put_new", lambda self, reminder, index: True)
    _found(7, "lost_after_settle")


def test_the_settled_run_reaches_what_the_fault_run_forced_disabled_endpoints_deferrals_and_local_times() -> (
    None
):
    """Coverage (the fault run's forced plans, HOT / FLAKY): on seed 8 the settled run ends
    deliveries by every gate and by an endpoint its health disabled past the limit, defers
    windowed reminders to their window, and delivers reminders due as a local wall time."""
    from collections import Counter

    from reminders_ops.proof.explorer.engine import driven

    # Seed 8: since the explorer's faults and draws grew (h26x1-3: every conditional write may lose
    # its answer, an attempt budget of 3, the adversary's pairings), seed 7 ends no delivery as a
    # permanent failure within STEPS; seed 8 reaches every end below.
    with driven(8, STEPS) as explorer:
        sim = explorer.sim
        ends: Counter[str] = Counter()
        for rid in list(sim.store.items):
            r = sim.store.get(rid)
            for d in r.deliveries.values() if r else ():
                ends[d.dead_letter_reason or d.state.value] += 1
                if r and r.due_local and d.state.value == "delivered":
                    ends["local_time_delivered"] += 1
        whys = {h.why for h in sim.world.health_store.items.values()}
    assert {"delivered", "canceled", "endpoint_disabled", "expired", "permanent_failure"} <= set(ends), ends
    assert ends["local_time_delivered"] > 0, ends
    assert sim.telemetry.counts.get("deferred_quiet_hours", 0) > 0
    assert "held_past_disable_limit" in whys, whys


def test_a_consumer_that_trusts_a_clock_an_hour_fast_is_found_sending_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted defect (the fault run's "nothing sent before its due time"): the consumer's clock is
    its host's, an hour fast, with no floor from the store's — its claims take rows before they are due
    (or, what seed 7 meets first since h26x1's rewrites of its draws, outside their send window)."""
    from reminders import runtime
    from reminders_ops.proof.explorer.sim import OffsetClock

    monkeypatch.setattr(runtime, "consumer_clock", lambda clock, reference: OffsetClock(clock.base, 3600.0))
    _found(7, ("sent_early", "sent_in_quiet_hours"))


def test_a_delivery_its_own_receiver_says_it_received_is_not_delivered_without_acceptance() -> None:
    """Seeds 3, 4 and 20 (shrunk): a flaky host answers 503, then the reminder's own account's
    receiver, holding the secret that webhook verified with, says it received it (a ``rejected``
    receipt here). The product records it delivered, rightly: the receiver is the authority on what
    it received whatever it answered. The checker once called that ``delivered_without_acceptance``."""
    from reminders_ops.proof.explorer.engine import run_actions

    trace = [
        ("POST /reminders", {"as": "acct-b", "due": 90, "i": 7, "key": 32, "v": 11}),
        ("advance", {"seconds": 900}),
        ("deliver", {"n": 10, "queue": "webhook", "worker": "w2"}),
        ("POST /inbound/receiver", {"as": "acct-b", "i": 3, "v": 9}),
    ]
    outcome = run_actions(4, trace)
    assert outcome.violation is None, outcome.violation
