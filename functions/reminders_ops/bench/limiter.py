"""Bench figure of issue 15: the shared per-endpoint rate limiter on DynamoDB (moto in-process).

Consumers (threads) share one endpoint of rate R through ``SharedRateLimiter`` on ``DynamoRateSlots``
(one conditional ``UpdateItem`` per try). A refused claim comes back as SQS would hand it back: after
``ceil(wait)`` whole seconds. Printed: conditional writes per send (granted + refused tries), the
most sends in any 1 s window against R (goal ≤ 1.05 R), and the throughput reached.
"""

from __future__ import annotations

import math
import random
import threading
import time
from typing import Any

RATE_PER_SECOND = 20.0
SENDS = 200
CONSUMERS = 4


def dynamo_slots(table: str = "bench-limiter") -> Any:
    """The limiter's records in a fresh table of the emulator in force (``mock_aws``)."""
    import boto3
    from reminders.adapters.ratelimit_store import DynamoRateSlots

    ddb = boto3.client("dynamodb", region_name="us-east-1")
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    return DynamoRateSlots(ddb, table)


def measure(rate: float = RATE_PER_SECOND, sends: int = SENDS, consumers: int = CONSUMERS) -> dict[str, Any]:
    from moto import mock_aws
    from reminders.domain.ratelimit import SharedRateLimiter

    with mock_aws():
        slots = dynamo_slots()
        limiter = SharedRateLimiter(slots, lambda _b: rate)
        rng = random.Random(15)
        start = time.time()
        visible = [start + rng.random() for _ in range(sends)]  # a drain's arrivals, spread over 1 s
        pending = list(range(sends))
        sent: list[float] = []
        lock = threading.Lock()

        def consumer() -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    now = time.time()
                    ready = [i for i in pending if visible[i] <= now]
                    i = ready[0] if ready else None
                    if i is not None:
                        pending.remove(i)
                if i is None:
                    time.sleep(0.005)
                    continue
                now = time.time()
                grant = limiter.acquire("ep_bench", now)
                if grant.reserved:  # the next slot is ours, under a second away: wait for it
                    time.sleep(grant.wait)
                with lock:
                    if grant.now or grant.reserved:
                        sent.append(time.time())
                    else:  # given back: visible again after whole seconds, as SQS visibility is
                        visible[i] = now + max(1, math.ceil(grant.wait))
                        pending.append(i)

        threads = [threading.Thread(target=consumer) for _ in range(consumers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sent.sort()
        worst = 0
        j = 0
        for k, t0 in enumerate(sent):  # most sends in any half-open 1 s window [t, t + 1)
            while sent[j] < t0 - 1.0 + 1e-9:
                j += 1
            worst = max(worst, k - j + 1)
        span = sent[-1] - sent[0] if len(sent) > 1 else 1.0
        return {
            "rate_per_second": rate,
            "sends": len(sent),
            "consumers": consumers,
            "writes": slots.writes,
            "writes_per_send": slots.writes / max(1, len(sent)),
            "max_in_any_1s_window": worst,
            "max_window_over_rate": worst / rate,
            "throughput_per_second": (len(sent) - 1) / span if span > 0 else float("nan"),
        }


def figure_limiter(p: Any, n: int) -> dict[str, Any]:
    p.section(
        n,
        "shared rate limiter (issue 15)",
        "python -m reminders_ops.bench --only limiter",
        f"{SENDS} sends to one endpoint of R = {RATE_PER_SECOND:g}/s by {CONSUMERS} consumers sharing its "
        "DynamoDB rate record (moto);\n  a refused claim returns after ceil(wait) s, as an SQS visibility "
        "does.",
    )
    r = measure()
    p.figure("limiter writes per send", f"{r['writes_per_send']:.2f}", "(measured)", None)
    p.figure(
        "max sends in any 1 s window",
        f"{r['max_in_any_1s_window']} ({r['max_window_over_rate']:.2f} R)",
        "<= 1.05 R",
        r["max_window_over_rate"] <= 1.05,
    )
    p.figure("throughput reached", f"{r['throughput_per_second']:.1f}/s", f"R = {RATE_PER_SECOND:g}/s", None)
    return r
