"""Issue 15 in the simulator: the drain's consumers share one rate per endpoint (SharedRateLimiter on
the in-memory slots), so what reaches the receiver stays within the rate across all instances; and
a delivered endpoint_id item (with a receiver receipt) stays under one write unit."""

from __future__ import annotations

from reminders_ops.bench import item_bytes as bench_item_bytes
from reminders_ops.bench.sim import scenarios
from reminders_ops.bench.sim.receiver import max_in_window


def test_max_in_window_counts_the_busiest_second_not_calendar_seconds() -> None:
    assert max_in_window([0.9, 1.1, 1.5, 1.89, 2.5]) == 4
    assert max_in_window([0.0, 1.0, 2.0]) == 1
    assert max_in_window([]) == 0


def test_drain_across_consumer_instances_never_exceeds_the_shared_rate() -> None:
    r = scenarios.drain(300, rate=50.0)
    assert r["lost"] == 0 and r["duplicates_accepted"] == 0
    assert r["throttled_429"] == 0  # the receiver never had to refuse: the limiter held the rate
    assert 0 < r["max_posts_in_1s"] <= 50 * 1.05
    assert r["limiter_writes_per_post"] >= 1.0


def test_delivered_endpoint_item_with_a_receipt_stays_under_one_write_unit() -> None:
    r = bench_item_bytes.measure()
    for row in (r["before"], r["after"]):
        assert row["delivered_item_bytes"] < 1024, row
    assert r["after"]["with_receipt_bytes"] < 1024, r["after"]
    assert r["after"]["endpoint_use_write_units"] == 4  # one transaction of two small items
