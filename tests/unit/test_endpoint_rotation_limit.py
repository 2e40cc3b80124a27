"""A rotation never retires a key before the expiry its rotation promised (found by the fault run:
a third rotation within two overlaps dropped the oldest key, a receiver still on it got 401s and
the delivery dead-lettered). The fourth key is refused (409) until the oldest overlap ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from reminders.domain.endpoints import MAX_SIGNING_KEYS, RotationLimitError, rotate
from reminders.domain.errors import ConflictError

from tests.unit.test_endpoints import T0, _endpoint


def test_rotation_beyond_the_key_cap_within_the_overlaps_is_refused_not_retiring_a_key() -> None:
    e = _endpoint()
    first = e.keys[0].secret
    for i in range(MAX_SIGNING_KEYS - 1):
        e, _ = rotate(e, T0 + timedelta(minutes=i), 3600)
    assert first in e.signing_secrets(T0 + timedelta(minutes=5))
    with pytest.raises(RotationLimitError) as err:
        rotate(e, T0 + timedelta(minutes=10), 3600)
    assert isinstance(err.value, ConflictError)
    assert "2026-12-01T13:00:00" in str(err.value)  # when a rotation is possible again
    assert first in e.signing_secrets(T0 + timedelta(minutes=10))  # still signs until its expiry


def test_rotation_is_possible_again_once_the_oldest_overlap_ended() -> None:
    e = _endpoint()
    for i in range(MAX_SIGNING_KEYS - 1):
        e, _ = rotate(e, T0 + timedelta(minutes=i), 3600)
    later = T0 + timedelta(seconds=3601)
    rotated, new = rotate(e, later, 3600)
    assert rotated.signing_secrets(later)[0] == new
    assert len(rotated.signing_secrets(later)) == MAX_SIGNING_KEYS
