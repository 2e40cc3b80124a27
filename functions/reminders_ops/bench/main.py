"""``make bench``: the five figures of the specification's targets, each with the command that
reproduces it, a one-line explanation, the goal beside it, and bench/results.json.

  python -m reminders_ops.bench [--burst N] [--only drain,burst,lateness,cost,overhead,opevents,parked,
  templates]

1 drain and 2 burst run the simulator (the real services on in-memory SQS/DynamoDB, virtual time,
modelled AWS concurrency and latency); 3 lateness runs the real handlers on moto in server mode in
real time, and the simulator across the 900 s boundary; 4 cost counts every AWS call on moto and in
the simulator and prices them; 5 measures our CPU per record and each handler's cold start.
A figure that misses its goal says so, by how much, and why.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reminders.domain.retry import RetryPolicy

from reminders_ops.bench.sim import scenarios
from reminders_ops.bench.sim.cost import (
    CRON_MARK_PER_MILLION,
    ENVIRONMENT_LIFETIME_SECONDS,
    EVENTBRIDGE_SCHEDULER_PER_MILLION,
    GOAL_PER_MILLION,
    IDLE_POLLS_PER_MINUTE_PER_ESM,
    INVARIANT_WRITES,
    PROVISIONED_UTILIZATION,
    REFERENCE_MONTHLY_VOLUME,
    design_floor,
    provisioned_prices,
)
from reminders_ops.bench.sim.meter import STEPS
from reminders_ops.bench.sim.model import Deployment, Latency, Prices

FIGURES = (
    "drain",
    "burst",
    "lateness",
    "cost",
    "overhead",
    "attention",
    "receipts",
    "limiter",
    "item_bytes",
    "opevents",
    "parked",
    "templates",
    "memory",
    "email",
)
RECORD_CONCURRENCY = 10  # handlers/delivery.py DEFAULT_RECORD_CONCURRENCY
WIDTH = 100


@dataclass(frozen=True)
class Sizes:
    drain: int = 10_000
    boundary: int = 2_000
    embedded: int = 200
    moto_cost: int = 200
    sim_cost: int = 20_000
    cpu_records: int = 3_000
    cold_runs: int = 5  # issue 14: the median of 5 fresh processes per handler
    sim_memory: int = 2_000  # issue 32: the cost run repeated at each consumer memory size
    cpu_runs: int = 3  # issue 32: CPU per record is the median of this many runs
    embedded_runs: int = 3  # issue 32.5: the embedded lateness is the median of this many runs
    emails: int = 2_000  # issue 32.4: email reminders per wait of the ambiguous-email curve

    @classmethod
    def quick(cls) -> Sizes:
        """Tiny sizes: the whole bench in well under a minute (used by the test suite)."""
        return cls(
            drain=300, boundary=60, embedded=8, moto_cost=8, sim_cost=300, cpu_records=60, cold_runs=1,
            sim_memory=200, cpu_runs=1, embedded_runs=1, emails=100,
        )  # fmt: skip


def _verdict(ok: bool) -> str:
    return "MEETS" if ok else "MISSES"


def _miss(measured: float, goal: float) -> str:
    return "" if measured <= goal else f" (by {measured / goal - 1:.0%})"


class Printer:
    def __init__(self) -> None:
        self.summary: list[tuple[str, str, str, str]] = []

    def section(self, n: int, title: str, command: str, what: str) -> None:
        print()
        print(f"== {n}. {title} ".ljust(WIDTH, "="))
        print(f"$ {command}")
        print(f"  {what}")

    def line(self, text: str = "") -> None:
        print(("  " + text.replace("\n", "\n  ")) if text else "")

    def figure(self, name: str, measured: str, goal: str, ok: bool | None, note: str = "") -> None:
        verdict = "" if ok is None else _verdict(ok)
        print(f"  {name:<38} {measured:<24} goal {goal:<16} {verdict}{note}")
        self.summary.append((name, measured, goal, verdict + note))


def _time_figure(p: Printer, name: str, r: dict[str, Any], bound: str = "bound", digits: int = 2) -> None:
    """A drain's or a burst's time beside its goal, 1.10x its bound."""
    ratio = r["ratio"]
    p.figure(
        name,
        f"{r['seconds']:.1f} s = {ratio:.{digits}f}x {bound}",
        f"≤ 1.10x {bound}",
        ratio <= 1.10,
        _miss(ratio, 1.10),
    )


def _lost_figure(p: Printer, name: str, r: dict[str, Any]) -> None:
    """Lost deliveries and duplicates (accepted twice, or resent after an acceptance): 0 / 0."""
    dup = r["duplicates_accepted"] + r["resent_after_accept"]
    p.figure(name, f"{r['lost']} / {dup}", "0 / 0", r["lost"] == 0 and dup == 0)


# -- 1. drain ---------------------------------------------------------------------------------------


def figure_drain(p: Printer, sizes: Sizes) -> dict[str, Any]:
    n = sizes.drain
    p.section(
        1,
        "drain",
        "python -m reminders_ops.bench --only drain",
        f"{n:,} reminders due at the same instant; a receiver allowing R = 200/s, failing p = 10 % "
        "transiently;\n  simulator (real services, virtual time), deployment as synthesized, "
        "DESTINATION_RATE_PER_SECOND = R.",
    )
    default = scenarios.drain(n)
    # The policy before issue 16 (30 s base, 6 attempts), for comparison.
    previous = RetryPolicy(
        version="2026-12-01.1", base_seconds=30.0, max_attempts=6, throttle_base_seconds=30.0
    )
    fast = scenarios.drain(n, policy=previous)
    for label, r in (("default retry policy", default), ("previous policy, base 30 s", fast)):
        _time_figure(p, f"drain time, {label}", r)
        p.line(
            f"    bound N/(R(1-p)) = {r['bound_seconds']:.1f} s; 99 % done at {r['p99_seconds']:.1f} s "
            f"({r['p99_ratio']:.2f}x); base {r['policy']['base_seconds']:.0f} s; "
            f"{r['attempts']:,} attempts, {r['throttled_429']:,} x 429, {r['failed_500']:,} x 500, "
            f"{r['rate_limited_yields']:,} rate-limit yields"
        )
        _lost_figure(p, f"  lost / duplicates ({label})", r)
        most, rate = r["max_posts_in_1s"], r["rate_per_second"]
        p.figure(
            f"  max sends in any 1 s window ({label}; the limiter shared by every instance)",
            f"{most} = {most / rate:.3f} R ({r['limiter_writes_per_post']:.2f} limiter writes per send)",
            "≤ 1.05 R",
            most <= rate * 1.05,
            _miss(most / rate, 1.05),
        )
    p.line(
        "why: the body of the drain runs at the provider's budget (99 % of reminders are done within "
        f"{default['p99_ratio']:.2f}x of the bound);"
    )
    p.line(
        "the tail: with the previous policy (base 30 s) a failure near the end waited 30-120 s; the "
        "adaptive default\n  retries within 1-2 s, and what is left is first attempts still running "
        "after the bound: the\n  rate-limit yields (each a claim given back with whole-second "
        "visibility) waste the provider's budget at\n  the end of the drain (the limiter of issue 15 "
        "and sub-second waits of issue 14 would close it)."
    )
    p.line(
        f"    endpoint health (issue 16): {default['health_writes_per_send']:.3f} health writes per send, "
        f"{default['health_reads']:,} health reads; transitions {len(default['transitions'])}"
    )
    outage = _drain_outage(p, n)
    return {"default_policy": default, "previous_policy": fast, "endpoint_down_120s": outage}


def _drain_outage(p: Printer, n: int) -> dict[str, Any]:
    """Issue 16: the same drain to ONE endpoint that is down for 120 s from 20 s after the due time."""
    r = scenarios.drain(n, down_after=20.0, down_for=120.0, accounts=1)
    _time_figure(p, "drain time, endpoint down 120 s mid-drain", r, "(bound + 120 s)")
    held = r.get("sends_after_views_expired", 0)
    p.figure(
        "  sends to it while held (after every consumer's 1 s view)",
        f"{held} in {r.get('probe_intervals', 0)} probe intervals",
        "≤ 1 per probe interval",
        held <= r.get("probe_intervals", 0),
    )
    p.line(
        f"    held {r.get('held_seconds', 0):.1f} s; {r.get('sends_in_first_view_seconds', 0)} sends in"
        " the first second of the hold (consumers whose cached view had not expired); "
        f"{r['health_writes_per_send']:.3f} health writes per send; transitions {r['transitions']}"
    )
    _lost_figure(p, "  lost / duplicates (endpoint down)", r)
    return r


# -- 2. burst ---------------------------------------------------------------------------------------


def figure_burst(p: Printer, n: int) -> dict[str, Any]:
    p.section(
        2,
        "burst",
        f"python -m reminders_ops.bench --only burst --burst {n}",
        f"{n:,} reminders due within one minute (created 30 min ahead: index -> dispatcher -> SQS), "
        "R = 5,000/s;\n  MaximumConcurrency sized to R; event sources start at 5 batches and add "
        "300 per minute.",
    )
    r = scenarios.burst(n)
    _time_figure(p, "burst time (due minute -> last outcome)", r, digits=3)
    p.line(
        f"    bound max(N/R, 60 s) = {r['bound_seconds']:.0f} s; MaximumConcurrency {r['max_concurrency']}, "
        f"peak {r['peak_concurrency']}; sim {r['sim_wall_seconds']:.0f} s wall "
        f"({r['sim_create_wall_seconds']:.0f} s creating)"
    )
    p.figure(
        "per-shard dispatcher load (max/mean)",
        f"{r['shard_dispatched_max_over_mean']:.3f} over {r['shards']} shards",
        "≤ 1.05",
        r["shard_dispatched_max_over_mean"] <= 1.05,
        _miss(r["shard_dispatched_max_over_mean"], 1.05),
    )
    p.line(
        f"    busiest index partition: {r['index_partition_items_max']:,} items, read in "
        f"{r['busiest_shard_dispatch_seconds']:.0f} s at "
        f"{r['busiest_partition_read_units_per_second']:.0f} RRU/s (partition limit 3,000 RRU/s); "
        f"{r['shard_runs']} shard runs"
    )
    _lost_figure(p, "lost / duplicates", r)
    p.line(
        f"    {r['lanes']} records of a batch in flight per invocation (the handler's thread pool); "
        "event-source scaling,\n    long-poll and invoke latencies are modelled constants "
        "(bench/LATENCY_MODEL.md)"
    )
    if r["ratio"] > 1.10:
        p.line(
            "why: Lambda's SQS scaling (5 batches, +300/min) needs about a minute to reach the "
            "concurrency R needs."
        )
    return r


# -- 3. lateness ------------------------------------------------------------------------------------


#: Issue 32.5: the embedded runtime's goals, raised from MISSION's 0.5 s / 0.2 s (met) to these.
EMBEDDED_P99_GOAL_SECONDS = 0.25
EMBEDDED_P50_GOAL_SECONDS = 0.1


def embedded_lateness_median(p: Printer, sizes: Sizes) -> dict[str, Any]:
    """Issue 32.5: ``sizes.embedded_runs`` runs of the embedded lateness bench, each printed with
    the machine's load; the run of median p99 is the figure (one run on a shared machine is noisy)."""
    from reminders_ops.bench.sim.embedded import embedded_lateness

    runs = []
    for i in range(sizes.embedded_runs):
        load = os.getloadavg()[0]
        r = {**embedded_lateness(sizes.embedded, lead=(20.0, 60.0)), "load_average": load}
        runs.append(r)
        p.line(
            f"    run {i + 1}: p99 {r['p99_seconds']:.3f} s, p50 {r['p50_seconds']:.3f} s, early "
            f"{r['early_sends']}, load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
        )
    ranked = sorted(runs, key=lambda r: r["p99_seconds"])
    median = dict(ranked[len(ranked) // 2])
    median["p50_seconds"] = sorted(r["p50_seconds"] for r in runs)[len(runs) // 2]
    median["early_sends"] = sum(r["early_sends"] for r in runs)  # never early: in any run
    median["runs"] = [{k: v for k, v in r.items() if not isinstance(v, (list, dict))} for r in runs]
    return median


def figure_lateness(p: Printer, sizes: Sizes) -> dict[str, Any]:

    p.section(
        3,
        "lateness",
        "python -m reminders_ops.bench --only lateness",
        f"schedule-to-send (provider-call start - due_at): {sizes.embedded} reminders due at whole "
        "seconds 20-60 s ahead on the\n  embedded runtime (moto server in its own process, real handlers, "
        "pollers scaled as Lambda scales\n  an SQS event source (5, +5/s while messages wait, up to "
        "MaximumConcurrency), batches of 10, a local receiver, real time);\n  "
        f"{sizes.boundary:,} across the 900 s boundary in the simulator.",
    )
    e = embedded_lateness_median(p, sizes)
    ok_e = (
        e["p99_seconds"] <= EMBEDDED_P99_GOAL_SECONDS
        and e["p50_seconds"] <= EMBEDDED_P50_GOAL_SECONDS
        and e["early_sends"] == 0
    )
    p.figure(
        "embedded runtime p99 (p50)",
        f"{e['p99_seconds']:.3f} s ({e['p50_seconds']:.3f} s)",
        f"p99 ≤ {EMBEDDED_P99_GOAL_SECONDS} s, p50 ≤ {EMBEDDED_P50_GOAL_SECONDS} s",
        ok_e,
        _miss(e["p99_seconds"], EMBEDDED_P99_GOAL_SECONDS),
    )
    p.line(
        f"    max {e['max_seconds']:.3f} s, early sends {e['early_sends']}, lost {e['lost']}; DelaySeconds "
        f"rounded down, the consumer waited the\n    sub-second rest before its claim (p50 "
        f"{e['subsecond_wait_p50_seconds']:.3f} s, p99 {e['subsecond_wait_p99_seconds']:.3f} s: "
        "not lateness); "
        f"records of a batch sent concurrently ({RECORD_CONCURRENCY} at a time); "
        f"{e['pollers']} pollers at the end;\n    visible -> received p50 "
        f"{e['visible_to_received_p50_seconds']:.3f} s, p99 {e['visible_to_received_p99_seconds']:.3f} s; "
        "due (or received, if later) -> at the receiver p50 "
        f"{e['due_or_received_to_send_p50_seconds']:.3f} s, "
        f"p99 {e['due_or_received_to_send_p99_seconds']:.3f} s (the claim, send and HTTP)"
    )
    b = scenarios.boundary_lateness(sizes.boundary)
    ok_b = b["p99_seconds"] <= 0.5 and b["p50_seconds"] <= 0.2 and b["early_sends"] == 0
    p.figure(
        "simulator across 900 s, p99 (p50)",
        f"{b['p99_seconds']:.3f} s ({b['p50_seconds']:.3f} s)",
        "p99 ≤ 0.5 s, p50 ≤ 0.2 s",
        ok_b,
        _miss(b["p99_seconds"], 0.5),
    )
    p.line(
        f"    direct to SQS ({b['direct']}): p99 {b['direct_p99_seconds']:.3f} s; via index + dispatcher "
        f"({b['via_index']}): p99 {b['via_index_p99_seconds']:.3f} s; early sends {b['early_sends']}"
    )
    window = b["batching_window_seconds"]
    w0: dict[str, Any] | None = None
    if window > 0:
        w0 = scenarios.boundary_lateness(
            sizes.boundary, deployment=Deployment.from_template().with_(delivery_batching_window=0.0)
        )
        p.line(
            f"    what-if MaximumBatchingWindowInSeconds = 0: p99 {w0['p99_seconds']:.3f} s "
            f"(p50 {w0['p50_seconds']:.3f} s)"
        )
    if not (ok_e and ok_b):
        why = []
        if window > 0:
            why.append(
                f"why: MaximumBatchingWindowInSeconds = {window:.0f} s in the template holds a lone message "
                "up to that long (a modelled constant, bench/LATENCY_MODEL.md);"
            )
        why.append(
            "  the embedded runtime is moto in server mode on this shared 2-core machine: moto spends "
            "~0.1 s of CPU per reminder\n  (its DynamoDB and SQS emulation), so each claim, send and "
            "record costs tens to hundreds of ms more than on AWS\n  once the machine is loaded."
        )
        for w in why:
            p.line(w)
    out = {"embedded": e, "simulator_boundary": b}
    if w0 is not None:
        out["simulator_boundary_window_0"] = w0
    return out


# -- 4. cost ----------------------------------------------------------------------------------------


def figure_cost(p: Printer, sizes: Sizes) -> dict[str, Any]:
    from reminders_ops.bench.sim.embedded import moto_cost

    prices = Prices()
    p.section(
        4,
        "cost",
        "python -m reminders_ops.bench --only cost",
        "$ per million delivered single-channel reminders, 90 % due beyond 900 s, creation to recorded "
        "outcome,\n  us-east-1 list prices (SQS $0.40/M, DynamoDB $0.625/M WRU, $0.125/M RRU, Lambda "
        "$0.20/M + $0.0000133334/GB-s arm64,\n  KMS $0.03 per 10,000 requests).",
    )
    m = moto_cost(sizes.moto_cost)
    p.line(
        f"counted on moto ({m['n']} reminders, {m['beyond_window']} beyond the window, {m['ticks']} ticks; "
        "per reminder, per-tick calls apart):"
    )
    for k, v in m["calls_per_reminder"].items():
        if "(empty)" not in k:
            p.line(f"    {k:<42} {v:6.2f}")
    units = ", ".join(f"{k} {v:.2f}" for k, v in m["units_per_reminder"].items())
    p.line(f"    units per reminder: {units}")
    s = scenarios.cost(sizes.sim_cost)
    rep = s.report
    p.line(
        f"simulator ({rep.delivered:,} delivered at 1M/day, no faults; per million delivered; item "
        f"{s.item_bytes['mean']:.0f} B when delivered):"
    )
    p.line(
        f"    {'step':<10}{'SQS req':>12}{'WRU':>12}{'RRU':>12}{'Lambda req':>12}{'GB-s':>10}{'KMS req':>10}"
        f"{'$':>9}"
    )
    dollars = rep.step_dollars()
    for step in STEPS:
        u = rep.per_million[step]
        p.line(
            f"    {step:<10}{u.sqs_requests:>12,.0f}{u.write_units:>12,.0f}{u.read_units:>12,.0f}"
            f"{u.lambda_requests:>12,.0f}{u.gb_seconds:>10,.0f}{u.kms_requests:>10,.0f}{dollars[step]:>9.3f}"
        )
    p.line(
        f"    {'fixed':<10} ${rep.fixed_per_month:.2f}/month (rule, shard workers, cursors; "
        f"+ written model: {IDLE_POLLS_PER_MINUTE_PER_ESM} idle long polls/min x 3 event sources)\n"
        f"               = ${rep.fixed_per_million:.3f} per million at "
        f"{REFERENCE_MONTHLY_VOLUME / 1e6:.0f}M/month"
    )
    km, kms = rep.kms_model, rep.kms_per_million
    p.line(
        f"    KMS ${kms:.4f} per million ({kms / rep.total:.2%} of the total; written model: the deployment "
        f"signing key's\n    Decrypt once per webhook environment start, {km['environments']:.0f} "
        f"environments started again every {ENVIRONMENT_LIFETIME_SECONDS / 3600:.0f} h: "
        f"{km['decrypts_per_month']:,.0f} a month, in fixed;\n    {km['decrypts_per_send']:.6f} Decrypt "
        f"per send at {REFERENCE_MONTHLY_VOLUME / 1e6:.0f}M/month, for {km['endpoints']:,.0f} implicit "
        "endpoints (the run's (account, origin) pairs);\n    no KMS request per endpoint or send; "
        "GenerateDataKey once per deployment)"
    )
    delivered_wu = sum(u.write_units for u in rep.per_million.values()) / 1e6
    consume_gbs = rep.per_million["consume"].gb_seconds / 1e6
    p.line(
        f"    per delivered reminder: {delivered_wu:.2f} write units, item {s.item_bytes['mean']:.0f} B "
        f"(max {s.item_bytes.get('max', float('nan')):.0f} B) when delivered; consume "
        f"{consume_gbs * 1e3:.2f} GB-ms per record at {dep_memory()} MB"
    )
    total = rep.total
    p.figure(
        "$ per million delivered",
        f"${total:.2f}",
        f"≤ ${GOAL_PER_MILLION:.2f}",
        total <= GOAL_PER_MILLION,
        _miss(total, GOAL_PER_MILLION),
    )
    p.line(
        f"    vs ≈ ${EVENTBRIDGE_SCHEDULER_PER_MILLION:.2f} (EventBridge Scheduler per reminder) and "
        f"≈ ${CRON_MARK_PER_MILLION:.2f} (GSI + mark cron)"
    )
    lat = Latency()
    gbs_per_100ms = 0.1 * Deployment.from_template().memory_mb.get("delivery", 256) / 1024
    p.line(
        f"    written model: GSI writes 1 per created reminder (counted in the simulator, not by moto), "
        f"Lambda GB-s from\n    modelled durations (provider {lat.provider * 1e3:.0f} ms; each +100 ms "
        f"adds ${gbs_per_100ms * prices.lambda_gb_second * 1e6:.2f}/M), empty polls as above."
    )
    what_if: dict[str, Any] = {}
    dep = Deployment.from_template()
    if dep.delivery_batching_window == 0:
        alt = scenarios.cost(sizes.sim_cost, deployment=dep.with_(delivery_batching_window=1.0)).report
        what_if = {"batching_window_1s_total_per_million": alt.total}
        c = alt.per_million["consume"]
        consume = alt.step_dollars()["consume"]
        p.line(
            f"    what-if MaximumBatchingWindowInSeconds = 1: ${alt.total:.2f} (consume ${consume:.2f}: "
            f"{c.sqs_requests / 1e6:.2f} SQS requests,\n    {c.lambda_requests / 1e6:.2f} invocations "
            "per reminder; costs up to 1 s of lateness)"
        )
    floor = design_floor(rep)
    prov = replace(rep, prices=provisioned_prices(rep.prices))
    what_if["design_floor_per_million"] = floor
    what_if["provisioned_total_per_million"] = prov.total
    p.line(
        f"    what-if the table in provisioned capacity (autoscaled at {PROVISIONED_UTILIZATION:.0%} "
        f"utilization, ${prov.prices.write_unit * 1e6:.2f}/M write units): ${prov.total:.2f}"
    )
    for w in _cost_why(rep, floor, prov.total):
        p.line(w)
    timed = time_field_bytes()
    p.line(
        f"item bytes of a delivered single-channel webhook reminder: {timed['plain']} B; with local time,"
        f" zone, tzdata release,\n    send window and deliver_by: {timed['timed']} B"
        f" ({'under' if timed['timed'] < 1024 else 'OVER'} one write unit)"
    )
    return {
        "time_field_bytes": timed,
        "moto": m,
        "simulator": {
            **rep.as_dict(),
            "calls_per_reminder": s.calls_per_reminder,
            "item_bytes": s.item_bytes,
            "integrity": s.integrity,
            "sim_wall_seconds": s.sim_wall_seconds,
            **what_if,
        },
    }


def dep_memory() -> int:
    return Deployment.from_template().memory_mb.get("delivery", 256)


def time_field_bytes() -> dict[str, int]:
    """Issue 17: a delivered single-channel item's size before and after the time fields (the real
    services on the in-memory store; the longest zone name there is)."""
    from dataclasses import replace

    from reminders.adapters.clock import FixedClock
    from reminders.adapters.memory import MemoryReminderStore
    from reminders.domain.localtime import SendWindow
    from reminders.domain.models import Attempt, ChannelType
    from reminders.domain.ports import NullTelemetry
    from reminders.domain.schedule import iso
    from reminders.domain.states import DeliveryState
    from reminders.services.intents import ChannelSpec, NewReminder, Reminders, resolve_local

    from reminders_ops.bench.sim.model import item_size

    clock = FixedClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    store = MemoryReminderStore()
    svc = Reminders(store=store, queues=None, clock=clock, telemetry=NullTelemetry(), shards=16)  # type: ignore[arg-type]
    zone_name = "America/Argentina/ComodRivadavia"
    instant, wall = resolve_local("2027-03-28T09:00", zone_name)
    base = NewReminder(
        account_id="acct-000001",
        key="renewal-reminder:acct-000001:2027-03-28:webhook",
        kind="renewal",
        due_at=instant,
        channels=(ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/reminders/acct-000001"),),
        template_id="renewal",
        template_version=1,
        data={"renewal_date": "2027-03-28", "plan": "pro"},
    )
    timed = replace(
        base,
        key=base.key + ":t",
        due_local=wall,
        time_zone=zone_name,
        send_window=SendWindow.parse("08:00", "21:00"),
        deliver_by=instant + timedelta(days=1),
    )
    out: dict[str, int] = {}
    for name, cmd in (("plain", base), ("timed", timed)):
        r, _ = svc.create(cmd)
        d = r.deliveries["webhook-0"]
        line = Attempt(
            at=iso(instant), event="attempt", outcome="accepted", status=200, decision="delivered",
            policy_version="2026-12-01.1", receipt="msg_0123456789abcdef", fingerprint="f" * 32, worker="w-1",
            dest="f7cba30c",
        )  # fmt: skip
        delivered = replace(
            d, state=DeliveryState.DELIVERED, delivered_at=iso(instant), receipt=line.receipt, history=[line]
        )
        store.save_delivery(r.id, delivered, d.rev)
        out[name] = item_size(store.items[r.id])
    return out


def _cost_why(rep: Any, floor: dict[str, float], provisioned: float) -> list[str]:
    if rep.total <= GOAL_PER_MILLION:
        return []
    c = rep.per_million["consume"]
    consume = rep.step_dollars()["consume"]
    f = floor
    return [
        f"why: the floor of this design is ${f['total']:.2f} (writes ${f['writes']:.2f}, SQS at full batches "
        f"${f['sqs']:.2f},\n  invocations ${f['invocations']:.2f}, reads ${f['reads']:.2f}, KMS "
        f"${f['kms']:.2f}, fixed "
        f"${f['fixed']:.2f}): over the goal by itself. {INVARIANT_WRITES} write units per reminder\n"
        "  are what the invariant needs: the row; its due-index entry, so a reminder beyond SQS's 900 s is\n"
        "  found; the claim before the send, so two copies of one message never both send; the outcome\n"
        f"  after it, so a crash after the send does not send again: ${f['writes']:.2f} at on-demand prices.",
        f"  above the floor: consume ${consume:.2f} ({c.lambda_requests / 1e6:.2f} invocations and "
        f"{c.sqs_requests / 1e6:.2f} SQS requests per reminder:\n  at 1M/day batches fill only as fast as "
        "reminders fall due; the consumer's wait before its claim is billed).",
        f"  what would close it: provisioned capacity (${provisioned:.2f}; not the default: a table sized\n"
        "  for 1M/day throttles a million due in one minute for the minutes autoscaling takes, where\n"
        "  on-demand absorbs it), or fewer writes than the invariant needs (no).",
    ]


def figure_overhead(p: Printer, sizes: Sizes) -> dict[str, Any]:
    from reminders_ops.bench.sim.overhead import cold_starts

    p.section(
        5,
        "handler overhead",
        "python -m reminders_ops.bench --only overhead",
        "our CPU per SQS record: handlers.delivery.webhook_handler invoked with real SQS events, "
        "in-memory backends,\n  an instant receiver (time.process_time); cold start: import + first "
        "invocation in a fresh process vs a\n  process importing only boto3 and aws_lambda_powertools "
        "(child CPU time; wall beside it).",
    )

    cpu = figure_cpu_per_record(p, sizes)
    cold = cold_starts(sizes.cold_runs)
    base = cold.get("baseline", {})
    p.line(
        f"baseline (import boto3 + aws_lambda_powertools): {base.get('cpu_ms', float('nan')):.0f} ms CPU, "
        f"{base.get('wall_ms', float('nan')):.0f} ms wall; handlers without the Tracer (no LAMBDA_TASK_ROOT: "
        "its cost is --only trace); handlers from "
        f"{cold['handlers_from']}; "
        f"load average {cold['load_average']:.1f}"
    )
    worst = 0.0
    for name, m in cold["handlers"].items():
        if "error" in m:
            p.figure(name.replace("reminders.handlers.", ""), "error", "≤ +100 ms", False, f" {m['error']}")
            worst = float("inf")
            continue
        above = m["cpu_above_baseline_ms"]
        worst = max(worst, above)
        p.figure(
            name.replace("reminders.handlers.", ""),
            f"+{above:.0f} ms (wall +{m['wall_above_baseline_ms']:.0f})",
            "≤ +100 ms",
            above <= 100,
            f" (by {above - 100:.0f} ms)" if above > 100 else "",
        )
    if worst > 100:
        p.line(
            "why: each function imports what its path uses (tests/unit/test_cold_start_imports.py), the "
            "collector is paused\n  while an instance initialises, botocore models are read as plain dicts "
            "(adapters/clients.FastLoader), the API's\n  models build on first use. What remains: the first "
            "botocore client (session, endpoints.json, model, rule set),\n  Powertools' batch utilities "
            "(asyncio, every event data class), our modules (dataclasses, enums), the first\n  calls; the "
            "API adds pydantic and the resolver (~230 ms); the shard worker walks its buckets (a Query "
            "each).\n  Closing more: trimmed, pre-parsed botocore models in the layer; on a loaded machine "
            "every figure grows\n  with the baseline (printed above)."
        )
    return {**cpu, "cold": cold}


def figure_cpu_per_record(p: Printer, sizes: Sizes) -> dict[str, Any]:
    """Issue 32 item 3, the figure of record: our CPU per SQS record of the webhook consumer as
    deployed — logs at the production level (INFO: one line per record), the service's EMF metrics
    (one document per batch), the Powertools batch processor and the records' thread pool; X-Ray off
    (the deployed Tracer adds a subsegment per invocation, not per record, and one per AWS call, which
    the in-memory store does not make). The median of ``sizes.cpu_runs`` runs, with the load."""
    from reminders_ops.bench.sim.overhead import handler_cpu_per_record

    def median(**kw: Any) -> dict[str, Any]:  # CPU time on a shared machine is noisy
        runs = sorted(
            (handler_cpu_per_record(sizes.cpu_records, **kw) for _ in range(max(1, sizes.cpu_runs))),
            key=lambda r: r["cpu_us_per_record"],
        )
        mid = runs[len(runs) // 2]
        return {**mid, "runs_us": [r["cpu_us_per_record"] for r in runs]}

    load = os.getloadavg()[0]
    full = median()
    quiet = median(log_level="WARNING")
    bare = median(log_level="WARNING", telemetry_on=False)
    us = full["cpu_us_per_record"]
    p.figure(
        "CPU per record (delivery handler)",
        f"{us:.0f} µs",
        "≤ 200 µs",
        us <= 200,
        _miss(us, 200) + f" (median of {len(full['runs_us'])}, load {load:.1f})",
    )
    p.line(
        f"    of record: INFO logs ({full['stdout_bytes_per_record']:.0f} B of logs + EMF per record), "
        f"EMF metrics, X-Ray off;\n    without INFO logs {quiet['cpu_us_per_record']:.0f} µs; without the "
        f"service's metrics and logs {bare['cpu_us_per_record']:.0f} µs (batch processor,\n    parsing, "
        f"claim, render, record on the in-memory store); webhook signing adds "
        f"{full['webhook_signing_us']:.0f} µs"
    )
    return {"cpu_per_record": full, "cpu_without_info_logs": quiet, "cpu_without_telemetry": bare}


def figure_memory(p: Printer, sizes: Sizes) -> dict[str, Any]:
    from reminders_ops.bench import memory

    p.section(
        10,
        "consumer memory",
        "python -m reminders_ops.bench --only memory",
        "$ per million and lateness p99 at each delivery consumer memory size (simulator, CPU ∝ memory)",
    )
    return memory.figure(p, sizes.sim_memory, Deployment.from_template().memory_mb.get("delivery", 192))


def figure_email(p: Printer, sizes: Sizes) -> dict[str, Any]:
    """Issue 32.4: the emails whose first send was ambiguous — how late they arrive after due at the
    default wait, and the residual (duplicates) it keeps; the curve over the waits beside it."""
    from reminders.domain.retry import RetryPolicy

    from reminders_ops.bench import email_residual as er

    p.section(
        11,
        "ambiguous email",
        f"python -m reminders_ops.bench.email_residual --seed 7 -n {sizes.emails}",
        "email reminders through the real consumer, SES sender and reconciler with SES's faults and its\n"
        "  send-event latency model (seed 7): lateness after due of the emails whose first send was\n"
        "  ambiguous, and duplicates, at each wait before an unconfirmed send is retried",
    )
    default = RetryPolicy().unconfirmed_send_wait_seconds
    results = er.curve(7, sizes.emails)
    for line in er.format_curve(results, default).splitlines():
        p.line(line)
    at = next(r for r in results if r.wait_seconds == default)
    late = er.p99(at.lateness_after_ambiguous)
    p.figure(
        "ambiguous email p99 after due",
        f"{late:.0f} s ({at.ambiguous_waits} emails)",
        "≤ 300 s",
        late <= 300,
    )
    p.figure(
        "email residual (duplicates)", f"{at.duplicate_percent:.2f} %", "≤ 0.2 %", at.duplicate_percent <= 0.2
    )
    return {
        "wait_seconds": default,
        "emails": at.emails,
        "ambiguous": at.ambiguous_waits,
        "p99_after_due_seconds": late,
        "duplicate_percent": at.duplicate_percent,
        "curve": [
            {"wait": r.wait_seconds, "duplicates": r.duplicates, "p99": er.p99(r.lateness_after_ambiguous)}
            for r in results
        ],
    }


def _figure_limiter(p: Printer) -> dict[str, Any]:
    from reminders_ops.bench.limiter import figure_limiter

    return figure_limiter(p, 6)


def figure_item_bytes(p: Printer) -> dict[str, Any]:
    """Issue 15: a delivered reminder's stored bytes and write units, before endpoints and after."""
    from reminders_ops.bench.item_bytes import measure

    p.section(
        7,
        "item bytes per delivered reminder",
        "python -m reminders_ops.bench.item_bytes",
        "one single-channel webhook reminder through create, claim, send and record (real services,"
        " in-memory store metered\n  by DynamoDB's size and write-unit rules); before = a bare URL as"
        " every webhook was before endpoints, after = an endpoint_id",
    )
    r = measure()
    before, after = r["before"], r["after"]
    if r["fixture_item_bytes"] is not None:
        fixture = r["fixture_item_bytes"]
        p.line(f"    the stored-item fixture of 2026-11-30 (retryable, old history form): {fixture} B")
    for label, row in (("before (bare url)", before), ("after (endpoint_id)", after)):
        p.figure(
            f"delivered item bytes, {label}",
            f"{row['delivered_item_bytes']} B = {row['write_units_per_write']} WU per write",
            "< 1 KB (1 WU)",
            row["delivered_item_bytes"] < 1024,
        )
        p.figure(
            f"  write units create → delivered, {label}",
            f"{row['write_units_create_to_delivered']:g} WU",
            "(measured)",
            None,
            f"  (of which the endpoint use transaction {row['endpoint_use_write_units']} WU)"
            if row["endpoint_use_write_units"]
            else "",
        )
    p.figure(
        "  delivered item with a receiver receipt (after)",
        f"{after['with_receipt_bytes']} B",
        "< 1 KB (1 WU)",
        after["with_receipt_bytes"] < 1024,
    )
    return r


# -- main -------------------------------------------------------------------------------------------


def figure_attention(p: Printer, sizes: Sizes) -> dict[str, Any]:
    """The sparse attention index's write cost per delivered reminder (0 for a first-time delivery)."""
    from reminders_ops.bench import attention as attention_bench

    print()
    print("== support desk: attention index write cost (in-memory store, real services) ".ljust(WIDTH, "="))
    rows = attention_bench.figure(max(20, sizes.embedded * 2))
    first = rows["ok"]
    cost = first["attention_settle_writes_per_reminder"] + first["attention_index_writes_per_reminder"]
    p.summary.append(
        ("attention index writes, first-time delivery", f"{cost:.2f} per reminder", "0", _verdict(cost == 0))
    )
    return rows


# -- 6. receiver receipts (issue 19) -------------------------------------------------------------------


def figure_receipts(p: Printer, n: int) -> dict[str, Any]:
    from reminders_ops.bench.receipts import measure

    p.section(
        6,
        "receiver receipts",
        f"python -m reminders_ops.bench.receipts {n}",
        "signed receipts POSTed over HTTP to the API function on moto, then merged as the stream drives"
        " ReceiptsFunction; write units from the stored items' sizes",
    )
    r = measure(n)
    p.figure("receipts accepted per second", f"{r['accept_per_second']:.0f}/s", "(measured)", None)
    p.figure("receipts merged per second", f"{r['merge_per_second']:.0f}/s", "(measured)", None)
    p.figure(
        "write units per receipt",
        f"{r['write_units_per_receipt']} WU",
        "2 (put + merge)",
        r["write_units_per_receipt"] <= 2,
        f"  (receipt item {r['receipt_item_bytes']} B; delivered item {r['delivered_item_bytes_before']}"
        f" → {r['delivered_item_bytes_after']} B)",
    )
    return r


# -- 7. operational events (issue 16) -----------------------------------------------------------------


def figure_opevents(p: Printer, n: int) -> dict[str, Any]:
    import contextlib
    import io

    from reminders_ops.bench.opevents import measure

    p.section(
        7,
        "operational events: extra cost per delivered reminder",
        f"python -m reminders_ops.bench.opevents {n}",
        "reminders delivered on moto for an account without and one with an event endpoint; the table's"
        " stream read with OpEventsFunction's filters drives its handler; calls counted at the client",
    )
    with contextlib.redirect_stdout(io.StringIO()):  # the handlers' log and metric lines
        r = measure(n)
    without, with_ = r["without"], r["with"]
    p.figure(
        "without: records to OpEvents / reminder",
        f"{without['records_passing_filter_per_reminder']:.2f}",
        "(measured)",
        None,
        f"  (claim + outcome; {without['invocations_per_reminder_full_batches']:.3f} invocations per reminder"
        f" in full batches of 100; {without['registration_reads']} registration read(s) for"
        f" {without['invocations_here']} invocation(s); {without['dynamodb_writes']} writes)",
    )
    p.figure(
        "with: event reminders / delivered",
        f"{with_['event_reminders'] / n:.2f}",
        "1",
        with_["event_reminders"] == n and with_["duplicates_accepted"] == 0,
        f"  ({with_['emit_dynamodb_calls_per_reminder']:.2f} DynamoDB calls to emit:"
        f" {with_['emit_dynamodb_calls']}; then one more delivery:"
        f" {with_['sqs_messages_per_reminder']:.0f} SQS message, 1 claim + 1 outcome write,"
        f" {with_['event_posts']} POSTs for {n}; event item {with_['event_item_bytes_max']} B ="
        f" {with_['write_units_per_event_write']} WU; its own records"
        f" {with_['event_records_passing_filter_per_reminder']:.0f}/reminder, no events from them)",
    )
    return r


# -- 8. parked deliveries (issue 25 item 6) -------------------------------------------------------------


def figure_parked(p: Printer) -> dict[str, Any]:
    from reminders_ops.bench.parked import measure

    p.section(
        8,
        "messages per parked delivery over a 24 h hold",
        "python -m reminders_ops.bench.parked",
        "in-memory world, virtual time: an endpoint answering 503 for a day is held and its deliveries"
        " parked; dispatcher and watchdog every minute; the most live SQS messages of one delivery",
    )
    r = measure()
    most = r["most_live_messages_per_parked_delivery"]
    p.figure(
        "messages per parked delivery (24 h)",
        f"{most}",
        "≤ 1",
        most <= 1,
        f"  ({r['deliveries']} deliveries, {r['receiver_calls']} receiver calls)",
    )
    return r


def _quiet() -> None:
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


def run(
    only: tuple[str, ...] = FIGURES,
    *,
    burst: int = 100_000,
    sizes: Sizes | None = None,
    out: Path | None = Path("bench/results.json"),
) -> dict[str, Any]:
    _quiet()
    sizes = sizes or Sizes()
    p = Printer()
    started = time.perf_counter()
    dep = Deployment.from_template()
    print(
        f"reminders bench, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"deployment: {dep.source}: {dep.shards} shards, delivery batch {dep.delivery_batch_size}, "
        f"window {dep.delivery_batching_window:.0f} s, MaximumConcurrency {dep.delivery_max_concurrency}, "
        f"{dep.memory_mb.get('delivery')} MB"
    )
    print(f"simulator latencies: {Latency().describe()}")
    results: dict[str, Any] = {}
    steps: dict[str, Callable[[], dict[str, Any]]] = {
        "drain": lambda: figure_drain(p, sizes),
        "burst": lambda: figure_burst(p, burst),
        "lateness": lambda: figure_lateness(p, sizes),
        "cost": lambda: figure_cost(p, sizes),
        "overhead": lambda: figure_overhead(p, sizes),
        "attention": lambda: figure_attention(p, sizes),
        "receipts": lambda: figure_receipts(p, 50 if sizes == Sizes.quick() else 300),
        "limiter": lambda: _figure_limiter(p),
        "item_bytes": lambda: figure_item_bytes(p),
        "opevents": lambda: figure_opevents(p, 20 if sizes == Sizes.quick() else 50),
        "parked": lambda: figure_parked(p),
        "templates": lambda: figure_templates(p, 300 if sizes == Sizes.quick() else 2000),
        "memory": lambda: figure_memory(p, sizes),
        "email": lambda: figure_email(p, sizes),
    }
    for name in FIGURES:
        if name in only:
            t0 = time.perf_counter()
            results[name] = steps[name]()
            results[name]["bench_wall_seconds"] = time.perf_counter() - t0
    print()
    print("== summary ".ljust(WIDTH, "="))
    for name, measured, goal, verdict in p.summary:
        if not name.startswith("  "):
            print(f"  {name:<38} {measured:<24} {goal:<16} {verdict}")
    elapsed = time.perf_counter() - started
    print(f"  ({elapsed:.0f} s)")
    if out is not None:
        previous: dict[str, Any] = {}
        if out.exists() and set(only) != set(FIGURES):
            try:
                previous = json.loads(out.read_text())
            except ValueError:
                previous = {}
        payload = {
            **previous,
            **results,
            "meta": {
                "generated": datetime.now(UTC).isoformat(),
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "burst": burst,
                "deployment": dep.source,
                "latency": Latency().__dict__,
                "elapsed_seconds": elapsed,
            },
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(payload, indent=1, default=_json_default) + "\n")
        print(f"  results: {out}")
    return results


# -- 9. email templates (issue 30) ----------------------------------------------------------------------


def figure_templates(p: Printer, n: int) -> dict[str, Any]:
    from .templates import measure

    p.section(
        9,
        "email templates: render time per email, template reads",
        f"python -m reminders_ops.bench.templates {n}",
        "reminders naming one version (two locales, six typed variables, loops) rendered as their email"
        " send renders them, through 10 consumer instances each with its own cache; reads at the store",
    )
    r = measure(n)
    p.figure(
        "render CPU per email",
        f"{r['render_us_per_email']:.0f} µs",
        "(measured)",
        None,
        f"  (subject + text + HTML, sandboxed and bounded; {r['html_bytes_mean']:.0f} B of HTML)",
    )
    p.figure(
        "template reads per million reminders",
        f"{r['template_reads_per_million']:.0f}",
        "instances x versions",
        None,
        f"  ({r['template_reads_first_half']} reads for the first {r['reminders'] // 2} sends through"
        f" {r['instances']} instances, {r['template_reads_second_half']} for the next: one per instance and"
        " version, versions being immutable)",
    )
    return r


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and o != o:
        return None
    if hasattr(o, "__dict__"):
        return o.__dict__
    return str(o)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reminders_ops.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--burst", type=int, default=100_000, help="reminders in the burst figure (default 100,000)"
    )
    ap.add_argument(
        "--only", default=",".join(FIGURES), help=f"comma-separated subset of {','.join(FIGURES)}"
    )
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run, not the figures)")
    ap.add_argument("--out", default="bench/results.json", help="where to write the results ('' for nowhere)")
    args = ap.parse_args(argv)
    only = tuple(x.strip() for x in args.only.split(",") if x.strip())
    unknown = set(only) - set(FIGURES)
    if unknown:
        ap.error(f"unknown figure(s): {', '.join(sorted(unknown))}")
    run(
        only,
        burst=min(args.burst, 2000) if args.quick else args.burst,
        sizes=Sizes.quick() if args.quick else Sizes(),
        out=Path(args.out) if args.out else None,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
