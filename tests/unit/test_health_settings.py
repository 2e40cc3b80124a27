"""Endpoint health's operator settings (MISSION §8: survivors of `make mutate` in domain/health.py):
every ``REMINDERS_HEALTH_*`` variable the stack sets reaches its field, and an unset or empty one
keeps the default."""

from __future__ import annotations

import dataclasses

import pytest
from reminders.domain.health import HealthPolicy

#: variable suffix -> (field, value set, whole seconds / counts are integers)
SETTINGS = {
    "BUCKET_SECONDS": ("bucket_seconds", 17, True),
    "WINDOW_SECONDS": ("window_seconds", 1234, True),
    "MIN_SENDS": ("min_sends", 7, True),
    "FAILURE_RATIO": ("failure_ratio", 0.25, False),
    "ALL_FAILED_SECONDS": ("all_failed_seconds", 91.5, False),
    "ALL_FAILED_MIN_SENDS": ("all_failed_min_sends", 4, True),
    "PROBE_BASE_SECONDS": ("probe_base_seconds", 3.5, False),
    "PROBE_MULTIPLIER": ("probe_multiplier", 1.5, False),
    "PROBE_CAP_SECONDS": ("probe_cap_seconds", 777.0, False),
    "PROBE_HOLD_FRACTION": ("probe_hold_fraction", 0.125, False),
    "PROBE_FLOOR_SECONDS": ("probe_floor_seconds", 11.0, False),
    "PROBE_LEASE_SECONDS": ("probe_lease_seconds", 13.0, False),
    "DISABLE_AFTER_SECONDS": ("disable_after_seconds", 4321.0, False),
    "CACHE_SECONDS": ("cache_seconds", 2.5, False),
}


def test_every_health_setting_is_read_when_its_variable_is_set() -> None:
    env = {f"REMINDERS_HEALTH_{name}": str(value) for name, (_, value, _) in SETTINGS.items()}
    policy = HealthPolicy.from_env(env, max_age_seconds=999.0)
    for _name, (attr, value, whole) in SETTINGS.items():
        assert getattr(policy, attr) == value, attr
        assert isinstance(getattr(policy, attr), int) is whole, attr
    assert {f.name for f in dataclasses.fields(HealthPolicy)} >= {a for a, _, _ in SETTINGS.values()}


@pytest.mark.parametrize("env", [{}, dict.fromkeys((f"REMINDERS_HEALTH_{n}" for n in SETTINGS), "")])
def test_a_health_setting_keeps_its_default_when_its_variable_is_unset_or_empty(
    env: dict[str, str],
) -> None:
    assert HealthPolicy.from_env(env) == HealthPolicy()
    aged = HealthPolicy.from_env(env, max_age_seconds=3600.0)  # the disable limit follows max age
    assert aged == dataclasses.replace(HealthPolicy(), disable_after_seconds=3600.0)
