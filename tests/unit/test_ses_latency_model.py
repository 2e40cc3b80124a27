"""The SES send-event latency model of the fault run (reminders_ops/ses_latency.py): the closed form
printed in the residual curve agrees with the sampler the run draws from."""

from __future__ import annotations

import random

import pytest
from reminders_ops import ses_latency


@pytest.mark.parametrize("wait", [1.0, 30.0, 120.0, 300.0, 600.0, 4000.0])
def test_later_than_agrees_with_the_sampled_delays(wait: float) -> None:
    rng = random.Random(5)
    n = 200_000
    late = 0
    for _ in range(n):
        d = ses_latency.send_event_delay(rng)
        late += d is None or d > wait
    assert abs(late / n - ses_latency.later_than(wait)) < 0.004


def test_the_floor_past_the_knee_is_the_eventbridge_retried_tail_and_the_losses() -> None:
    floor = ses_latency.LOST_FRACTION + ses_latency.RETRIED_FRACTION
    assert ses_latency.later_than(120.0) == pytest.approx(floor, abs=0.002)
    assert ses_latency.later_than(0.0) == 1.0
    assert ses_latency.later_than(3600.0) == pytest.approx(ses_latency.LOST_FRACTION, abs=1e-4)
