"""Issue 32 item 1: the consumer's memory size is chosen from the bench's curve (CPU ∝ memory)."""

from __future__ import annotations

from reminders_ops.bench.memory import Point, choose
from reminders_ops.bench.sim.model import Latency


def test_cpu_time_grows_as_memory_shrinks_when_below_a_full_vcpu() -> None:
    lat = Latency()
    assert lat.handler_cpu_at(1769) == lat.handler_cpu_per_record == lat.handler_cpu_at(3008)
    assert lat.handler_cpu_at(128) > lat.handler_cpu_at(192) > lat.handler_cpu_at(256)
    assert lat.cold_start_at(256) == lat.cold_start and lat.cold_start_at(128) == 2 * lat.cold_start


def test_the_cheapest_size_is_refused_when_it_spends_lateness_or_lacks_memory() -> None:
    pts = [
        Point(128, 3.50, 0.5, 13.0, 1.4),  # cheapest, but its cold starts make records late
        Point(192, 3.60, 0.6, 18.0, 0.081),
        Point(256, 3.68, 0.7, 24.0, 0.080),
    ]
    assert choose(pts, rss_mb=55).memory_mb == 192
    assert choose(pts, rss_mb=150).memory_mb == 256  # 192 MB < 1.5 x 150 MB


def test_the_consumers_resident_set_is_its_own_when_measured_from_a_large_parent() -> None:
    from reminders_ops.bench.memory import consumer_rss_mb

    ballast = bytearray(400 * 1024 * 1024)  # noqa: F841 - the parent's peak, which exec must not carry
    assert 0 < consumer_rss_mb() < 300
