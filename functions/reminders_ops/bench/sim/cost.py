"""Dollars from counted calls: per cost step, per million delivered reminders, at list prices.

Variable cost = a loaded run minus an empty run of the same virtual span (what the reminders add);
fixed cost = the empty run (the per-minute rule, shard workers, cursor writes) scaled to a month,
plus the written part of the model for what no emulator counts: the idle long polls of the event
source mappings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from reminders.adapters.envelope import DATA_KEY_CACHE_SECONDS

from .meter import STEPS, Meter
from .model import Prices

MONTH_SECONDS = 30 * 24 * 3600
#: Written model: an idle SQS event source keeps ~5 pollers in 20 s long polls (15 empty
#: ReceiveMessage per minute per mapping); three mappings (email, webhook, dispatch).
IDLE_POLLS_PER_MINUTE_PER_ESM = 15
EVENT_SOURCES = 3
#: The monthly volume the fixed part is spread over (1 million delivered reminders a day).
REFERENCE_MONTHLY_VOLUME = 30_000_000
EVENTBRIDGE_SCHEDULER_PER_MILLION = 3.38
CRON_MARK_PER_MILLION = 3.91
GOAL_PER_MILLION = 3.08  # MISSION: 3 % above this design's floor of $2.99 (issue 32)
#: Written model: the webhook sender reads its endpoint (registered or the account's implicit one
#: for the URL's origin; a miss costs the same) before each send, an eventually consistent GetItem
#: (0.5 read units) cached 5 s per instance: at 1M/day across many destinations nearly every send
#: misses the cache. The simulator's receiver stands in for the sender, so it is added here; the moto
#: run above counts it (``record dynamodb:GetItem``).
ENDPOINT_LOOKUP_READ_UNITS_PER_SEND = 0.5
#: The endpoint health view (issue 16) is read eventually consistent: 0.5 read units per read
#: (counted by the simulator's health store); a health write is one write unit (its item < 1 KB).
HEALTH_READ_UNITS = 0.5
#: Written model of the KMS requests behind the endpoint secrets (issue 24; the moto run counts the
#: real ones, ``consume kms:GenerateDataKey``; the simulator's receiver signs nothing). An implicit
#: endpoint's secret (every bare URL's) is derived (HKDF) from the deployment signing key, which an
#: execution environment unwraps once: one ``Decrypt`` per environment start, whatever the number of
#: endpoints or sends (``tests/integration/test_endpoint_kms_calls.py`` counts it on moto). So it is
#: a fixed cost: the environments the webhook function keeps at the reference rate (the run's cold
#: starts, at least its peak concurrency; the simulator counts both) each started again every
#: ``ENVIRONMENT_LIFETIME_SECONDS`` as AWS recycles warm environments (written: 2 h, shorter than
#: the hours observed, so an upper bound), for a month. ``GenerateDataKey`` once per deployment,
#: ever: priced 0. A registered endpoint (its secret shown once) keeps its envelope: one ``Decrypt``
#: per (endpoint, environment) per ``DATA_KEY_CACHE_SECONDS`` — none in this workload (bare URLs).
ENVIRONMENT_LIFETIME_SECONDS = 2 * 3600.0
KMS_DATA_KEY_CACHE_SECONDS = DATA_KEY_CACHE_SECONDS  # the sender's own figure (registered endpoints)


@dataclass
class StepUsage:
    sqs_requests: float = 0.0
    write_units: float = 0.0
    read_units: float = 0.0
    lambda_requests: float = 0.0
    gb_seconds: float = 0.0
    kms_requests: float = 0.0

    def dollars(self, p: Prices) -> float:
        return (
            self.sqs_requests * p.sqs_request
            + self.write_units * p.write_unit
            + self.read_units * p.read_unit
            + self.lambda_requests * p.lambda_request
            + self.gb_seconds * p.lambda_gb_second
            + self.kms_requests * p.kms_request
        )

    def scaled(self, k: float) -> StepUsage:
        return StepUsage(
            self.sqs_requests * k,
            self.write_units * k,
            self.read_units * k,
            self.lambda_requests * k,
            self.gb_seconds * k,
            self.kms_requests * k,
        )

    def minus(self, other: StepUsage) -> StepUsage:
        return StepUsage(
            max(0.0, self.sqs_requests - other.sqs_requests),
            max(0.0, self.write_units - other.write_units),
            max(0.0, self.read_units - other.read_units),
            max(0.0, self.lambda_requests - other.lambda_requests),
            max(0.0, self.gb_seconds - other.gb_seconds),
            max(0.0, self.kms_requests - other.kms_requests),
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "sqs_requests": self.sqs_requests,
            "write_units": self.write_units,
            "read_units": self.read_units,
            "lambda_requests": self.lambda_requests,
            "gb_seconds": self.gb_seconds,
            "kms_requests": self.kms_requests,
        }


def usage_by_step(meter: Meter) -> dict[str, StepUsage]:
    out = {s: StepUsage() for s in STEPS}
    for (service, op, step), n in meter.calls.items():
        if service == "sqs" and op != "ReceiveMessage(empty)":
            out.setdefault(step, StepUsage()).sqs_requests += n
        elif service == "kms":
            out.setdefault(step, StepUsage()).kms_requests += n
    for (kind, step), units in meter.units.items():
        u = out.setdefault(step, StepUsage())
        if kind in ("WRU", "GSI_WRU"):
            u.write_units += units
        else:
            u.read_units += units
    for (_, step), n in meter.invocations.items():
        out.setdefault(step, StepUsage()).lambda_requests += n
    for (_, step), gbs in meter.gb_seconds.items():
        out.setdefault(step, StepUsage()).gb_seconds += gbs
    return out


@dataclass
class CostReport:
    delivered: int
    span_seconds: float
    per_million: dict[str, StepUsage]  # variable usage per million delivered, per step
    fixed_month: StepUsage
    prices: Prices = field(default_factory=Prices)
    volume: int = REFERENCE_MONTHLY_VOLUME
    kms_model: dict[str, float] = field(default_factory=dict)  # the written KMS call model's inputs

    def step_dollars(self) -> dict[str, float]:
        return {s: u.dollars(self.prices) for s, u in self.per_million.items()}

    @property
    def variable(self) -> float:
        return sum(self.step_dollars().values())

    @property
    def fixed_per_month(self) -> float:
        return self.fixed_month.dollars(self.prices)

    @property
    def fixed_per_million(self) -> float:
        return self.fixed_per_month / (self.volume / 1e6)

    @property
    def total(self) -> float:
        return self.variable + self.fixed_per_million

    @property
    def kms_per_million(self) -> float:
        """The KMS requests' dollars per million delivered, variable and fixed share."""
        variable = sum(u.kms_requests for u in self.per_million.values()) * self.prices.kms_request
        fixed = self.fixed_month.kms_requests * self.prices.kms_request / (self.volume / 1e6)
        return variable + fixed

    def as_dict(self) -> dict[str, Any]:
        return {
            "delivered": self.delivered,
            "per_million_by_step": {
                s: {**u.as_dict(), "dollars": u.dollars(self.prices)} for s, u in self.per_million.items()
            },
            "variable_per_million": self.variable,
            "fixed_per_month": self.fixed_per_month,
            "fixed_month_usage": self.fixed_month.as_dict(),
            "reference_monthly_volume": self.volume,
            "fixed_per_million_at_volume": self.fixed_per_million,
            "total_per_million": self.total,
            "kms_per_million": self.kms_per_million,
            "kms_model": self.kms_model,
            "goal_per_million": GOAL_PER_MILLION,
            "eventbridge_scheduler_per_million": EVENTBRIDGE_SCHEDULER_PER_MILLION,
            "cron_mark_per_million": CRON_MARK_PER_MILLION,
        }


def cost_report(loaded: Meter, empty: Meter, delivered: int, span_seconds: float) -> CostReport:
    """Variable usage per million delivered (loaded minus empty), fixed usage per month."""
    lu, eu = usage_by_step(loaded), usage_by_step(empty)
    k = 1e6 / max(1, delivered)
    per_million = {s: lu[s].minus(eu.get(s, StepUsage())).scaled(k) for s in lu}
    fixed = StepUsage()
    month = MONTH_SECONDS / span_seconds
    for u in eu.values():
        m = u.scaled(month)
        fixed = StepUsage(
            fixed.sqs_requests + m.sqs_requests,
            fixed.write_units + m.write_units,
            fixed.read_units + m.read_units,
            fixed.lambda_requests + m.lambda_requests,
            fixed.gb_seconds + m.gb_seconds,
            fixed.kms_requests + m.kms_requests,
        )
    fixed.sqs_requests += IDLE_POLLS_PER_MINUTE_PER_ESM * EVENT_SOURCES * MONTH_SECONDS / 60
    return CostReport(delivered, span_seconds, per_million, fixed)


def add_sender_reads(report: CostReport, *, sends: int, health_reads: int, health_writes: int) -> None:
    """Price what the consumer reads and writes around a send besides the claim and the outcome (the
    ``record`` step): the endpoint lookup (written model) and the health view (counted)."""
    k = 1e6 / max(1, report.delivered)
    rec = report.per_million.setdefault("record", StepUsage())
    rec.read_units += (sends * ENDPOINT_LOOKUP_READ_UNITS_PER_SEND + health_reads * HEALTH_READ_UNITS) * k
    rec.write_units += health_writes * k


def add_kms_requests(report: CostReport, *, sends: int, endpoints: int, environments: int, peak: int) -> None:
    """Price the KMS requests of the endpoint secrets (written model, see
    ``ENVIRONMENT_LIFETIME_SECONDS``): the deployment key's ``Decrypt``, once per webhook environment
    start, in the fixed part (a month of environments at the reference rate)."""
    kept = max(environments, peak)
    per_month = kept * MONTH_SECONDS / ENVIRONMENT_LIFETIME_SECONDS
    report.fixed_month.kms_requests += per_month
    report.kms_model = {
        "endpoints": endpoints,
        "sends": sends,
        "environments": kept,
        "decrypts_per_month": per_month,
        "decrypts_per_send": per_month / report.volume,
        "generate_data_key_per_month": 0,
    }


#: Provisioned capacity (us-east-1): $0.00065 per WCU-hour and $0.00013 per RCU-hour; with target
#: tracking at 70 % utilization a write unit costs 0.00065 / 3600 / 0.7 = $0.26 per million.
PROVISIONED_WCU_HOUR = 0.00065
PROVISIONED_RCU_HOUR = 0.00013
PROVISIONED_UTILIZATION = 0.70
#: The invariant's writes per single-channel reminder: the row, its due-index entry, the claim
#: before the send, the outcome after it.
INVARIANT_WRITES = 4


def provisioned_prices(p: Prices | None = None) -> Prices:
    base = p or Prices()
    per = 3600 * PROVISIONED_UTILIZATION
    return replace(base, write_unit=PROVISIONED_WCU_HOUR / per, read_unit=PROVISIONED_RCU_HOUR / per)


def design_floor(report: CostReport) -> dict[str, float]:
    """What one delivered reminder costs at the least this design can spend, per million: the
    invariant's four writes, one message's SQS requests at full batches (a send of 10, a receive of
    10, a delete of 10: 0.3 requests), one invocation per 10 records, the reads and KMS requests
    around a send as measured, and the fixed share. What the run spends above it is batching and
    billed waiting."""
    p = report.prices
    reads = sum(u.read_units for u in report.per_million.values()) / 1e6
    parts = {
        "writes": INVARIANT_WRITES * p.write_unit * 1e6,
        "sqs": 0.3 * p.sqs_request * 1e6,
        "invocations": 0.1 * p.lambda_request * 1e6,
        "reads": reads * p.read_unit * 1e6,
        "kms": sum(u.kms_requests for u in report.per_million.values()) * p.kms_request,
        "fixed": report.fixed_per_million,
    }
    parts["total"] = sum(parts.values())
    return parts


def calls_per_reminder(meter: Meter, n: int) -> Counter[str]:
    out: Counter[str] = Counter()
    for (service, op, step), c in meter.calls.items():
        out[f"{step}:{service}:{op}"] += c
    return Counter({k: v / max(1, n) for k, v in out.items()})
