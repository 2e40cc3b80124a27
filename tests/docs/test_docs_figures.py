# ruff: noqa: RUF001  # the patterns quote the pages, typography included (multiplication and minus signs)
"""The documentation's figures against their sources of record (issue 31 item 3: stale figures fail).

Mechanism: a register, below, of every figure the pages state that has a source of record. Each
entry is a page, a pattern (whitespace in the page is collapsed to one space first) whose groups
capture the figure as written, and the values the source gives, formatted as the page writes them.
The pattern must be found (a figure reworded away fails too, so the register follows the text) and
every occurrence must agree with the source.

- Figures the code defines (limits, sizes, bounds, budgets, defaults, the cost model's goal and
  prices) are read from the code's own constants.
- Measured figures are read from the last recorded bench run, ``bench/results.json`` (and
  ``bench/burst-1m.json`` for the million-reminder burst), which ``make bench`` writes.
- What it cannot check: figures measured by runs that record no file (``make verify``'s fault and
  wire runs, the explorer, ``make mutate``, ``make sam-test`` timings, the X-Ray CPU figures of
  ``python -m reminders_ops.bench.trace``), and prose. Those carry the command that measures them
  (checked for the measured-figures table below), and are re-measured by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from reminders.domain import endpoints, receipts, retention, schedule, templates, timing
from reminders.domain.health import HealthPolicy
from reminders.domain.retry import RetryPolicy
from reminders.handlers.routes import reminder_models
from reminders.services import dispatch, support, templating
from reminders.services import endpoints as endpoint_service
from reminders.services import templates as template_service
from reminders_ops.bench import main as bench_main
from reminders_ops.bench.sim import cost
from reminders_ops.bench.sim.model import Prices
from reminders_ops.cli import dispatch_cursors
from reminders_ops.proof.explorer import faults as explorer_faults
from reminders_ops.proof.explorer import lateness
from reminders_ops.proof.explorer import sim as explorer_sim

from infra.functions import DELIVERY_MEMORY_SIZE_MB
from infra.settings import DOCUMENTED_REMINDERS_PER_DAY, Settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RESULTS = json.loads((ROOT / "bench" / "results.json").read_text())
BURST_1M = json.loads((ROOT / "bench" / "burst-1m.json").read_text())


@dataclass(frozen=True)
class Figure:
    page: str
    pattern: str
    values: Callable[[], tuple[str, ...]]


def _settings() -> Settings:
    return Settings(account="111111111111", region="us-east-1")


def _g(n: float) -> str:
    return f"{n:g}"


def _c(n: int) -> str:
    return f"{n:,}"


RETRY = RetryPolicy()
HEALTH = HealthPolicy()
TIMING = timing.DeliveryTiming()
S = _settings()
DRAIN = RESULTS["drain"]["default_policy"]
DOWN = RESULTS["drain"]["endpoint_down_120s"]
BURST = RESULTS["burst"]


@cache
def _item() -> dict[str, Any]:
    """Item bytes as the code stores them now, not as ``bench/results.json`` recorded them (before the
    16-character account tag): ``bench.item_bytes.measure()`` is deterministic and takes a fraction
    of a second."""
    from reminders_ops.bench import item_bytes

    return item_bytes.measure()


LATE = RESULTS["lateness"]["embedded"]
SIM_LATE = RESULTS["lateness"]["simulator_boundary"]
COST = RESULTS["cost"]["simulator"]
FLOOR = COST["design_floor_per_million"]
CONSUME = COST["per_million_by_step"]["consume"]
OVER = RESULTS["overhead"]
COLD = OVER["cold"]["handlers"]
ATT = RESULTS["attention"]
OPS = RESULTS["opevents"]
RCPT = RESULTS["receipts"]
LIMITER = RESULTS["limiter"]


def _cold(handler: str) -> str:
    return f"{COLD[f'reminders.handlers.{handler}']['cpu_above_baseline_ms']:.0f}"


CODE_FIGURES = [
    # delivery.md: the retry policy (domain/retry.py) and endpoint health (domain/health.py)
    Figure("delivery.md", r"attempts exhausted \((\d+)\)", lambda: (_g(RETRY.max_attempts),)),
    Figure("delivery.md", r"\(policy version `([\w.-]+)`; issue 16", lambda: (RETRY.version,)),
    Figure("performance.md", r"adaptive policy `([\w.-]+)`", lambda: (RETRY.version,)),
    Figure(
        "delivery.md",
        r"with c = (\d+) s · 2\^\(n−1\), cap (\d+) h",
        lambda: (_g(RETRY.base_seconds), _g(RETRY.cap_seconds / 3600)),
    ),
    Figure(
        "delivery.md",
        r"the last budgeted attempt never before (\d+) min into the cycle",
        lambda: (_g(RETRY.min_exhaust_seconds / 60),),
    ),
    Figure("delivery.md", r"up to (\d+) s jitter", lambda: (_g(RETRY.retry_after_jitter_seconds),)),
    Figure(
        "delivery.md",
        r"retry no sooner than (\d+) s, so the SES send event",
        lambda: (_g(RETRY.unconfirmed_send_wait_seconds),),
    ),
    Figure(
        "delivery.md",
        r"retry in (\d+) min without spending the budget",
        lambda: (_g(RETRY.hold_seconds / 60),),
    ),
    Figure(
        "delivery.md",
        r"older than the maximum age \((\d+) h from due",
        lambda: (_g(RETRY.max_age_seconds / 3600),),
    ),
    Figure(
        "delivery.md",
        r"counted in (\d+) s buckets over a (\d+) s sliding window",
        lambda: (_g(HEALTH.bucket_seconds), _g(HEALTH.window_seconds)),
    ),
    Figure(
        "delivery.md",
        r"when ≥ (\d+) % of ≥ (\d+) sends in the window failed",
        lambda: (_g(HEALTH.failure_ratio * 100), _g(HEALTH.min_sends)),
    ),
    Figure(
        "delivery.md",
        r"every send failed for (\d+) s \(at least (\d+) of them",
        lambda: (_g(HEALTH.all_failed_seconds), _g(HEALTH.all_failed_min_sends)),
    ),
    Figure(
        "delivery.md",
        r"the probe interval starts at (\d+) s, doubles, is capped at (\d+) s and stays within "
        r"1/(\d+) of the hold",
        lambda: (
            _g(HEALTH.probe_base_seconds),
            _g(HEALTH.probe_cap_seconds),
            _g(1 / HEALTH.probe_hold_fraction),
        ),
    ),
    Figure(
        "delivery.md",
        r"`endpointHeldSloSeconds`, default (\d+) s",
        lambda: (_g(S.endpoint_held_slo_seconds),),
    ),
    # delivery.md: the time budgets (domain/timing.py)
    Figure(
        "delivery.md",
        r"a provider attempt has a \*total\* deadline of (\d+) s",
        lambda: (_g(TIMING.attempt_deadline_seconds),),
    ),
    Figure(
        "delivery.md",
        r"can take at worst (\d+) s \((\d+) attempts of (\d+) s connect \+ (\d+) s read",
        lambda: (
            _g(TIMING.store_call_worst_seconds),
            _g(timing.AWS_IDEMPOTENT_MAX_ATTEMPTS),
            _g(timing.AWS_CONNECT_TIMEOUT_SECONDS),
            _g(timing.AWS_READ_TIMEOUT_SECONDS),
        ),
    ),
    Figure(
        "delivery.md",
        r"a send and its record take at most (\d+) s, and the lease \((\d+) s\)",
        lambda: (_g(TIMING.send_budget_seconds), _g(TIMING.lease_seconds)),
    ),
    Figure(
        "delivery.md",
        r"The delivery function's timeout is (\d+) s \(a claim plus a send and its record, (\d+) s",
        lambda: (_g(TIMING.function_timeout_seconds), _g(TIMING.record_budget_seconds)),
    ),
    Figure(
        "delivery.md",
        r"visibility timeout (\d+) × that, (\d+) s",
        lambda: (_g(timing.VISIBILITY_TIMEOUT_FACTOR), _g(TIMING.visibility_timeout_seconds)),
    ),
    Figure(
        "delivery.md",
        r"capped at (\d+) h minus the time since the invocation started and a (\d+) s margin",
        lambda: (_g(timing.SQS_MAX_VISIBILITY_SECONDS / 3600), _g(timing.RECEIVE_TO_INVOKE_MARGIN_SECONDS)),
    ),
    Figure(
        "delivery.md",
        r"`maxReceiveCount` \((\d+)\), the consumer hands",
        lambda: (_g(S.delivery_max_receive_count),),
    ),
    # the ambiguous email's wait elsewhere (domain/retry.py)
    Figure(
        "guarantees.md",
        r"the retry waits at least (\d+) s for that event \(policy `([\w.-]+)`",
        lambda: (_g(RETRY.unconfirmed_send_wait_seconds), RETRY.version),
    ),
    Figure(
        "proof.md",
        r"\(default (\d+) s since policy `([\w.-]+)`",
        lambda: (_g(RETRY.unconfirmed_send_wait_seconds), RETRY.version),
    ),
    Figure(
        "proof.md",
        r"\| \*\*(\d+) s \(default\)\*\* \|",
        lambda: (_g(RETRY.unconfirmed_send_wait_seconds),),
    ),
    # concepts.md: the due index's key (domain/schedule.py) and the watchdog (services/dispatch.py)
    Figure(
        "concepts.md",
        r"where `<tag>` is an? (\d+)-character tag of the account",
        lambda: (_g(schedule.ACCOUNT_TAG_LENGTH),),
    ),
    Figure(
        "concepts.md",
        r"the watchdog judges an entry with a lag of (\d+) s",
        lambda: (_g(dispatch.WATCH_LAG_SECONDS),),
    ),
    Figure(
        "concepts.md",
        r"horizon is under (\d+) s past its margin — `STRADDLE_BELOW_SECONDS`, two minutes plus the (\d+) s",
        lambda: (_g(dispatch.STRADDLE_BELOW_SECONDS), _g(dispatch.RULE_LATE_SECONDS)),
    ),
    Figure(
        "concepts.md",
        r"A minute of more than `MAX_PASS_PAGES` \((\d+)\) pages",
        lambda: (_g(dispatch.MAX_PASS_PAGES),),
    ),
    Figure(
        "concepts.md",
        r"\(`PART_MARK` = `(.)`\)",
        lambda: (dispatch.PART_MARK,),
    ),
    Figure(
        "performance.md",
        r"with a (\d+) s margin \(`SAFETY_SECONDS`\)",
        lambda: (_g(dispatch.SAFETY_SECONDS),),
    ),
    # runbook.md: the rewind's bound (cli/dispatch_cursors.py)
    Figure(
        "operating/runbook.md",
        r"more than \*\*(\d+) hours\*\* back \(`MAX_REWIND_SECONDS`\)",
        lambda: (_g(dispatch_cursors.MAX_REWIND_SECONDS / 3600),),
    ),
    # support-desk.md: the preview's query budget (services/support.py)
    Figure(
        "operating/support-desk.md",
        r"at most \*\*([\d,]+) due-index queries\*\* \(`MAX_PREVIEW_QUERIES`",
        lambda: (_c(support.MAX_PREVIEW_QUERIES),),
    ),
    # proof.md: the explorer's lateness bounds (proof/explorer/lateness.py)
    Figure(
        "proof.md",
        r"must be kept within \*\*(\d+) s\*\* \(`ON_TIME_BOUND`: one round of (\d+) s \+ the largest "
        r"consumer clock skew the explorer gives, (\d+) s \+ the dispatcher's whole minute, (\d+) s\)",
        lambda: (
            _g(lateness.ON_TIME_BOUND),
            _g(lateness.TICK_SECONDS),
            _g(lateness.SKEW_SECONDS),
            _g(lateness.BUCKET_SECONDS),
        ),
    ),
    Figure(
        "proof.md",
        r"\*\*([\d,]+) s\*\* \(`WATCHDOG_BOUND`: 1 × the watch lag \+ (\d+) s \+ (\d+) s",
        lambda: (_c(int(lateness.WATCHDOG_BOUND)), _g(lateness.BUCKET_SECONDS), _g(lateness.TICK_SECONDS)),
    ),
    Figure(
        "guarantees.md",
        r"within the watch lag \((\d+) s\) \+ a minute \+ a tick of its expected time",
        lambda: (_g(dispatch.WATCH_LAG_SECONDS),),
    ),
    Figure(
        "guarantees.md",
        r"The explorer judges that bound \(([\d,]+) s with its settle round\)",
        lambda: (_c(int(lateness.WATCHDOG_BOUND)),),
    ),
    # proof.md: the explorer's attempt budget and stale-read bound (proof/explorer/sim.py, faults.py)
    Figure(
        "proof.md",
        r"\*\*The explorer's attempt budget is (\d+)\*\* \(`sim.MAX_ATTEMPTS`",
        lambda: (_g(explorer_sim.MAX_ATTEMPTS),),
    ),
    Figure(
        "proof.md",
        r"`STALE_SECONDS` = (\d+) virtual seconds \(half the dispatcher's "
        r"`INDEX_LAG_MARGIN_SECONDS`, (\d+) s",
        lambda: (_g(explorer_faults.STALE_SECONDS), _g(schedule.INDEX_LAG_MARGIN_SECONDS)),
    ),
    # templates.md: the unknown-id cache (services/templates.py)
    Figure(
        "templates.md",
        r"\*\*Freshness window: (\d+) s\.\*\* Each API instance remembers \"this account has no template "
        r"with this id\" for at most (\d+) s",
        lambda: (_g(template_service.UNKNOWN_ID_SECONDS), _g(template_service.UNKNOWN_ID_SECONDS)),
    ),
    # performance.md: the consumer's per-instance caches (domain/endpoints.py, services/endpoints.py,
    # domain/health.py)
    Figure(
        "performance.md",
        r"`IMPLICIT_ID_CACHE_SIZE` = ([\d,]+) \(account, URL\) pairs",
        lambda: (_c(endpoints.IMPLICIT_ID_CACHE_SIZE),),
    ),
    Figure(
        "performance.md",
        r"`LOOKUP_CACHE_SECONDS` = (\d+) s \|",
        lambda: (_g(endpoint_service.LOOKUP_CACHE_SECONDS),),
    ),
    Figure(
        "performance.md",
        r"`HealthPolicy.cache_seconds` = (\d+) s \|",
        lambda: (_g(HEALTH.cache_seconds),),
    ),
    # the delivery consumers' memory (infra/functions.py)
    Figure(
        "deploying.md",
        r"The delivery consumers \(email and webhook\) run at \*\*(\d+) MB\*\*",
        lambda: (_g(DELIVERY_MEMORY_SIZE_MB),),
    ),
    Figure(
        "performance.md",
        r"The delivery consumers run at \*\*(\d+) MB\*\*",
        lambda: (_g(DELIVERY_MEMORY_SIZE_MB),),
    ),
    # the embedded lateness goal (bench/main.py)
    Figure(
        "performance.md",
        r"embedded runtime[^|]*\| ≤ ([\d.]+) s \(≤ ([\d.]+) s\), never early",
        lambda: (_g(bench_main.EMBEDDED_P99_GOAL_SECONDS), _g(bench_main.EMBEDDED_P50_GOAL_SECONDS)),
    ),
    # concepts.md
    Figure(
        "concepts.md",
        r"the watch position (\d+) minutes \(`CURSOR_CREATE_MARGIN_SECONDS`",
        lambda: (_g(schedule.CURSOR_CREATE_MARGIN_SECONDS / 60),),
    ),
    # api.md: input limits (handlers/routes/reminder_models.py)
    Figure("api.md", r"\| `channels` \| 1–(\d+);", lambda: (_g(reminder_models.MAX_CHANNELS),)),
    Figure("api.md", r"≤ ([\d,]+) bytes serialized", lambda: (_c(reminder_models.MAX_DATA_BYTES),)),
    Figure(
        "api.md",
        r"in UTC from `(\d{4})-01-01T00:00:00Z` to (\d+) years ahead",
        lambda: (str(reminder_models.EARLIEST_DUE.year), _g(reminder_models.MAX_DUE_AHEAD.days // 365)),
    ),
    Figure(
        "api.md",
        r"not further in the past than the maximum age \((\d+) h\)",
        lambda: (_g(RETRY.max_age_seconds / 3600),),
    ),
    # templates.md (domain/templates.py, services/templating.py)
    Figure(
        "templates.md",
        r"Bounds: ≤ (\d+) locales, ≤ (\d+) variables, per locale a subject ≤ ([\d,]+), text ≤ ([\d,]+) and "
        r"HTML ≤ ([\d,]+) characters of source, ≤ ([\d,]+) bytes per version, versions 1–([\d,]+)",
        lambda: (
            _c(templates.MAX_LOCALES),
            _c(templates.MAX_VARIABLES),
            _c(templates.MAX_SUBJECT_SOURCE),
            _c(templates.MAX_TEXT_SOURCE),
            _c(templates.MAX_HTML_SOURCE),
            _c(templates.MAX_VERSION_BYTES),
            _c(templates.MAX_VERSION_NUMBER),
        ),
    ),
    Figure("templates.md", r"a list of strings \(≤ (\d+)\)", lambda: (_c(templates.MAX_LIST_ITEMS),)),
    Figure("templates.md", r"globals `range` \(≤ ([\d,]+)\)", lambda: (_c(templating.MAX_RANGE),)),
    Figure("templates.md", r"spends a step \(≤ ([\d,]+)\)", lambda: (_c(templating.MAX_OPERATIONS),)),
    Figure("templates.md", r"counts against ([\d,]+) characters", lambda: (_c(templating.MAX_RENDER_BYTES),)),
    Figure(
        "templates.md",
        r"a rendered subject ≤ (\d+) characters with no CR/LF, text ≤ ([\d,]+), HTML ≤ ([\d,]+)",
        lambda: (_c(templating.MAX_SUBJECT), _c(templating.MAX_TEXT), _c(templating.MAX_HTML)),
    ),
    # receivers.md (domain/receipts.py)
    Figure(
        "receivers.md", r"at most (\d+) KiB, signed per", lambda: (_g(receipts.MAX_RECEIPT_BYTES / 1024),)
    ),
    Figure("receivers.md", r"body over (\d+) KiB", lambda: (_g(receipts.MAX_RECEIPT_BYTES / 1024),)),
    # endpoints.md (domain/endpoints.py)
    Figure(
        "endpoints.md",
        r"until the expiry \(default (\d+) h, at most (\d+) days\)",
        lambda: (
            _g(endpoints.DEFAULT_ROTATION_OVERLAP_SECONDS / 3600),
            _g(endpoints.MAX_ROTATION_OVERLAP_SECONDS / 86400),
        ),
    ),
    Figure(
        "endpoints.md",
        r"At most (\w+) secrets sign at once",
        lambda: ({3: "three", 4: "four", 2: "two"}[endpoints.MAX_SIGNING_KEYS],),
    ),
    # deploying.md (infra/settings.py)
    Figure(
        "deploying.md",
        r"`reminders:apiBurst` \((\d+) / (\d+)\)",
        lambda: (_g(S.api_rate_per_second), _g(S.api_burst)),
    ),
    Figure(
        "deploying.md",
        r"`reminders:publicRouteBurst` \((\d+) / (\d+)\)",
        lambda: (_g(S.public_route_rate_per_second), _g(S.public_route_burst)),
    ),
    Figure(
        "deploying.md",
        r"\*\*receipts (\d+)/s, burst (\d+)\*\*",
        lambda: (_g(S.receipts_rate_per_second), _g(S.receipts_burst)),
    ),
    Figure(
        "deploying.md",
        r"\*\*(\d+)/s, burst (\d+)\*\* \(`unsubscribeRatePerSecond`",
        lambda: (_g(S.unsubscribe_rate_per_second), _g(S.unsubscribe_burst)),
    ),
    Figure(
        "deploying.md",
        r"\*\*reserved concurrency (\d+)\*\*",
        lambda: (_g(S.public_reserved_concurrency),),
    ),
    Figure(
        "deploying.md",
        r"`reminders:edgeRatePer5Minutes` \(([\d,]+) in WAF",
        lambda: (_c(S.edge_rate_per_5_minutes),),
    ),
    Figure(
        "deploying.md",
        r"Limits sized for the documented scale\*\*, ([\d,]+) reminders a day",
        lambda: (_c(DOCUMENTED_REMINDERS_PER_DAY),),
    ),
    # operating/
    Figure(
        "operating/runbook.md",
        r"`reminders:oldestMessageSloSeconds`, (\d+) s",
        lambda: (_g(S.oldest_message_slo_seconds),),
    ),
    Figure(
        "operating/support-desk.md",
        r"kept \*\*(\d+) days\*\* \(CDK context `reminders:retentionDays`, at least (\d+)",
        lambda: (_g(retention.DEFAULT_RETENTION_DAYS), _g(retention.MIN_RETENTION_DAYS)),
    ),
    Figure(
        "operating/support-desk.md",
        r"the number of whole (\d+)-day periods",
        lambda: (_g(retention.GENERATION_SECONDS / 86400),),
    ),
    Figure(
        "operating/support-desk.md",
        r"the horizon is at most (\d+) minutes",
        lambda: (_g(support.MAX_PREVIEW_MINUTES),),
    ),
    Figure(
        "operating/support-desk.md",
        r"at most ([\d,]+) \(`truncated`\)",
        lambda: (_c(support.MAX_PREVIEW_ROWS),),
    ),
    Figure(
        "operating/support-desk.md",
        r"where that shard still is, at most (\d+) hours back",
        lambda: (_g(support.MAX_LOOKBACK_SECONDS / 3600),),
    ),
    Figure(
        "operating/support-desk.md",
        r"at most\s+`MAX_COLLIDING_ROWS` \(([\d,]+)\) of them",
        lambda: (f"{support.MAX_COLLIDING_ROWS:,}",),
    ),
    # performance.md: the cost model's goal, comparisons and prices (bench/sim/cost.py, model.py)
    Figure(
        "performance.md",
        r"≤ \$([\d.]+) \(Scheduler ≈ \$([\d.]+), GSI\+mark ≈ \$([\d.]+)\)",
        lambda: (
            f"{cost.GOAL_PER_MILLION:.2f}",
            f"{cost.EVENTBRIDGE_SCHEDULER_PER_MILLION:.2f}",
            f"{cost.CRON_MARK_PER_MILLION:.2f}",
        ),
    ),
    Figure(
        "performance.md",
        r"The goal of \$([\d.]+) is",
        lambda: (f"{cost.GOAL_PER_MILLION:.2f}",),
    ),
    Figure(
        "performance.md",
        r"(\d+) write units \(\$([\d.]+): the row",
        lambda: (_g(cost.INVARIANT_WRITES), f"{cost.INVARIANT_WRITES * Prices().write_unit * 1e6:.2f}"),
    ),
]

MEASURED_FIGURES = [
    # the drain (bench --only drain)
    Figure(
        "performance.md",
        r"\*\*([\d.]+) s = ([\d.]+)×\*\* \(99 % at ([\d.]+)×\)",
        lambda: (f"{DRAIN['seconds']:.1f}", f"{DRAIN['ratio']:.2f}", f"{DRAIN['p99_ratio']:.2f}"),
    ),
    Figure(
        "performance.md",
        r"\*\*(\d+) sends at most in any 1 s window = ([\d.]+) R\*\*, ([\d.]+) limiter writes per send, "
        r"([\d.]+) health writes per send",
        lambda: (
            _g(DRAIN["max_posts_in_1s"]),
            f"{DRAIN['max_posts_in_1s'] / DRAIN['rate_per_second']:.3f}",
            f"{DRAIN['limiter_writes_per_post']:.2f}",
            f"{DRAIN['health_writes_per_send']:.3f}",
        ),
    ),
    Figure(
        "endpoints.md",
        r"\*\*([\d.]+) s = ([\d.]+)× the bound, at most (\d+) sends in any 1 s window",
        lambda: (f"{DRAIN['seconds']:.1f}", f"{DRAIN['ratio']:.2f}", _g(DRAIN["max_posts_in_1s"])),
    ),
    # the drain with its endpoint down for 120 s
    Figure(
        "performance.md",
        r"\*\*([\d.]+) s = ([\d.]+)×\*\* — \*\*meets\*\*: held",
        lambda: (f"{DOWN['seconds']:.1f}", f"{DOWN['ratio']:.2f}"),
    ),
    Figure("performance.md", r"\(held ([\d.]+) s; probes from", lambda: (f"{DOWN['held_seconds']:.1f}",)),
    Figure(
        "performance.md",
        r"(\d+) sends in (\d+) probe intervals",
        lambda: (_g(DOWN["sends_after_views_expired"]), _g(DOWN["probe_intervals"])),
    ),
    Figure(
        "performance.md",
        r"([\d.]+) health writes per send; 0 lost",
        lambda: (f"{DOWN['health_writes_per_send']:.3f}",),
    ),
    # the burst (bench --only burst) and the million (bench/burst-1m.json)
    Figure(
        "performance.md",
        r"\*\*([\d.]+) s = ([\d.]+)×\*\* \(MaximumConcurrency (\d+), peak (\d+); \d+ s wall\), shard load "
        r"max/mean ([\d.]+)",
        lambda: (
            f"{BURST['seconds']:.1f}",
            f"{BURST['ratio']:.3f}",
            _g(BURST["max_concurrency"]),
            _g(BURST["peak_concurrency"]),
            f"{BURST['shard_dispatched_max_over_mean']:.3f}",
        ),
    ),
    Figure(
        "performance.md",
        r"\*\*([\d.]+) s = ([\d.]+)×\*\* \(bound (\d+) s\), MaximumConcurrency (\d+), shard load "
        r"max/mean ([\d.]+)",
        lambda: (
            f"{BURST_1M['burst']['seconds']:.1f}",
            f"{BURST_1M['burst']['ratio']:.3f}",
            f"{BURST_1M['burst']['bound_seconds']:.0f}",
            _g(BURST_1M["burst"]["max_concurrency"]),
            f"{BURST_1M['burst']['shard_dispatched_max_over_mean']:.3f}",
        ),
    ),
    # item bytes (bench.item_bytes, measured on today's code by _item())
    Figure(
        "performance.md",
        r"before endpoints \(bare URL\) \*\*(\d+) B, (\d+) WU\*\* create → delivered; `endpoint_id` "
        r"\*\*(\d+) B, (\d+) WU\*\*.*?with a receiver receipt ([\d,]+) B",
        lambda: (
            _g(_item()["before"]["delivered_item_bytes"]),
            _g(_item()["before"]["write_units_create_to_delivered"]),
            _g(_item()["after"]["delivered_item_bytes"]),
            _g(_item()["after"]["write_units_create_to_delivered"]),
            _c(_item()["after"]["with_receipt_bytes"]),
        ),
    ),
    Figure(
        "endpoints.md",
        r"\(retryable, old history form\) (\d+) B; a bare URL, as every webhook was before "
        r"endpoints, delivered "
        r"\*\*(\d+) B = 1 WU per write, (\d+) WU from create to delivered\*\*.*?`endpoint_id` channel "
        r"delivered \*\*(\d+) B = 1 WU per write, (\d+) WU from create to delivered\*\*.*?with a receiver "
        r"receipt merged \*\*([\d,]+) B\*\*",
        lambda: (
            _g(_item()["fixture_item_bytes"]),
            _g(_item()["before"]["delivered_item_bytes"]),
            _g(_item()["before"]["write_units_create_to_delivered"]),
            _g(_item()["after"]["delivered_item_bytes"]),
            _g(_item()["after"]["write_units_create_to_delivered"]),
            _c(_item()["after"]["with_receipt_bytes"]),
        ),
    ),
    # receipts through the local API (bench --only receipts)
    Figure(
        "performance.md",
        r"\*\*(\d+) WU per receipt\*\* \(the (\d+) B conditional put \+ the merge write of the "
        r"(\d+) → (\d+) B",
        lambda: (
            _g(RCPT["write_units_per_receipt"]),
            _g(RCPT["receipt_item_bytes"]),
            _g(RCPT["delivered_item_bytes_before"]),
            _g(RCPT["delivered_item_bytes_after"]),
        ),
    ),
    Figure(
        "performance.md",
        r"(\d+) accepted/s, (\d+) merged/s",
        lambda: (f"{RCPT['accept_per_second']:.0f}", f"{RCPT['merge_per_second']:.0f}"),
    ),
    # the shared rate limiter on moto (bench --only limiter)
    Figure(
        "endpoints.md",
        r"\*\*([\d.]+) conditional writes per send\*\* \(was [\d.]+\), at most \*\*(\d+) sends in any 1 s "
        r"window \(([\d.]+) R\)\*\*, throughput \*\*([\d.]+)/s\*\*",
        lambda: (
            f"{LIMITER['writes_per_send']:.2f}",
            _g(LIMITER["max_in_any_1s_window"]),
            f"{LIMITER['max_window_over_rate']:.2f}",
            f"{LIMITER['throughput_per_second']:.1f}",
        ),
    ),
    # lateness (bench --only lateness)
    Figure(
        "performance.md",
        r"\*\*(\d+) of (\d+) arrived, (\d+) early, p50 ([\d.]+) s, p99 ([\d.]+) s\*\*",
        lambda: (
            _g(LATE["arrived"]),
            _g(LATE["n"]),
            _g(LATE["early_sends"]),
            f"{LATE['p50_seconds']:.3f}",
            f"{LATE['p99_seconds']:.3f}",
        ),
    ),
    Figure(
        "performance.md",
        r"visible → received p50 ([\d.]+) s, p99 ([\d.]+) s; due \(or received, if later\) → at the "
        r"receiver "
        r"p50 ([\d.]+) s, p99 ([\d.]+) s",
        lambda: (
            f"{LATE['visible_to_received_p50_seconds']:.3f}",
            f"{LATE['visible_to_received_p99_seconds']:.3f}",
            f"{LATE['due_or_received_to_send_p50_seconds']:.3f}",
            f"{LATE['due_or_received_to_send_p99_seconds']:.3f}",
        ),
    ),
    Figure(
        "performance.md",
        r"\*\*([\d.]+) s \(([\d.]+) s\)\*\*, (\d+) early — \*\*meets\*\* \(direct p99 ([\d.]+) s, "
        r"via index \+ "
        r"dispatcher ([\d.]+) s",
        lambda: (
            f"{SIM_LATE['p99_seconds']:.3f}",
            f"{SIM_LATE['p50_seconds']:.3f}",
            _g(SIM_LATE["early_sends"]),
            f"{SIM_LATE['direct_p99_seconds']:.3f}",
            f"{SIM_LATE['via_index_p99_seconds']:.3f}",
        ),
    ),
    # cost (bench --only cost)
    Figure(
        "performance.md",
        r"\*\*\$([\d.]+)\*\* — \*\*misses by (\d+) %\*\* the goal of then \(\$[\d.]+\), which the design's "
        r"floor was over by itself: \*\*\$([\d.]+)\*\*",
        lambda: (
            f"{COST['total_per_million']:.2f}",
            f"{(COST['total_per_million'] / COST['goal_per_million'] - 1) * 100:.0f}",
            f"{FLOOR['total']:.2f}",
        ),
    ),
    Figure(
        "performance.md",
        r"SQS at full batches \$([\d.]+) \+ invocations \$([\d.]+) \+ reads \$([\d.]+) .*? the fixed share "
        r"\$([\d.]+)\. Above the floor: consume \$([\d.]+) \(([\d.]+) invocations and ([\d.]+) SQS "
        r"requests "
        r"per reminder",
        lambda: (
            f"{FLOOR['sqs']:.2f}",
            f"{FLOOR['invocations']:.2f}",
            f"{FLOOR['reads']:.2f}",
            f"{FLOOR['fixed']:.2f}",
            f"{CONSUME['dollars']:.2f}",
            f"{CONSUME['lambda_requests'] / 1e6:.2f}",
            f"{CONSUME['sqs_requests'] / 1e6:.2f}",
        ),
    ),
    Figure(
        "performance.md",
        r"([\d.]+) GB-ms per record, was",
        lambda: (f"{CONSUME['gb_seconds'] / 1e6 * 1000:.1f}",),
    ),
    Figure(
        "performance.md",
        r"a 1 s batching window \$([\d.]+) \(up to",
        lambda: (f"{COST['batching_window_1s_total_per_million']:.2f}",),
    ),
    Figure(
        "performance.md",
        r"autoscaled at 70 % \*\*\$([\d.]+)\*\*",
        lambda: (f"{COST['provisioned_total_per_million']:.2f}",),
    ),
    Figure(
        "time.md",
        r"--only cost` prints the same comparison for the bench's item shape \((\d+) B → (\d+) B\)",
        lambda: (
            _g(RESULTS["cost"]["time_field_bytes"]["plain"]),
            _g(RESULTS["cost"]["time_field_bytes"]["timed"]),
        ),
    ),
    # CPU per record and cold start (bench --only overhead)
    Figure(
        "performance.md",
        r"\(baseline (\d+) ms\): \*\*(\d+) µs\*\*; without the service's metrics and logs (\d+) µs",
        lambda: (
            f"{OVER['cold']['baseline']['cpu_ms']:.0f}",
            f"{OVER['cpu_per_record']['cpu_us_per_record']:.0f}",
            f"{OVER['cpu_without_telemetry']['cpu_us_per_record']:.0f}",
        ),
    ),
    Figure(
        "performance.md",
        r"over a (\d+) ms baseline\): webhook consumer \*\*\+(\d+) ms\*\*, tick \*\*\+(\d+) ms\*\*, "
        r"ses_events "
        r"\*\*\+(\d+) ms\*\* — \*\*meet\*\*; receipts \+(\d+), email consumer \+(\d+), shard "
        r"\+(\d+), opevents "
        r"\+(\d+), API \*\*\+(\d+) ms\*\*",
        lambda: (
            f"{OVER['cold']['baseline']['cpu_ms']:.0f}",
            _cold("delivery.webhook_handler"),
            _cold("dispatcher.tick_handler"),
            _cold("ses_events.handler"),
            _cold("receipts.handler"),
            _cold("delivery.email_handler"),
            _cold("dispatcher.shard_handler"),
            _cold("opevents.handler"),
            _cold("api.handler"),
        ),
    ),
    # attention index writes (bench --only attention)
    Figure(
        "operating/support-desk.md",
        r"\*\*(\d+) table and (\d+) index writes for a reminder delivered at its first attempt\*\*; "
        r"(\d+) \+ (\d+) "
        r"for one that needed a retry \(enter, leave\); (\d+) \+ (\d+) for a dead letter later cancelled",
        lambda: tuple(
            _g(ATT[case][key])
            for case in ("ok", "429", "410")
            for key in ("attention_settle_writes_per_reminder", "attention_index_writes_per_reminder")
        ),
    ),
    # operational events (bench --only opevents)
    Figure(
        "receivers.md",
        r"\*\*(\d+) stream records per delivered reminder\*\* pass the filter .*? = \*\*([\d.]+) "
        r"OpEventsFunction invocations per delivered reminder\*\*",
        lambda: (
            _g(OPS["without"]["records_passing_filter_per_reminder"]),
            f"{OPS['without']['invocations_per_reminder_full_batches']:.2f}",
        ),
    ),
    Figure(
        "performance.md",
        r"([\d.]+) DynamoDB calls to emit it",
        lambda: (f"{OPS['with']['emit_dynamodb_calls_per_reminder']:.2f}",),
    ),
]


def page_text(page: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / page).read_text(encoding="utf-8"))


def _check(figure: Figure) -> None:
    matches = list(re.finditer(figure.pattern, page_text(figure.page)))
    assert matches, f"{figure.page}: the figure {figure.pattern!r} is no longer stated (update the register)"
    expected = tuple(v.replace(",", "") for v in figure.values())
    for match in matches:
        stated = tuple(g.replace(",", "") for g in match.groups())
        assert stated == expected, (
            f"{figure.page}: {match.group(0)!r} states {stated}, its source says {expected}"
        )


@pytest.mark.parametrize("figure", CODE_FIGURES, ids=lambda f: f"{f.page}:{f.pattern[:40]}")
def test_a_figure_the_code_defines_fails_when_the_docs_disagree(figure: Figure) -> None:
    _check(figure)


@pytest.mark.parametrize("figure", MEASURED_FIGURES, ids=lambda f: f"{f.page}:{f.pattern[:40]}")
def test_a_measured_figure_fails_when_it_disagrees_with_the_recorded_bench_run(figure: Figure) -> None:
    _check(figure)


def test_the_register_catches_a_stale_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted disagreement: the retry policy's attempt budget written as 9 must fail the check."""
    for path in DOCS.rglob("*.md"):
        target = tmp_path / path.relative_to(DOCS)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            path.read_text(encoding="utf-8").replace("attempts exhausted (8)", "attempts exhausted (9)")
        )
    monkeypatch.setattr(__import__(__name__, fromlist=["DOCS"]), "DOCS", tmp_path)
    with pytest.raises(AssertionError, match="its source says"):
        _check(CODE_FIGURES[0])


def _measured_table_rows() -> list[str]:
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    section = text.split("## Measured figures", 1)[1].split("\n## ", 1)[0]
    return [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| figure |")
    ]


def test_every_measured_figure_carries_the_command_that_measures_it() -> None:
    rows = _measured_table_rows()
    assert len(rows) >= 10
    command = re.compile(r"`(?:cd functions && )?(?:make (?:bench|verify)|python -m reminders_ops\.)[^`]*`")
    missing = [row[:80] for row in rows if not command.search(row)]
    assert not missing, f"measured figures without the command that measures them: {missing}"
