"""The simulator on a small workload (no loss, no duplicate) and the bench's functions at tiny size.
No timing assertions: figures are for ``make bench``, not for tests."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from reminders.domain.retry import RetryPolicy
from reminders_ops.bench import main as bench
from reminders_ops.bench.sim import Simulation, scenarios
from reminders_ops.bench.sim.cost import ENVIRONMENT_LIFETIME_SECONDS
from reminders_ops.bench.sim.model import KNOWN_HANDLERS, Deployment, item_size, template_handlers


def test_small_mixed_workload_is_delivered_once_each_under_faults() -> None:
    start = scenarios.START
    sim = Simulation(
        start=start,
        deployment=Deployment(),
        rate_per_second=20,
        failure_rate=0.2,
        policy=RetryPolicy(base_seconds=2.0),
        seed=1,
    )
    n = 150
    for i in range(n):
        # a third due inside the SQS delay window, the rest through the due index and dispatcher
        ahead = 30 + 5 * (i // 3) if i % 3 == 0 else 1000 + 7 * i
        sim.create(scenarios.command(i, start + timedelta(seconds=ahead)))
    assert sim.clock.t == start.timestamp()  # creating (the API, beside everything) keeps the clock
    sim.run(start.timestamp() + 6 * 3600, stop=lambda: sim.done >= n)
    res = sim.result()
    assert res.created == n
    assert res.lost == 0
    assert res.ledger["delivered"] + res.ledger.get("dead_letter", 0) == n
    assert res.receiver["accepted_twice"] == 0
    assert res.receiver["resent_after_accept"] == 0
    assert res.errors == []
    assert res.receiver["failed_500"] > 0  # the faults did happen
    assert min(res.lateness) >= 0  # never sent early
    assert sum(res.shard_dispatched.values()) == n - len(range(0, n, 3))
    calls = sim.meter.calls_by_op()
    # one put per reminder, plus at most one cursor put per shard (the API process creates a
    # shard's cursor before its first entry there)
    assert n < calls["dynamodb:PutItem"] <= n + sim.deployment.shards and calls["sqs:SendMessageBatch"] > 0


def test_bench_simulator_figures_run_at_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    results = bench.run(("drain", "burst"), burst=300, sizes=bench.Sizes.quick(), out=out)
    assert results["drain"]["default_policy"]["lost"] == 0
    assert results["burst"]["lost"] == 0 and results["burst"]["duplicates_accepted"] == 0
    written = json.loads(out.read_text())
    assert {"drain", "burst", "meta"} <= set(written)
    lat = scenarios.boundary_lateness(40)
    assert lat["lost"] == 0 and lat["early_sends"] == 0 and lat["direct"] + lat["via_index"] == 40
    c = scenarios.cost(200)
    assert c.integrity["lost"] == 0
    assert c.report.per_million["claim"].write_units > 0 and c.report.total > 0
    assert set(c.report.as_dict()["per_million_by_step"]) >= {"create", "index", "claim", "record"}


def test_cost_counts_kms_per_environment_not_per_endpoint_when_webhooks_go_to_bare_urls() -> None:
    # issue 24 item 2: every bare URL signs with its (account, origin) endpoint's own secret, derived
    # from the deployment signing key; the cost figure prices the KMS requests that costs (written call
    # model: the key's Decrypt once per webhook environment start, none per endpoint or send), not $0.
    c = scenarios.cost(200)
    kms = c.report.kms_model
    assert kms["endpoints"] > 0 and kms["environments"] > 0 and kms["generate_data_key_per_month"] == 0
    # a month of environments, each unwrapping the deployment key once per start
    assert kms["decrypts_per_month"] == kms["environments"] * 30 * 24 * 3600 / ENVIRONMENT_LIFETIME_SECONDS
    assert 0 < kms["decrypts_per_send"] < 0.001  # not one per endpoint, nor per send
    assert c.report.fixed_month.kms_requests == kms["decrypts_per_month"]
    assert all(u.kms_requests == 0 for u in c.report.per_million.values())  # nothing per send
    breakdown = c.report.as_dict()
    assert 0 < breakdown["kms_per_million"] < 0.01 * breakdown["total_per_million"]


def test_bench_measurements_on_moto_and_the_handler_run_at_tiny_size() -> None:
    from reminders_ops.bench.sim.embedded import embedded_lateness, moto_cost
    from reminders_ops.bench.sim.overhead import _events, handler_cpu_per_record

    cpu = handler_cpu_per_record(30, warmup=10)
    assert cpu["records"] == 30 and cpu["delivered"] == 40
    late = embedded_lateness(3, lead=(1.5, 3.0), pollers=1)
    assert late["lost"] == 0 and late["early_sends"] == 0 and late["duplicates_accepted"] == 0
    counted = moto_cost(4, beyond_fraction=0.0, empty_ticks=1, near=(1.5, 2.5), watch_lag=1, shards=2)
    assert counted["delivered"] == 4
    per = counted["calls_per_reminder"]
    # one put per reminder, plus one cursor put per shard the API process writes into (2 here)
    assert 1 < per["create dynamodb:PutItem"] <= (4 + 2) / 4 and per["claim dynamodb:UpdateItem"] == 1
    assert counted["units_per_reminder"]["index GSI_WRU"] == 1
    # the four accounts' bare URLs get implicit endpoints whose secrets are derived from one
    # deployment key: one GenerateDataKey in the run, no Decrypt in this one process (issue 24)
    assert per["consume kms:GenerateDataKey"] * 4 == 1 and "consume kms:Decrypt" not in per
    # every handler the template names has a first-invocation event for the cold-start figure
    handlers, _ = template_handlers()
    assert set(handlers) | set(KNOWN_HANDLERS) <= set(_events({}))


def test_item_size_follows_dynamodb_rules() -> None:
    assert item_size({"a": "xyz"}) == 4
    assert item_size({"n": 12345}) == 1 + 4  # 5 digits -> 3 bytes + 1
    assert item_size({"m": {"k": "v"}}) == 1 + 3 + (1 + 1 + 1)
    assert item_size({"l": ["ab", True]}) == 1 + 3 + (2 + 1) + (1 + 1)
