"""Review of issue 32's ``iso()`` (one ``%`` over a tuple, no conversion of a time already in UTC):
byte-identical to the form before it (main's f-string over ``utc(dt)``) for every aware datetime —
any zone, fixed offsets, fold, microseconds 0, years below 1000 — and refusing the naive ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.schedule import iso, utc


def _old_iso(dt: datetime) -> str:
    """The form before issue 32 (git show main:functions/reminders/domain/schedule.py)."""
    d = utc(dt)
    return (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
        f".{d.microsecond:06d}Z"
    )


_offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda m: timezone(timedelta(minutes=m))
)
_zones = st.one_of(st.just(UTC), _offsets, st.timezones())
_times = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=_zones, allow_imaginary=True
).flatmap(lambda d: st.sampled_from([d, d.replace(fold=1), d.replace(microsecond=0)]))


@settings(max_examples=500, deadline=None)
@given(_times)
def test_iso_is_the_old_string_when_given_any_aware_time(dt: datetime) -> None:
    assert iso(dt) == _old_iso(dt)


@pytest.mark.parametrize(
    "dt",
    [
        datetime(999, 1, 1, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(2026, 3, 29, 1, 30, fold=1, tzinfo=UTC),
    ],
)
def test_iso_is_the_old_string_when_the_year_is_below_1000_or_fold_is_set(dt: datetime) -> None:
    assert iso(dt) == _old_iso(dt)


def test_iso_refuses_a_naive_time_when_given_one() -> None:
    with pytest.raises(ValueError):
        iso(datetime(2026, 1, 1))
