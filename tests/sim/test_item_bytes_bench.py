"""The item-bytes bench (``python -m reminders_ops.bench --only item_bytes``) measures the stored-item
fixture of 2026-11-30 beside today's items: the figure the docs' register reads from
bench/results.json (``fixture_item_bytes``)."""

from __future__ import annotations

from reminders_ops.bench import item_bytes


def test_item_bytes_bench_measures_the_stored_fixture_when_run_from_a_checkout() -> None:
    # It once looked for tests/ under functions/ and wrote null for the fixture's size.
    got = item_bytes.measure()
    assert isinstance(got["fixture_item_bytes"], int) and got["fixture_item_bytes"] > 0, item_bytes.FIXTURE
