"""Review of issue 28 item 2: a dead letter the gate decides before any attempt is now a ``gate``
history line, not an ``attempt``. The fault run's checker explains every dead letter by its history:
it must still find the gate's reason there (an ``expired`` dead letter is one the fault run expects)."""

from __future__ import annotations

from reminders.domain.retry import RetryPolicy
from reminders_ops import faultrun
from reminders_ops.faultrun import FaultPlan, Track

from tests.unit.fakes import World


def test_fault_run_explains_an_expired_dead_letter_when_the_gate_records_it_as_a_gate_line() -> None:
    w = World(shards=1, policy=RetryPolicy(max_age_seconds=60))
    r, _ = w.reminders.create(w.new("aged"))
    (m,) = w.receive()
    w.clock.advance(61)
    assert w.process(m).outcome == "dead_lettered"
    (d,) = w.get(r.id).deliveries.values()
    assert (d.dead_letter_reason, [h.event for h in d.history][-1]) == ("expired", "gate")
    run = faultrun.World(1, 0, FaultPlan())
    run.store.items[r.id] = w.store.items[r.id]
    run.tracks[r.id] = Track(r.id, r.due_at, {d.channel_id: "flaky"})
    report = faultrun.check(run)
    assert not [x for x in report.violations if "not explained by its history" in x], report.violations
