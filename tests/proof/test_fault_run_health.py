"""Issue 16 in the seeded fault run: an always-failing endpoint is held, probed and, past the run's
disable limit, disabled (its delivery dead-letters ``endpoint_disabled``, again after a redrive while
it stays disabled); the shared hosts' outages are shorter, so they resume. The check refuses an
``endpoint_disabled`` dead letter on an endpoint that would have answered (planted bug)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reminders_ops import faultrun

from tests.proof.test_fault_run import HOT, _assert_invariant

#: More always-failing targets than the hot plan, so some live past the run's disable limit instead
#: of being cancelled first (at 3 % every one was cancelled once the draws moved).
FLAKY = replace(HOT, webhook_flaky=0.06)


def test_an_always_failing_endpoint_is_disabled_within_the_runs_limit_and_its_delivery_dead_letters() -> None:
    report = faultrun.run(seed=11, n=400, plan=FLAKY)
    _assert_invariant(report)
    assert report.dead_letters["endpoint_disabled"] > 0, report.format()
    assert report.telemetry["endpoint_transition"] > 0


def test_fault_run_catches_an_endpoint_disabled_that_would_have_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted bug: every held endpoint counts as held past the disable limit, so the shared hosts'
    short outages disable them. The run must refuse those dead letters."""
    from reminders.services import health

    monkeypatch.setattr(health, "should_disable", lambda h, now, policy: h.state.value == "held")
    report = faultrun.run(seed=11, n=400, plan=HOT)
    assert not report.ok
    assert any("endpoint_disabled without an always-failing endpoint" in v for v in report.violations)
