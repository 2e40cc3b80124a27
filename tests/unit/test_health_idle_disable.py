"""Issue 16, disable: an endpoint held during an outage and then left without traffic is not
disabled by the clock alone (found by the randomized fault run: a host's outage ended, no delivery
probed it, and hours later its next reminder dead-lettered ``endpoint_disabled`` unsent)."""

from __future__ import annotations

from reminders.domain.health import EndpointHealth, EndpointState, HealthPolicy, should_disable

POLICY = HealthPolicy(disable_after_seconds=7200.0)
T0 = 1_000_000.0


def _held(next_probe_at: float) -> EndpointHealth:
    return EndpointHealth("ep", state=EndpointState.HELD, since=T0, probes=3, next_probe_at=next_probe_at)


def test_held_past_the_limit_with_probes_failing_up_to_now_is_disabled() -> None:
    now = T0 + 7200 + 10
    assert should_disable(_held(next_probe_at=now - 5), now, POLICY)
    assert should_disable(_held(next_probe_at=now + 60), now, POLICY)


def test_held_past_the_limit_but_idle_since_gets_a_probe_first() -> None:
    now = (
        T0 + 5 * 3600
    )  # no delivery looked at it for hours (over half the limit) after its last probe was due
    assert not should_disable(_held(next_probe_at=T0 + 30), now, POLICY)


def test_within_the_limit_is_never_disabled() -> None:
    assert not should_disable(_held(next_probe_at=T0 + 30), T0 + 7000, POLICY)


def test_a_delivery_in_a_long_retry_backoff_still_sees_it_disabled() -> None:
    """A lone delivery's retry backoff (not a park) may return well after the next probe was due:
    under half the limit that is still a failing endpoint."""
    now = T0 + 7200 + 10
    assert should_disable(_held(next_probe_at=now - 1800), now, POLICY)


def test_held_past_the_limit_and_idle_just_over_half_of_it_gets_a_probe_first() -> None:
    """The idle bound is half the disable limit (not a multiple of it): 61 minutes without a due
    probe under a 2-hour limit is idle (a probe first); 59 minutes is still failing."""
    policy = HealthPolicy(disable_after_seconds=7200.0, probe_cap_seconds=600.0)
    now = T0 + 3 * 3600
    assert not should_disable(_held(next_probe_at=now - 3660), now, policy)
    assert should_disable(_held(next_probe_at=now - 3540), now, policy)
