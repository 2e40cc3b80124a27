"""Bench figure of issue 32 item 1: the delivery consumer's memory size, chosen by measurement.

Lambda allots CPU in proportion to memory (a full vCPU at 1,769 MB) and bills GB-seconds, so a smaller
size is cheaper per millisecond but runs our CPU longer. The simulator's cost run is repeated at each
size with that model (``Latency.handler_cpu_at``: the measured per-record CPU over the share allotted;
the cold start likewise), printing $ per million and the lateness p99 it spends. The floor is the
memory a warm consumer needs: a fresh process's peak resident set after importing the webhook handler
and building the clients it uses (``VmHWM``), with the headroom stated below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

#: Sizes tried (MB). Lambda accepts any size from 128 MB in 1 MB steps.
SIZES = (128, 192, 256, 384, 512, 1024)
#: A size must leave this much above the measured peak resident set: Lambda's "Max Memory Used" also
#: counts the runtime's own process, and a batch's ten records, boto3's response buffers and the
#: Powertools batch data classes come on top of an import-and-build process.
HEADROOM = 1.5

_CHILD = r"""
import json, os, resource
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
import boto3
import reminders.handlers.delivery  # noqa: F401  (what the webhook function imports)
session = boto3.session.Session()
clients = [session.client(s, region_name="us-east-1") for s in ("dynamodb", "sqs", "kms")]
# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child of a large bench process
# would report its parent's peak.
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
kb = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"maxrss_mb": kb / 1024}))
"""


def consumer_rss_mb() -> float:
    """Peak resident set (MB) of a process that imported the webhook consumer and built its clients."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, env=env, timeout=120
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["maxrss_mb"])


@dataclass(frozen=True)
class Point:
    memory_mb: int
    total: float  # $ per million delivered
    consume: float  # the consume step's $ per million
    gb_ms_per_record: float
    lateness_p99: float


def curve(n: int, sizes: tuple[int, ...] = SIZES) -> list[Point]:
    from reminders_ops.bench.sim import scenarios
    from reminders_ops.bench.sim.model import Deployment

    dep = Deployment.from_template()
    out = []
    for m in sizes:
        run = scenarios.cost(n, deployment=dep.with_(memory_mb={**dep.memory_mb, "delivery": m}))
        rep = run.report
        out.append(
            Point(
                m,
                rep.total,
                rep.step_dollars()["consume"],
                rep.per_million["consume"].gb_seconds / 1e6 * 1e3,
                run.lateness_p99,
            )
        )
    return out


#: A size may not spend lateness: its p99 stays within this of the best size's (a small size's cold
#: starts, twice as long at 128 MB, make the records behind them late).
LATENESS_SLACK = 1.25


def choose(points: list[Point], rss_mb: float, headroom: float = HEADROOM) -> Point:
    """The cheapest size that holds the measured resident set with its headroom and spends no
    lateness (p99 within ``LATENESS_SLACK`` of the best size's)."""
    best_p99 = min(pt.lateness_p99 for pt in points)
    fits = [
        pt
        for pt in points
        if pt.memory_mb >= rss_mb * headroom and pt.lateness_p99 <= best_p99 * LATENESS_SLACK
    ] or [max(points, key=lambda p: p.memory_mb)]
    return min(fits, key=lambda pt: (round(pt.total, 4), pt.memory_mb))


def figure(p: Any, n: int, deployed_mb: int) -> dict[str, Any]:
    rss = consumer_rss_mb()
    points = curve(n)
    best = choose(points, rss)
    p.line(
        f"consumer memory (issue 32): simulator cost run of {n:,} reminders at each size, CPU ∝ memory "
        f"(full vCPU at 1,769 MB);\n    peak resident set of the webhook consumer {rss:.0f} MB (import + "
        f"clients), sizes below {rss * HEADROOM:.0f} MB ({HEADROOM} x) refused"
    )
    p.line(f"    {'MB':>6}{'$ / million':>14}{'consume $':>12}{'GB-ms/record':>14}{'lateness p99':>15}")
    for pt in points:
        small = pt.memory_mb < rss * HEADROOM
        late = pt.lateness_p99 > min(q.lateness_p99 for q in points) * LATENESS_SLACK
        mark = (
            " <- chosen"
            if pt is best
            else (" (too small)" if small else " (spends lateness)" if late else "")
        )
        p.line(
            f"    {pt.memory_mb:>6}{pt.total:>14.3f}{pt.consume:>12.3f}{pt.gb_ms_per_record:>14.2f}"
            f"{pt.lateness_p99:>14.3f}s{mark}"
        )
    p.figure(
        "consumer memory (MB)",
        f"{deployed_mb} deployed",
        f"= {best.memory_mb} chosen",
        deployed_mb == best.memory_mb,
        "" if deployed_mb == best.memory_mb else f" (the cheapest that fits is {best.memory_mb} MB)",
    )
    return {
        "rss_mb": rss,
        "headroom": HEADROOM,
        "chosen_mb": best.memory_mb,
        "deployed_mb": deployed_mb,
        "curve": [pt.__dict__ for pt in points],
    }
