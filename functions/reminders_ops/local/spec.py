"""What the local runtime runs, read from the synthesized template: functions (handler, timeout,
resolved environment), SQS event source mappings, scheduled rules, HTTP API routes and queues.

Everything the runtime wires comes from here, and everything of the template it cannot wire is
listed in ``unwired`` (the runtime refuses to start rather than skip it silently).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_LAMBDA_TIMEOUT_SECONDS = 3.0


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    logical_id: str
    name: str
    handler: str  # "package.module.attribute"
    timeout_seconds: float
    memory_mb: int
    environment: dict[str, str]


@dataclass(frozen=True, slots=True)
class QueueSpec:
    logical_id: str
    name: str
    arn: str
    url: str
    dlq_arn: str | None = None
    max_receive_count: int | None = None
    visibility_timeout_seconds: int = 30


@dataclass(frozen=True, slots=True)
class MappingSpec:
    """An SQS event source mapping."""

    logical_id: str
    function_id: str
    queue_arn: str
    batch_size: int = 10
    batching_window_seconds: float = 0.0
    max_concurrency: int | None = None
    report_batch_item_failures: bool = False
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class TargetSpec:
    function_id: str
    input: str | None = None  # a constant JSON input replaces the event


@dataclass(frozen=True, slots=True)
class RuleSpec:
    logical_id: str
    name: str
    arn: str
    schedule: str | None
    event_pattern: dict[str, Any] | None
    targets: tuple[TargetSpec, ...]
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class RouteSpec:
    route_key: str  # "GET /reminders/{id}" or "$default"
    function_id: str
    authorization: str = "NONE"


@dataclass
class LocalSpec:
    account_id: str
    region: str
    functions: dict[str, FunctionSpec]
    queues: dict[str, QueueSpec]
    mappings: list[MappingSpec]
    rules: list[RuleSpec]
    routes: list[RouteSpec]
    table_names: list[str] = field(default_factory=list)
    unwired: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    #: DynamoDB stream event source mappings (reminders_ops.local.streams.StreamMappingSpec).
    stream_mappings: list[Any] = field(default_factory=list)

    def queue_by_arn(self, arn: str) -> QueueSpec:
        for q in self.queues.values():
            if q.arn == arn:
                return q
        raise KeyError(f"no queue with ARN {arn} in the template")

    def api_function_ids(self) -> list[str]:
        return sorted({r.function_id for r in self.routes})
