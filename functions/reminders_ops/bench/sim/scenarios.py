"""The simulator's workloads for ``make bench``: drain, burst, lateness across the 900 s boundary,
and a cost run. Each returns plain dicts (printed by the bench and written to results.json)."""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from reminders.domain.endpoints import implicit_endpoint_id
from reminders.domain.models import ChannelType, delivery_key
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import bucket_of, index_pk
from reminders.services.intents import ChannelSpec, NewReminder

from .cost import CostReport, add_kms_requests, add_sender_reads, cost_report
from .engine import SimResult, Simulation
from .model import Deployment, Latency, item_size
from .receiver import max_in_window

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def command(i: int, due: datetime, *, accounts: int = 1000) -> NewReminder:
    """A realistic single-channel (webhook) reminder: ids in the data map, never content."""
    acct = f"acct-{i % accounts:05d}"
    return NewReminder(
        account_id=acct,
        key=f"renewal-reminder:{acct}:2026-12-20:webhook:{i:07d}",
        kind="renewal",
        due_at=due,
        channels=(ChannelSpec(ChannelType.WEBHOOK, f"https://hooks.example-shop.com/reminders/{acct}"),),
        template_id="renewal",
        template_version=1,
        data={"renewal_date": "2026-12-20", "plan": "pro", "subscription_id": f"sub_{i:010d}"},
    )


def _endpoint_of(cmd: NewReminder) -> str:
    """The (account, origin) endpoint a bare-URL reminder's webhook is signed for (issue 24)."""
    return implicit_endpoint_id(cmd.account_id, cmd.channels[0].destination)


def key_of(i: int, accounts: int = 1000) -> str:
    acct = f"acct-{i % accounts:05d}"
    return delivery_key(acct, f"renewal-reminder:{acct}:2026-12-20:webhook:{i:07d}", "webhook-0")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def _integrity(res: SimResult, n: int) -> dict[str, Any]:
    return {
        "created": res.created,
        "delivered": res.ledger.get("delivered", 0),
        "dead_letter": res.ledger.get("dead_letter", 0),
        "lost": res.lost + (n - res.created),
        "duplicates_accepted": res.receiver["accepted_twice"],
        "resent_after_accept": res.receiver["resent_after_accept"],
        "errors": res.errors[:5],
    }


# -- 1. drain -------------------------------------------------------------------------------------


def drain(
    n: int = 10_000,
    rate: float = 200.0,
    failure: float = 0.10,
    *,
    policy: RetryPolicy | None = None,
    destination_rate: bool = True,
    seed: int = 7,
    deployment: Deployment | None = None,
    down_after: float | None = None,
    down_for: float = 120.0,
    accounts: int = 1,
) -> dict[str, Any]:
    """``n`` reminders due at the same instant, a receiver limited to ``rate``/s failing ``failure``;
    with ``down_after``: the receiver is down for everyone (503) ``down_for`` seconds from that long
    after the due time (issue 16: the endpoint is held, probed, resumed). ``accounts``: the reminders'
    accounts, each with its implicit endpoint of the receiver's origin (1: one endpoint)."""
    wall = time.perf_counter()
    policy = policy or RetryPolicy.from_env({})
    sim = Simulation(
        start=START,
        deployment=deployment,
        rate_per_second=rate,
        failure_rate=failure,
        policy=policy,
        seed=seed,
        size_every=25,
        destination_rate=rate if destination_rate else None,
    )
    due = START + timedelta(seconds=120)
    if down_after is not None:
        sim.receiver.down.append((due.timestamp() + down_after, due.timestamp() + down_after + down_for))
    for i in range(n):
        # One receiver is one endpoint (one account's origin): the rate is per endpoint since issue
        # 15, so reminders of 1,000 accounts to the same host would each have the whole rate R.
        sim.create(command(i, due, accounts=accounts))
    sim.run(due.timestamp() + 6 * 3600, stop=lambda: sim.done >= n)
    res = sim.result()
    times = [t - due.timestamp() for t in res.done_times]
    bound = n / (rate * (1 - failure))
    last = max(times) if times else float("inf")
    health = _health_figures(sim, res.receiver["posts"], down_after is not None)
    if down_after is not None:
        bound += down_for
    return {
        **health,
        "n": n,
        "rate_per_second": rate,
        "failure_rate": failure,
        "policy": {"base_seconds": policy.base_seconds, "cap_seconds": policy.cap_seconds},
        "destination_rate_limit": rate if destination_rate else None,
        "max_concurrency": sim.deployment.delivery_max_concurrency,
        "seconds": last,
        "p99_seconds": pct(times, 0.99),
        "bound_seconds": bound,
        "ratio": last / bound,
        "p99_ratio": pct(times, 0.99) / bound,
        "goal_ratio": 1.10,
        "attempts": res.receiver["posts"],
        "throttled_429": res.receiver["throttled_429"],
        "failed_500": res.receiver["failed_500"],
        "rate_limited_yields": res.telemetry.get("rate_limited", 0),
        # Issue 15: what the shared limiter let through, across all consumer instances.
        "max_posts_in_1s": max_in_window(sim.receiver.stats.post_times, 1.0),
        "limiter_writes_per_post": sim.rate_slots.writes / max(1, res.receiver["posts"]),
        **_integrity(res, n),
        "sim_wall_seconds": time.perf_counter() - wall,
    }


def _health_figures(sim: Simulation, posts: int, outage: bool) -> dict[str, Any]:
    """Endpoint health in a drain: its writes per send, and with an outage the hold: when, how long,
    the sends while held and the probe intervals they had."""
    hs = sim.world.health_store
    out: dict[str, Any] = {
        "health_writes": hs.writes,
        "health_reads": hs.reads,
        "health_writes_per_send": hs.writes / posts if posts else 0.0,
        "transitions": [(round(t - START.timestamp(), 1), st, why) for t, _, st, why in hs.transitions],
    }
    if not outage:
        return out
    held = [t for t, _, st, _ in hs.transitions if st == "held"]
    resumed = [t for t, _, st, _ in hs.transitions if st == "active"]
    if not held:
        return out | {"held_seconds": 0.0, "sends_while_held": 0, "probe_intervals": 0}
    start, end = held[0], resumed[0] if resumed else float("inf")
    cache = sim.world.health_policy.cache_seconds
    during = [t for t in sim.receiver.stats.down_posts if start < t < end]
    settled = [t for t in during if t >= start + cache]  # after every container's view expired
    policy = sim.world.health_policy
    intervals, at = 0, start
    while at < end:  # the probe schedule a held endpoint can have (each interval one probe)
        intervals += 1
        at += policy.probe_interval(intervals, at - start)
    return out | {
        "held_seconds": end - start,
        "sends_while_held": len(during),
        "sends_in_first_view_seconds": len(during) - len(settled),
        "sends_after_views_expired": len(settled),
        "probe_intervals": intervals,
    }


# -- 2. burst -------------------------------------------------------------------------------------


def burst(
    n: int = 100_000,
    rate: float = 5000.0,
    *,
    lanes: int | None = None,
    seed: int = 11,
    latency: Latency | None = None,
    deployment: Deployment | None = None,
) -> dict[str, Any]:
    """``n`` reminders due within one minute (created 30 minutes ahead: they go through the due
    index and the dispatcher). MaximumConcurrency is sized to the provider's budget: 1.1 times the
    batches in flight that R sends per second need, a batch taking its invoke, its records
    (``lanes`` at a time) and its delete (the modelled latencies)."""
    wall = time.perf_counter()
    lat = latency or Latency()
    per_record = 2 * lat.ddb_write + lat.provider + lat.handler_cpu_per_record
    base = deployment or Deployment.from_template()
    lanes = base.record_concurrency if lanes is None else lanes
    batch = base.delivery_batch_size
    per_batch = lat.invoke + math.ceil(batch / max(1, min(lanes, batch))) * per_record + lat.sqs_delete
    conc = min(1000, math.ceil(1.1 * rate * per_batch / batch))
    dep = base.with_(delivery_max_concurrency=conc)
    sim = Simulation(
        start=START,
        deployment=dep,
        latency=lat,
        rate_per_second=rate,
        lanes=lanes,
        seed=seed,
        size_every=100,
        destination_rate=rate,
    )
    minute = START + timedelta(minutes=30)
    rng = random.Random(seed)
    for i in range(n):
        sim.create(command(i, minute + timedelta(milliseconds=rng.randrange(60_000))))
    created_wall = time.perf_counter() - wall
    partitions = [len(sim.memory.index.get(index_pk(bucket_of(minute), s), [])) for s in range(dep.shards)]
    sim.run(minute.timestamp() + 4 * 3600, stop=lambda: sim.done >= n)
    res = sim.result()
    times = [t - minute.timestamp() for t in res.done_times]
    bound = max(n / rate, 60.0)
    last = max(times) if times else float("inf")
    sd = [res.shard_dispatched.get(s, 0) for s in range(dep.shards)]
    busiest = max(range(dep.shards), key=lambda s: sim.shard_seconds.get(s, 0.0))
    return {
        "n": n,
        "rate_per_second": rate,
        "lanes": lanes,
        "max_concurrency": conc,
        "peak_concurrency": res.peak_concurrency.get("webhook", 0),
        "seconds": last,
        "p50_seconds": pct(times, 0.5),
        "bound_seconds": bound,
        "ratio": last / bound,
        "goal_ratio": 1.10,
        "shards": dep.shards,
        "shard_dispatched_max_over_mean": max(sd) / (sum(sd) / len(sd)) if sum(sd) else float("nan"),
        "index_partition_items_max_over_mean": max(partitions) / (sum(partitions) / len(partitions))
        if sum(partitions)
        else float("nan"),
        "index_partition_items_max": max(partitions),
        "busiest_shard_dispatch_seconds": sim.shard_seconds.get(busiest, 0.0),
        "busiest_partition_read_units_per_second": sim.shard_read_units.get(busiest, 0.0)
        / max(1e-9, sim.shard_seconds.get(busiest, 0.0)),
        "shard_runs": res.shard_runs,
        "lateness_p99_seconds": pct(res.lateness, 0.99),
        "throttled_429": res.receiver["throttled_429"],
        **_integrity(res, n),
        "sim_create_wall_seconds": created_wall,
        "sim_wall_seconds": time.perf_counter() - wall,
    }


# -- 3. lateness across the 900 s boundary ------------------------------------------------------------


def boundary_lateness(
    n: int = 2000, *, seed: int = 5, spread_seconds: float = 1200.0, deployment: Deployment | None = None
) -> dict[str, Any]:
    """Reminders created over ``spread_seconds``, each due 780-1020 s after its creation (whole
    seconds): about half go straight to SQS, half wait in the index for the dispatcher."""
    wall = time.perf_counter()
    sim = Simulation(start=START, seed=seed, size_every=25, deployment=deployment)
    rng = random.Random(seed)
    due_of: dict[str, tuple[float, bool]] = {}
    t0 = START.timestamp() + 60
    for i in range(n):
        created = t0 + rng.random() * spread_seconds
        due = float(math.ceil(created + rng.uniform(780, 1020)))
        due_of[key_of(i)] = (due, due - created > 900)

        def make(i: int = i, due: float = due) -> None:
            sim.create(command(i, datetime.fromtimestamp(due, UTC)))

        sim.at(created, make)
    sim.run(t0 + spread_seconds + 3 * 3600, stop=lambda: sim.done >= n)
    res = sim.result()
    direct: list[float] = []
    via_index: list[float] = []
    for key, t in sim.receiver.stats.first_attempt.items():
        due, beyond = due_of[key]
        (via_index if beyond else direct).append(t - due)
    both = direct + via_index
    return {
        "n": n,
        "direct": len(direct),
        "via_index": len(via_index),
        "p50_seconds": pct(both, 0.5),
        "p99_seconds": pct(both, 0.99),
        "max_seconds": max(both) if both else float("nan"),
        "direct_p99_seconds": pct(direct, 0.99),
        "via_index_p99_seconds": pct(via_index, 0.99),
        "early_sends": sum(1 for x in both if x < 0),
        "batching_window_seconds": sim.deployment.delivery_batching_window,
        "goal_p99_seconds": 0.5,
        "goal_p50_seconds": 0.2,
        **_integrity(res, n),
        "sim_wall_seconds": time.perf_counter() - wall,
    }


# -- 4. cost ---------------------------------------------------------------------------------------


@dataclass
class CostRun:
    report: CostReport
    calls_per_reminder: dict[str, float]
    integrity: dict[str, Any]
    item_bytes: dict[str, float]
    sim_wall_seconds: float
    lateness_p99: float = 0.0  # due to send, first attempts (issue 32: what a cheaper size spends)


def cost(
    n: int = 20_000,
    *,
    per_day: float = 1_000_000,
    beyond_fraction: float = 0.9,
    seed: int = 3,
    deployment: Deployment | None = None,
) -> CostRun:
    """``n`` single-channel reminders falling due at ``per_day`` (the rate sets how full batches and
    index pages are), ``beyond_fraction`` created more than 900 s ahead, no faults; run until the
    watchdog has passed them all. Minus an empty run of the same span."""
    wall = time.perf_counter()
    rng = random.Random(seed)
    window = n / (per_day / 86400)  # the span over which they fall due
    first_due = START.timestamp() + 7300
    plan: list[tuple[float, float]] = []
    for _ in range(n):
        due = float(math.ceil(first_due + rng.random() * window))
        ahead = rng.uniform(901, 7200) if rng.random() < beyond_fraction else rng.uniform(30, 900)
        plan.append((due - ahead, due))
    until = first_due + window + 900 + 240  # the watchdog (900 s behind) has passed them all

    def run(load: bool) -> tuple[Simulation, SimResult]:
        sim = Simulation(start=START, seed=seed, size_every=1, deployment=deployment)
        if load:
            for i, (created, due) in enumerate(plan):

                def make(i: int = i, due: float = due) -> None:
                    sim.create(command(i, datetime.fromtimestamp(due, UTC)))

                sim.at(created, make)
        sim.run(until)
        return sim, sim.result()

    loaded, res = run(True)
    empty, _ = run(False)
    span = until - START.timestamp()
    delivered = res.ledger.get("delivered", 0)
    report = cost_report(loaded.meter, empty.meter, delivered, span)
    hs = loaded.world.health_store
    add_sender_reads(report, sends=res.receiver["posts"], health_reads=hs.reads, health_writes=hs.writes)
    add_kms_requests(
        report,
        sends=res.receiver["posts"],
        endpoints=len({_endpoint_of(command(i, START)) for i in range(n)}),
        environments=res.cold_starts.get("webhook", 1),
        peak=res.peak_concurrency.get("webhook", 1),
    )
    per: Counter[str] = Counter()
    for (service, op, step), c in loaded.meter.calls.items():
        per[f"{step} {service}:{op}"] += c
    for (service, op, step), c in empty.meter.calls.items():
        per[f"{step} {service}:{op}"] -= c
    item_sizes = [item_size(it) for it in loaded.memory.items.values()]
    return CostRun(
        report=report,
        calls_per_reminder={k: v / max(1, delivered) for k, v in sorted(per.items()) if v > 0},
        integrity=_integrity(res, n),
        item_bytes={"mean": sum(item_sizes) / max(1, len(item_sizes)), "max": float(max(item_sizes or [0]))},
        sim_wall_seconds=time.perf_counter() - wall,
        lateness_p99=_p99(res.lateness),
    )


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0
