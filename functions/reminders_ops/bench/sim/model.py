"""What the simulator assumes about AWS: the deployment (read from the synthesized template when it
exists), the latency of each call, list prices, and DynamoDB's item-size rules for capacity units.

Every number here is a stated assumption, printed by ``make bench`` next to the figures it drives.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

TEMPLATE = Path("cdk.out/RemindersStack.template.json")

#: The handlers the template names (fallback while the template is not synthesized).
KNOWN_HANDLERS = (
    "reminders.handlers.api.handler",
    "reminders.handlers.dispatcher.tick_handler",
    "reminders.handlers.dispatcher.shard_handler",
    "reminders.handlers.delivery.email_handler",
    "reminders.handlers.delivery.webhook_handler",
    "reminders.handlers.ses_events.handler",
    "reminders.handlers.receipts.handler",
    "reminders.handlers.opevents.handler",
    "reminders.handlers.public.handler",
)


class SimClock:
    """The virtual clock shared by the services (``now()``) and the in-memory SQS (``time()``)."""

    def __init__(self, start: float) -> None:
        self.t = start

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.t, UTC)

    def time(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def sleep(self, seconds: float) -> None:
        """A consumer's bounded wait before its claim: the record's virtual time moves on."""
        self.t += seconds


@dataclass(frozen=True)
class Latency:
    """Modelled duration of each call (seconds), as seen from a Lambda in the same region."""

    ddb_write: float = 0.006
    ddb_read: float = 0.004
    ddb_query: float = 0.008
    ddb_batch_get: float = 0.010
    sqs_send: float = 0.008
    sqs_delete: float = 0.008
    sqs_change_visibility: float = 0.006
    provider: float = 0.050  # the receiver's answer time (webhook POST or SES call)
    throttled_answer: float = 0.005  # a 429 comes back fast
    invoke: float = 0.010  # event source mapping -> synchronous Lambda invoke
    handler_cpu_per_record: float = 0.0003  # our own code per record on a full vCPU (bench step 5)
    cold_start: float = 1.0  # init of a fresh execution environment (imports + clients) at 256 MB
    #: Lambda allots CPU in proportion to memory: a full vCPU at 1,769 MB (issue 32 item 1: the
    #: consumer's CPU time, and so its billed time, grows as its memory shrinks).
    full_vcpu_mb: int = 1769

    def cpu_share(self, memory_mb: int) -> float:
        return min(1.0, memory_mb / self.full_vcpu_mb)

    def handler_cpu_at(self, memory_mb: int) -> float:
        """Our CPU per record at ``memory_mb``: the measured full-vCPU time over the share allotted."""
        return self.handler_cpu_per_record / self.cpu_share(memory_mb)

    def cold_start_at(self, memory_mb: int) -> float:
        """The cold start (stated at 256 MB, CPU-bound: imports and clients) at ``memory_mb``."""
        return self.cold_start * self.cpu_share(256) / self.cpu_share(memory_mb)

    def describe(self) -> str:
        return (
            f"DynamoDB write {self.ddb_write * 1e3:.0f} ms, read {self.ddb_read * 1e3:.0f} ms, query "
            f"{self.ddb_query * 1e3:.0f} ms; SQS send {self.sqs_send * 1e3:.0f} ms; provider "
            f"{self.provider * 1e3:.0f} ms; handler CPU {self.handler_cpu_per_record * 1e6:.0f} µs/record "
            f"on a full vCPU (÷ memory/{self.full_vcpu_mb} MB); "
            f"cold start {self.cold_start:.1f} s"
        )


@dataclass(frozen=True)
class Prices:
    """us-east-1 list prices (USD)."""

    sqs_request: float = 0.40 / 1e6
    write_unit: float = 0.625 / 1e6
    read_unit: float = 0.125 / 1e6
    lambda_request: float = 0.20 / 1e6
    lambda_gb_second: float = 0.0000133334  # arm64
    kms_request: float = 0.03 / 10_000


@dataclass(frozen=True)
class Deployment:
    """The parts of the stack that shape throughput and cost."""

    shards: int = 16
    delivery_batch_size: int = 10
    delivery_max_concurrency: int = 20
    delivery_batching_window: float = 0.0  # as the template (infra/delivery.py MAX_BATCHING_WINDOW)
    #: Records of one batch in flight at once (handlers/delivery.py, DELIVERY_RECORD_CONCURRENCY).
    record_concurrency: int = 10
    delivery_timeout: float = 30.0
    dispatch_max_concurrency: int = 16
    dispatch_timeout: float = 60.0
    rule_period: float = 60.0
    max_receive_count: int = 20
    dispatch_max_receive_count: int = 5
    visibility_timeout: int = 180
    dispatch_visibility_timeout: int = 360
    memory_mb: dict[str, int] = field(
        default_factory=lambda: {"api": 256, "tick": 256, "shard": 256, "delivery": 192}  # as infra
    )
    source: str = "defaults (no synthesized template)"

    def with_(self, **changes: Any) -> Deployment:
        return replace(self, **changes)

    @classmethod
    def from_template(cls, path: Path = TEMPLATE) -> Deployment:
        """Read concurrency, batching, timeouts, memory and shards from the synthesized template."""
        if not path.exists():
            return cls()
        try:
            resources: dict[str, Any] = json.loads(path.read_text())["Resources"]
        except (ValueError, KeyError):
            return cls()
        d = cls()
        kinds = {
            "reminders.handlers.delivery.webhook_handler": "delivery",
            "reminders.handlers.dispatcher.shard_handler": "shard",
            "reminders.handlers.dispatcher.tick_handler": "tick",
            "reminders.handlers.api.handler": "api",
        }
        functions: dict[str, tuple[str, dict[str, Any]]] = {}
        memory = dict(d.memory_mb)
        changes: dict[str, Any] = {}
        for logical, res in resources.items():
            props = res.get("Properties", {})
            if res.get("Type") == "AWS::Lambda::Function" and props.get("Handler") in kinds:
                kind = kinds[props["Handler"]]
                functions[logical] = (kind, props)
                memory[kind] = int(props.get("MemorySize", 128))
                env = props.get("Environment", {}).get("Variables", {})
                if "DUE_SHARDS" in env:
                    changes["shards"] = int(env["DUE_SHARDS"])
                if kind == "delivery":
                    changes["delivery_timeout"] = float(props.get("Timeout", 3))
                    if "DELIVERY_RECORD_CONCURRENCY" in env:
                        changes["record_concurrency"] = int(env["DELIVERY_RECORD_CONCURRENCY"])
                if kind == "shard":
                    changes["dispatch_timeout"] = float(props.get("Timeout", 3))
        for res in resources.values():
            if res.get("Type") != "AWS::Lambda::EventSourceMapping":
                continue
            props = res.get("Properties", {})
            fn = props.get("FunctionName", {})
            ref = str(fn.get("Ref", "")) if isinstance(fn, dict) else ""
            kind = functions.get(ref, ("", {}))[0]
            scaling = props.get("ScalingConfig", {}).get("MaximumConcurrency")
            queue = _queue_of(resources, props.get("EventSourceArn"))
            if kind == "delivery":
                changes["delivery_batch_size"] = int(props.get("BatchSize", 10))
                changes["delivery_batching_window"] = float(props.get("MaximumBatchingWindowInSeconds", 0))
                if scaling:
                    changes["delivery_max_concurrency"] = int(scaling)
                if queue:
                    changes["visibility_timeout"] = int(queue.get("VisibilityTimeout", 30))
                    mrc = queue.get("RedrivePolicy", {}).get("maxReceiveCount")
                    if mrc:
                        changes["max_receive_count"] = int(mrc)
            elif kind == "shard":
                if scaling:
                    changes["dispatch_max_concurrency"] = int(scaling)
                if queue:
                    changes["dispatch_visibility_timeout"] = int(queue.get("VisibilityTimeout", 30))
                    mrc = queue.get("RedrivePolicy", {}).get("maxReceiveCount")
                    if mrc:
                        changes["dispatch_max_receive_count"] = int(mrc)
        return replace(d, memory_mb=memory, source=str(path), **changes)


def _queue_of(resources: dict[str, Any], arn: Any) -> dict[str, Any] | None:
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        res = resources.get(arn["Fn::GetAtt"][0], {})
        props: dict[str, Any] = res.get("Properties", {})
        return props
    return None


def template_handlers(path: Path = TEMPLATE) -> tuple[list[str], str]:
    """Handlers named by the template's functions, or the known list when it is missing."""
    if path.exists():
        try:
            resources = json.loads(path.read_text())["Resources"]
            names = sorted(
                {
                    r["Properties"]["Handler"]
                    for r in resources.values()
                    if r.get("Type") == "AWS::Lambda::Function"
                    and str(r.get("Properties", {}).get("Handler", "")).startswith("reminders.")
                }
            )
            if names:
                return names, str(path)
        except (ValueError, KeyError):
            pass
    return list(KNOWN_HANDLERS), "known handler names (no synthesized template)"


# -- DynamoDB item size and capacity units --------------------------------------------------------


def _number_size(v: int | float | Decimal) -> int:
    text = str(abs(v)) if type(v) is int else str(abs(Decimal(str(v))))
    digits = text.replace(".", "").lstrip("0").rstrip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def _text_size(v: str) -> int:
    return len(v) if v.isascii() else len(v.encode())


def value_size(v: Any) -> int:
    """DynamoDB's size of one attribute value (strings UTF-8, numbers ~1 byte per 2 digits + 1,
    3 bytes of overhead per map or list plus 1 per element)."""
    t = type(v)
    if t is str:
        return _text_size(v)
    if t is dict:
        n = 3
        for k, x in v.items():
            n += _text_size(k) + value_size(x) + 1
        return n
    if v is None or t is bool:
        return 1
    if t is int or isinstance(v, int | float | Decimal):
        return _number_size(v)
    if isinstance(v, list | tuple | set | frozenset):
        n = 3
        for x in v:
            n += value_size(x) + 1
        return n
    if isinstance(v, bytes | bytearray):
        return len(v)
    if isinstance(getattr(v, "value", None), bytes | bytearray):  # boto3's Binary (an endpoint's keys)
        return len(v.value)
    if isinstance(v, str):
        return _text_size(v)
    if isinstance(v, dict):
        return 3 + sum(_text_size(k) + value_size(x) + 1 for k, x in v.items())
    raise TypeError(f"no DynamoDB size for {t.__name__}")


def item_size(item: dict[str, Any]) -> int:
    n = 0
    for k, v in item.items():
        n += _text_size(k) + value_size(v)
    return n


def write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4096))
    return float(units) if consistent else units / 2
