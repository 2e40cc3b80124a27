"""Issue 15 in the randomized fault run: endpoint secret rotations at random times and while
deliveries retry, receivers that move to the new secret at a random point of the overlap. The run
holds the invariant with them, and catches a sender that drops the old key during the overlap."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reminders.domain import endpoints
from reminders_ops import faultrun

from tests.proof.test_fault_run import HOT

ROTATING = replace(HOT, rotations=40, rotate_on_retry=0.3, endpoint=0.6)


def test_fault_run_with_secret_rotations_during_retries_rejects_no_signature() -> None:
    report = faultrun.run(seed=13, n=300, plan=ROTATING)
    text = report.format()
    assert report.ok, text
    assert report.rejected_signatures == 0 and report.lost == 0, text
    assert report.injected["endpoint_rotation_during_retry"] > 0, text
    assert report.receiver_switches > 0 and report.verified_with_old_key > 0, text


def test_fault_run_catches_a_sender_that_signs_only_with_the_new_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted bug: during a rotation's overlap the sender signs with the newest key only. A
    receiver that has not switched yet refuses it; the run must call that a violation."""
    real = endpoints.Endpoint.signing_secrets
    monkeypatch.setattr(endpoints.Endpoint, "signing_secrets", lambda self, now: real(self, now)[:1])
    report = faultrun.run(seed=13, n=300, plan=ROTATING)
    assert not report.ok
    assert report.rejected_signatures > 0
    assert any("its key within the overlap" in v for v in report.violations)
