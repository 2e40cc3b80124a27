"""Read a synthesized CloudFormation template and create its stateful resources in an emulator.

Two halves, both pure library code (no globals, no environment reads):

- ``Inventory.from_template`` lists what the template declares: functions (handler, timeout,
  environment), SQS event source mappings, EventBridge schedules, queues (with redrive and redrive
  allow policies), DynamoDB tables (keys, GSIs, TTL), SES configuration sets, secrets and HTTP API
  routes.
- ``provision`` creates the queues, tables, SES configuration set and sender identity, and secrets
  through the boto3 clients it is given (``moto.mock_aws`` in-process, or a moto server at an
  endpoint URL), and returns every logical id's physical name/URL/ARN plus each function's
  environment with all ``Ref``/``Fn::GetAtt`` resolved to those local resources.

Local names are deterministic: an explicit name in the template (``QueueName`` ...) is kept,
otherwise ``<stack>-<construct id>`` from the ``aws:cdk:path`` metadata, else the logical id.
Provisioning is idempotent, so a local runtime can re-run it against a long-lived moto server.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TEMPLATE_PATH = Path("cdk.out/RemindersStack.template.json")
DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT = "123456789012"  # moto's default account

FUNCTION = "AWS::Lambda::Function"
EVENT_SOURCE_MAPPING = "AWS::Lambda::EventSourceMapping"
RULE = "AWS::Events::Rule"
QUEUE = "AWS::SQS::Queue"
TABLE = "AWS::DynamoDB::Table"
CONFIGURATION_SET = "AWS::SES::ConfigurationSet"
CONFIGURATION_SET_DESTINATION = "AWS::SES::ConfigurationSetEventDestination"
SECRET = "AWS::SecretsManager::Secret"
ROUTE = "AWS::ApiGatewayV2::Route"
INTEGRATION = "AWS::ApiGatewayV2::Integration"

#: The property that carries an explicit physical name, per resource type.
NAME_PROPERTIES = {
    QUEUE: "QueueName",
    TABLE: "TableName",
    CONFIGURATION_SET: "Name",
    SECRET: "Name",
    FUNCTION: "FunctionName",
    RULE: "Name",
    "AWS::SNS::Topic": "TopicName",
    "AWS::Logs::LogGroup": "LogGroupName",
}
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class TemplateError(ValueError):
    """The template declares something this reader cannot interpret."""


# --------------------------------------------------------------------------------------------
# Reading the template
# --------------------------------------------------------------------------------------------


def load_template(path: str | Path = DEFAULT_TEMPLATE_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        template: dict[str, Any] = json.load(f)
    if "Resources" not in template:
        raise TemplateError(f"{path} has no Resources: not a CloudFormation template")
    return template


def _as_template(template: Mapping[str, Any] | str | Path) -> Mapping[str, Any]:
    return load_template(template) if isinstance(template, str | Path) else template


def ref_target(value: Any) -> str | None:
    """The logical id a ``{"Ref": x}`` or ``{"Fn::GetAtt": [x, ...]}`` points at, else None."""
    if isinstance(value, dict) and len(value) == 1:
        if "Ref" in value and isinstance(value["Ref"], str):
            return str(value["Ref"])
        if "Fn::GetAtt" in value:
            att = value["Fn::GetAtt"]
            return str(att[0] if isinstance(att, list) else str(att).split(".", 1)[0])
    return None


def referenced_ids(value: Any) -> Iterator[str]:
    """Every logical id referenced anywhere inside ``value`` (Ref, GetAtt, Sub placeholders)."""
    if isinstance(value, dict):
        target = ref_target(value)
        if target is not None:
            yield target
            return
        if "Fn::Sub" in value:
            sub = value["Fn::Sub"]
            text = sub[0] if isinstance(sub, list) else sub
            for name in re.findall(r"\$\{([^}!][^}]*)\}", str(text)):
                yield name.split(".", 1)[0]
        for item in value.values():
            yield from referenced_ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from referenced_ids(item)


def construct_name(logical_id: str, resource: Mapping[str, Any]) -> str:
    """The CDK construct id of a resource (``EmailQueue`` for ``Stack/Queues/EmailQueue/Resource``)."""
    path = str(resource.get("Metadata", {}).get("aws:cdk:path", ""))
    parts = [p for p in path.split("/") if p]
    if parts and parts[-1] == "Resource":
        parts = parts[:-1]
    return parts[-1] if len(parts) > 1 else logical_id


def stack_name_of(template: Mapping[str, Any], default: str = "Stack") -> str:
    for resource in template.get("Resources", {}).values():
        path = str(resource.get("Metadata", {}).get("aws:cdk:path", ""))
        if "/" in path:
            return path.split("/", 1)[0]
    return default


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    logical_id: str
    name: str  # construct id, e.g. "WebhookDeliveryFunction"
    handler: str
    runtime: str
    timeout_seconds: int
    memory_mb: int
    environment: Mapping[str, Any]  # as written in the template (intrinsics unresolved)
    architectures: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EventSourceSpec:
    logical_id: str
    function: str  # logical id of the function
    queue: str | None  # logical id of the queue (SQS sources)
    batch_size: int
    batching_window_seconds: int
    maximum_concurrency: int | None
    function_response_types: tuple[str, ...]
    enabled: bool = True
    table: str | None = None  # logical id of the table (DynamoDB stream sources)
    filters: tuple[Mapping[str, Any], ...] = ()  # FilterCriteria patterns
    maximum_retry_attempts: int | None = None
    on_failure_queue: str | None = None  # logical id of the on-failure SQS destination

    @property
    def reports_batch_item_failures(self) -> bool:
        return "ReportBatchItemFailures" in self.function_response_types


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    logical_id: str
    name: str
    schedule_expression: str
    targets: tuple[str, ...]  # logical ids of target functions
    enabled: bool = True

    @property
    def rate_seconds(self) -> int | None:
        """The period of a ``rate(...)`` expression in seconds (None for ``cron(...)``)."""
        m = re.fullmatch(r"rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)", self.schedule_expression)
        if not m:
            return None
        unit = {"minute": 60, "hour": 3600, "day": 86400}[m.group(2).rstrip("s")]
        return int(m.group(1)) * unit


@dataclass(frozen=True, slots=True)
class RedrivePolicySpec:
    dead_letter_queue: str  # logical id of the DLQ
    max_receive_count: int


@dataclass(frozen=True, slots=True)
class RedriveAllowPolicySpec:
    permission: str  # allowAll | denyAll | byQueue
    source_queues: tuple[str, ...]  # logical ids (matched by ARN or queue name)


@dataclass(frozen=True, slots=True)
class QueueSpec:
    logical_id: str
    name: str  # construct id
    queue_name: str | None  # explicit QueueName in the template
    visibility_timeout_seconds: int
    delay_seconds: int
    retention_seconds: int
    receive_wait_seconds: int
    fifo: bool
    redrive_policy: RedrivePolicySpec | None
    redrive_allow_policy: RedriveAllowPolicySpec | None


@dataclass(frozen=True, slots=True)
class IndexSpec:
    name: str
    key_schema: tuple[tuple[str, str], ...]  # (attribute, HASH|RANGE)
    projection_type: str
    non_key_attributes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableSpec:
    logical_id: str
    name: str
    table_name: str | None
    key_schema: tuple[tuple[str, str], ...]
    attribute_definitions: tuple[tuple[str, str], ...]  # (attribute, S|N|B)
    global_secondary_indexes: tuple[IndexSpec, ...]
    billing_mode: str
    ttl_attribute: str | None
    point_in_time_recovery: bool
    stream_view_type: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigurationSetSpec:
    logical_id: str
    name: str
    configuration_set_name: str | None
    event_destinations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class SecretSpec:
    logical_id: str
    name: str
    secret_name: str | None
    generate: Mapping[str, Any] | None  # GenerateSecretString
    secret_string: str | None


@dataclass(frozen=True, slots=True)
class RouteSpec:
    logical_id: str
    route_key: str  # "POST /reminders"
    authorization_type: str  # NONE | AWS_IAM | JWT | CUSTOM
    function: str | None  # logical id of the integration's function


@dataclass(frozen=True, slots=True)
class Inventory:
    stack_name: str
    functions: Mapping[str, FunctionSpec]
    event_sources: tuple[EventSourceSpec, ...]
    schedules: tuple[ScheduleSpec, ...]
    queues: Mapping[str, QueueSpec]
    tables: Mapping[str, TableSpec]
    configuration_sets: Mapping[str, ConfigurationSetSpec]
    secrets: Mapping[str, SecretSpec]
    routes: tuple[RouteSpec, ...]

    @classmethod
    def from_template(cls, template: Mapping[str, Any] | str | Path) -> Inventory:
        t = _as_template(template)
        resources: Mapping[str, Any] = t["Resources"]
        by_type: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
        for logical_id, resource in resources.items():
            by_type.setdefault(resource.get("Type", ""), []).append((logical_id, resource))

        def items(rtype: str) -> list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
            return [(lid, r, r.get("Properties", {})) for lid, r in by_type.get(rtype, [])]

        functions = {
            lid: FunctionSpec(
                logical_id=lid,
                name=construct_name(lid, r),
                handler=str(p.get("Handler", "")),
                runtime=str(p.get("Runtime", "")),
                timeout_seconds=int(p.get("Timeout", 3)),
                memory_mb=int(p.get("MemorySize", 128)),
                environment=dict(p.get("Environment", {}).get("Variables", {})),
                architectures=tuple(p.get("Architectures", ())),
            )
            for lid, r, p in items(FUNCTION)
        }
        event_sources = tuple(
            EventSourceSpec(
                logical_id=lid,
                function=_function_id(p.get("FunctionName"), functions),
                queue=_queue_id(p.get("EventSourceArn"), resources),
                batch_size=int(p.get("BatchSize", 10)),
                batching_window_seconds=int(p.get("MaximumBatchingWindowInSeconds", 0)),
                maximum_concurrency=(
                    int(p["ScalingConfig"]["MaximumConcurrency"])
                    if "MaximumConcurrency" in p.get("ScalingConfig", {})
                    else None
                ),
                function_response_types=tuple(p.get("FunctionResponseTypes", ())),
                enabled=bool(p.get("Enabled", True)),
                table=_stream_table_id(p.get("EventSourceArn"), resources),
                filters=tuple(
                    _json_property(f.get("Pattern"))
                    for f in (p.get("FilterCriteria") or {}).get("Filters", [])
                ),
                maximum_retry_attempts=(
                    int(p["MaximumRetryAttempts"]) if "MaximumRetryAttempts" in p else None
                ),
                on_failure_queue=_queue_id(
                    ((p.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"), resources
                ),
            )
            for lid, _r, p in items(EVENT_SOURCE_MAPPING)
        )
        schedules = tuple(
            ScheduleSpec(
                logical_id=lid,
                name=construct_name(lid, r),
                schedule_expression=str(p["ScheduleExpression"]),
                targets=tuple(
                    target
                    for tgt in p.get("Targets", [])
                    if (target := ref_target(tgt.get("Arn"))) is not None and target in functions
                ),
                enabled=str(p.get("State", "ENABLED")) == "ENABLED",
            )
            for lid, r, p in items(RULE)
            if "ScheduleExpression" in p
        )
        queue_names = {
            lid: p["QueueName"] for lid, _r, p in items(QUEUE) if isinstance(p.get("QueueName"), str)
        }
        queues = {lid: _queue_spec(lid, r, p, queue_names) for lid, r, p in items(QUEUE)}
        tables = {lid: _table_spec(lid, r, p) for lid, r, p in items(TABLE)}
        destinations: dict[str, list[Mapping[str, Any]]] = {}
        for _lid, _r, p in items(CONFIGURATION_SET_DESTINATION):
            owner = ref_target(p.get("ConfigurationSetName"))
            if owner is not None:
                destinations.setdefault(owner, []).append(p.get("EventDestination", {}))
        configuration_sets = {
            lid: ConfigurationSetSpec(
                logical_id=lid,
                name=construct_name(lid, r),
                configuration_set_name=p.get("Name") if isinstance(p.get("Name"), str) else None,
                event_destinations=tuple(destinations.get(lid, ())),
            )
            for lid, r, p in items(CONFIGURATION_SET)
        }
        secrets_ = {
            lid: SecretSpec(
                logical_id=lid,
                name=construct_name(lid, r),
                secret_name=p.get("Name") if isinstance(p.get("Name"), str) else None,
                generate=p.get("GenerateSecretString"),
                secret_string=p.get("SecretString") if isinstance(p.get("SecretString"), str) else None,
            )
            for lid, r, p in items(SECRET)
        }
        integrations = {lid: p for lid, _r, p in items(INTEGRATION)}
        routes = []
        for lid, _r, p in items(ROUTE):
            integration = next((i for i in referenced_ids(p.get("Target")) if i in integrations), None)
            function = None
            if integration is not None:
                function = next(
                    (
                        f
                        for f in referenced_ids(integrations[integration].get("IntegrationUri"))
                        if f in functions
                    ),
                    None,
                )
            routes.append(
                RouteSpec(
                    logical_id=lid,
                    route_key=str(p.get("RouteKey", "")),
                    authorization_type=str(p.get("AuthorizationType", "NONE")),
                    function=function,
                )
            )
        return cls(
            stack_name=stack_name_of(t),
            functions=functions,
            event_sources=event_sources,
            schedules=schedules,
            queues=queues,
            tables=tables,
            configuration_sets=configuration_sets,
            secrets=secrets_,
            routes=tuple(routes),
        )

    def function(self, selector: str) -> FunctionSpec:
        """A function by logical id, construct id, or a unique prefix of either
        (``WebhookDelivery`` finds ``WebhookDeliveryFunction``)."""
        if selector in self.functions:
            return self.functions[selector]
        exact = [f for f in self.functions.values() if f.name == selector]
        if len(exact) == 1:
            return exact[0]
        wanted = selector.lower()
        # Construct ids first (what people type), then logical ids; prefixes before substrings.
        for match in (str.startswith, str.__contains__):
            for attribute in ("name", "logical_id"):
                found = [f for f in self.functions.values() if match(getattr(f, attribute).lower(), wanted)]
                if len(found) == 1:
                    return found[0]
                if len(found) > 1:
                    names = ", ".join(sorted(f.name for f in found))
                    raise KeyError(f"{selector!r} is ambiguous: {names}")
        names = ", ".join(sorted(f.name for f in self.functions.values()))
        raise KeyError(f"no function {selector!r} in the template; functions: {names}")

    def event_source_for(self, function_logical_id: str) -> EventSourceSpec | None:
        return next((e for e in self.event_sources if e.function == function_logical_id), None)

    def schedule_for(self, function_logical_id: str) -> ScheduleSpec | None:
        return next((s for s in self.schedules if function_logical_id in s.targets), None)

    def queue(self, selector: str) -> QueueSpec:
        """A queue by logical id, construct id (``EmailQueue``) or explicit queue name."""
        for q in self.queues.values():
            if selector in (q.logical_id, q.name, q.queue_name):
                return q
        raise KeyError(f"no queue {selector!r} in the template")

    def dead_letter_queue_ids(self) -> set[str]:
        return {q.redrive_policy.dead_letter_queue for q in self.queues.values() if q.redrive_policy}


def _function_id(value: Any, functions: Mapping[str, FunctionSpec]) -> str:
    target = ref_target(value)
    if target is None or target not in functions:
        raise TemplateError(f"event source mapping names no function of the template: {value!r}")
    return target


def _queue_id(value: Any, resources: Mapping[str, Any]) -> str | None:
    target = ref_target(value)
    if target is not None and resources.get(target, {}).get("Type") == QUEUE:
        return target
    return None


def _stream_table_id(value: Any, resources: Mapping[str, Any]) -> str | None:
    """The table of a ``Fn::GetAtt [<table>, StreamArn]`` event source."""
    if isinstance(value, Mapping) and "Fn::GetAtt" in value:
        lid, attr = value["Fn::GetAtt"][0], value["Fn::GetAtt"][1]
        if attr == "StreamArn" and resources.get(lid, {}).get("Type") == TABLE:
            return str(lid)
    return None


def _queue_by_arn(value: Any, queue_names: Mapping[str, str]) -> str | None:
    """A queue's logical id from a GetAtt, or from a literal ARN ending in a template queue's name."""
    target = ref_target(value)
    if target is not None:
        return target
    if isinstance(value, str):
        name = value.rsplit(":", 1)[-1]
        return next((lid for lid, qn in queue_names.items() if qn == name), None)
    return None


def _json_property(value: Any) -> Mapping[str, Any]:
    if isinstance(value, str):
        parsed: Mapping[str, Any] = json.loads(value)
        return parsed
    return value if isinstance(value, Mapping) else {}


def _queue_spec(
    lid: str, r: Mapping[str, Any], p: Mapping[str, Any], queue_names: Mapping[str, str]
) -> QueueSpec:
    redrive = _json_property(p.get("RedrivePolicy"))
    redrive_policy = None
    if redrive:
        dlq = _queue_by_arn(redrive.get("deadLetterTargetArn"), queue_names)
        if dlq is None:
            raise TemplateError(
                f"{lid}: dead-letter queue {redrive.get('deadLetterTargetArn')!r} is not in the template"
            )
        redrive_policy = RedrivePolicySpec(
            dead_letter_queue=dlq, max_receive_count=int(redrive["maxReceiveCount"])
        )
    allow = _json_property(p.get("RedriveAllowPolicy"))
    redrive_allow = None
    if allow:
        sources = tuple(
            source
            for arn in allow.get("sourceQueueArns", [])
            if (source := _queue_by_arn(arn, queue_names)) is not None
        )
        redrive_allow = RedriveAllowPolicySpec(
            permission=str(allow.get("redrivePermission")), source_queues=sources
        )
    return QueueSpec(
        logical_id=lid,
        name=construct_name(lid, r),
        queue_name=p.get("QueueName") if isinstance(p.get("QueueName"), str) else None,
        visibility_timeout_seconds=int(p.get("VisibilityTimeout", 30)),
        delay_seconds=int(p.get("DelaySeconds", 0)),
        retention_seconds=int(p.get("MessageRetentionPeriod", 345600)),
        receive_wait_seconds=int(p.get("ReceiveMessageWaitTimeSeconds", 0)),
        fifo=bool(p.get("FifoQueue", False)),
        redrive_policy=redrive_policy,
        redrive_allow_policy=redrive_allow,
    )


def _table_spec(lid: str, r: Mapping[str, Any], p: Mapping[str, Any]) -> TableSpec:
    ttl = p.get("TimeToLiveSpecification") or {}
    pitr = p.get("PointInTimeRecoverySpecification") or {}
    return TableSpec(
        logical_id=lid,
        name=construct_name(lid, r),
        table_name=p.get("TableName") if isinstance(p.get("TableName"), str) else None,
        key_schema=tuple((k["AttributeName"], k["KeyType"]) for k in p.get("KeySchema", [])),
        attribute_definitions=tuple(
            (a["AttributeName"], a["AttributeType"]) for a in p.get("AttributeDefinitions", [])
        ),
        global_secondary_indexes=tuple(
            IndexSpec(
                name=g["IndexName"],
                key_schema=tuple((k["AttributeName"], k["KeyType"]) for k in g["KeySchema"]),
                projection_type=g.get("Projection", {}).get("ProjectionType", "ALL"),
                non_key_attributes=tuple(g.get("Projection", {}).get("NonKeyAttributes", ())),
            )
            for g in p.get("GlobalSecondaryIndexes", [])
        ),
        billing_mode=str(p.get("BillingMode", "PROVISIONED")),
        ttl_attribute=ttl.get("AttributeName") if ttl.get("Enabled", False) else None,
        point_in_time_recovery=bool(pitr.get("PointInTimeRecoveryEnabled", False)),
        stream_view_type=(p.get("StreamSpecification") or {}).get("StreamViewType"),
    )


# --------------------------------------------------------------------------------------------
# Provisioning into an emulator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AwsClients:
    """The boto3 clients ``provision`` uses; all pointed at the same emulator and region."""

    sqs: Any
    dynamodb: Any
    sesv2: Any
    secretsmanager: Any
    region: str

    @classmethod
    def create(
        cls, session: Any | None = None, *, endpoint_url: str | None = None, region_name: str | None = None
    ) -> AwsClients:
        """Clients from a ``boto3.Session`` (a new one by default) at ``endpoint_url`` (None = AWS
        endpoints, i.e. in-process ``moto.mock_aws``)."""
        import boto3

        session_: Any = session or boto3.session.Session(region_name=region_name or DEFAULT_REGION)
        region: str = region_name or session_.region_name or DEFAULT_REGION

        def client(service: str) -> Any:
            return session_.client(service, region_name=region, endpoint_url=endpoint_url)

        return cls(
            sqs=client("sqs"),
            dynamodb=client("dynamodb"),
            sesv2=client("sesv2"),
            secretsmanager=client("secretsmanager"),
            region=region,
        )


@dataclass(slots=True)
class Provisioned:
    """What ``provision`` created, by logical id, and each function's resolved environment."""

    inventory: Inventory
    region: str
    account_id: str
    physical: dict[str, str] = field(default_factory=dict)  # the value ``Ref`` resolves to
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)  # ``Fn::GetAtt`` values
    environments: dict[str, dict[str, str]] = field(default_factory=dict)  # by function logical id
    sender_identity: str | None = None

    def queue_url(self, selector: str) -> str:
        return self.attributes[self.inventory.queue(selector).logical_id]["QueueUrl"]

    def queue_arn(self, selector: str) -> str:
        return self.attributes[self.inventory.queue(selector).logical_id]["Arn"]

    def environment(self, selector: str) -> dict[str, str]:
        return dict(self.environments[self.inventory.function(selector).logical_id])

    def function_arn(self, selector: str) -> str:
        return self.attributes[self.inventory.function(selector).logical_id]["Arn"]


def local_names(template: Mapping[str, Any], prefix: str | None = None) -> dict[str, str]:
    """A deterministic physical name for every resource of the template."""
    resources: Mapping[str, Any] = template["Resources"]
    stack = stack_name_of(template) if prefix is None else prefix
    candidates: dict[str, str] = {}
    for lid, r in resources.items():
        explicit = r.get("Properties", {}).get(NAME_PROPERTIES.get(r.get("Type", ""), ""), None)
        if isinstance(explicit, str):
            candidates[lid] = explicit
        else:
            base = construct_name(lid, r)
            candidates[lid] = _NAME_UNSAFE.sub("-", f"{stack}-{base}" if stack else base)
    seen: dict[str, int] = {}
    for name in candidates.values():
        seen[name] = seen.get(name, 0) + 1
    return {
        lid: (name if seen[name] == 1 else _NAME_UNSAFE.sub("-", f"{stack}-{lid}"))
        for lid, name in candidates.items()
    }


class Resolver:
    """Resolves CloudFormation intrinsics against provisioned (or synthetic) physical values."""

    def __init__(
        self,
        template: Mapping[str, Any],
        physical: Mapping[str, str],
        attributes: Mapping[str, Mapping[str, str]],
        *,
        region: str,
        account_id: str,
        stack_name: str,
    ) -> None:
        self.parameters: Mapping[str, Any] = template.get("Parameters", {})
        self.physical = physical
        self.attributes = attributes
        self.pseudo = {
            "AWS::Region": region,
            "AWS::AccountId": account_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": stack_name,
            "AWS::StackId": f"arn:aws:cloudformation:{region}:{account_id}:stack/{stack_name}/local",
            "AWS::NoValue": "",
        }

    def ref(self, name: str) -> str:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.physical:
            return self.physical[name]
        if name in self.parameters:
            return str(self.parameters[name].get("Default", ""))
        raise TemplateError(f"Ref to unknown {name!r}")

    def get_att(self, logical_id: str, attribute: str) -> str:
        try:
            return self.attributes[logical_id][attribute]
        except KeyError:
            raise TemplateError(f"Fn::GetAtt {logical_id}.{attribute} has no local value") from None

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) != 1:
            return {k: self.resolve(v) for k, v in value.items()}
        ((key, arg),) = value.items()
        if key == "Ref":
            return self.ref(arg)
        if key == "Fn::GetAtt":
            lid, attr = arg if isinstance(arg, list) else str(arg).split(".", 1)
            return self.get_att(lid, attr)
        if key == "Fn::Join":
            sep, parts = arg
            return str(sep).join(str(self.resolve(p)) for p in self.resolve(parts))
        if key == "Fn::Select":
            index, items = arg
            return self.resolve(items)[int(self.resolve(index))]
        if key == "Fn::Split":
            sep, text = arg
            return str(self.resolve(text)).split(sep)
        if key == "Fn::Sub":
            text, variables = (arg[0], self.resolve(arg[1])) if isinstance(arg, list) else (arg, {})
            return re.sub(r"\$\{([^}!][^}]*)\}", lambda m: self._sub(m.group(1), variables), str(text))
        if key.startswith("Fn::"):
            raise TemplateError(f"{key} is not supported by the local resolver")
        return {key: self.resolve(arg)}

    def _sub(self, name: str, variables: Mapping[str, Any]) -> str:
        if name in variables:
            return str(variables[name])
        if "." in name:
            lid, attr = name.split(".", 1)
            return self.get_att(lid, attr)
        return self.ref(name)


def generate_secret_string(spec: Mapping[str, Any] | None) -> str:
    """A value shaped like Secrets Manager's ``GenerateSecretString`` would produce."""
    spec = spec or {}
    length = int(spec.get("PasswordLength", 32))
    alphabet = ""
    if not spec.get("ExcludeLowercase"):
        alphabet += string.ascii_lowercase
    if not spec.get("ExcludeUppercase"):
        alphabet += string.ascii_uppercase
    if not spec.get("ExcludeNumbers"):
        alphabet += string.digits
    if not spec.get("ExcludePunctuation"):
        alphabet += "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
    if spec.get("IncludeSpace"):
        alphabet += " "
    excluded = set(str(spec.get("ExcludeCharacters", "")))
    alphabet = "".join(c for c in alphabet if c not in excluded) or string.ascii_letters
    value = "".join(secrets.choice(alphabet) for _ in range(length))
    key = spec.get("GenerateStringKey")
    if key and isinstance(spec.get("SecretStringTemplate"), str):
        document = json.loads(spec["SecretStringTemplate"])
        document[key] = value
        return json.dumps(document)
    return value


def provision(
    template: Mapping[str, Any] | str | Path,
    clients: AwsClients,
    *,
    secret_values: Mapping[str, str] | None = None,
    sender_identity: str | None = None,
    name_prefix: str | None = None,
) -> Provisioned:
    """Create the template's queues, tables, SES configuration sets, sender identity and secrets.

    ``secret_values`` fixes a secret's value by logical id or construct id (else one is generated
    the way the template's ``GenerateSecretString`` describes). ``sender_identity`` is the SES
    identity to verify; by default the ``EMAIL_FROM`` the functions are configured with.
    """
    t = _as_template(template)
    inventory = Inventory.from_template(t)
    names = local_names(t, name_prefix)
    result = Provisioned(inventory=inventory, region=clients.region, account_id=DEFAULT_ACCOUNT)
    _provision_queues(inventory, names, clients, result)
    _provision_tables(inventory, names, clients, result)
    for cs in inventory.configuration_sets.values():
        name = cs.configuration_set_name or names[cs.logical_id]
        _ignore_exists(clients.sesv2.create_configuration_set, ConfigurationSetName=name)
        result.physical[cs.logical_id] = name
        result.attributes[cs.logical_id] = {"Name": name}
    for sec in inventory.secrets.values():
        name = sec.secret_name or names[sec.logical_id]
        value = _secret_value(sec, secret_values)
        arn = _create_secret(clients.secretsmanager, name, value)
        result.physical[sec.logical_id] = arn
        result.attributes[sec.logical_id] = {"Id": arn, "Arn": arn, "Name": name}
    _synthesize_the_rest(t, names, result)
    resolver = Resolver(
        t,
        result.physical,
        result.attributes,
        region=result.region,
        account_id=result.account_id,
        stack_name=inventory.stack_name,
    )
    for lid, fn in inventory.functions.items():
        result.environments[lid] = {k: str(resolver.resolve(v)) for k, v in fn.environment.items()}
    identity = sender_identity or next(
        (env["EMAIL_FROM"] for env in result.environments.values() if env.get("EMAIL_FROM")), None
    )
    if identity:
        _ignore_exists(clients.sesv2.create_email_identity, EmailIdentity=identity)
        result.sender_identity = identity
    return result


def _ignore_exists(call: Any, **kwargs: Any) -> Any:
    try:
        return call(**kwargs)
    except Exception as exc:  # botocore ClientError; matched by code to avoid importing botocore here
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        if code.endswith("AlreadyExistsException") or code in (
            "ResourceInUseException",
            "ResourceExistsException",
        ):
            return None
        raise


def _provision_queues(
    inventory: Inventory, names: Mapping[str, str], clients: AwsClients, out: Provisioned
) -> None:
    sqs = clients.sqs
    for q in inventory.queues.values():
        name = q.queue_name or names[q.logical_id]
        attributes = {
            "VisibilityTimeout": str(q.visibility_timeout_seconds),
            "DelaySeconds": str(q.delay_seconds),
            "MessageRetentionPeriod": str(q.retention_seconds),
            "ReceiveMessageWaitTimeSeconds": str(q.receive_wait_seconds),
        }
        if q.fifo:
            attributes["FifoQueue"] = "true"
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        out.physical[q.logical_id] = url
        out.attributes[q.logical_id] = {"Arn": arn, "QueueUrl": url, "QueueName": name}
        out.account_id = arn.split(":")[4]
    # Redrive policies name other queues' ARNs: set them once every queue exists.
    for q in inventory.queues.values():
        attributes = {}
        if q.redrive_policy is not None:
            attributes["RedrivePolicy"] = json.dumps(
                {
                    "deadLetterTargetArn": out.attributes[q.redrive_policy.dead_letter_queue]["Arn"],
                    "maxReceiveCount": q.redrive_policy.max_receive_count,
                }
            )
        if q.redrive_allow_policy is not None:
            allow: dict[str, Any] = {"redrivePermission": q.redrive_allow_policy.permission}
            if q.redrive_allow_policy.source_queues:
                allow["sourceQueueArns"] = [
                    out.attributes[s]["Arn"] for s in q.redrive_allow_policy.source_queues
                ]
            attributes["RedriveAllowPolicy"] = json.dumps(allow)
        if attributes:
            sqs.set_queue_attributes(QueueUrl=out.physical[q.logical_id], Attributes=attributes)


def _provision_tables(
    inventory: Inventory, names: Mapping[str, str], clients: AwsClients, out: Provisioned
) -> None:
    ddb = clients.dynamodb
    for tbl in inventory.tables.values():
        name = tbl.table_name or names[tbl.logical_id]
        kwargs: dict[str, Any] = {
            "TableName": name,
            "KeySchema": [{"AttributeName": a, "KeyType": k} for a, k in tbl.key_schema],
            "AttributeDefinitions": [
                {"AttributeName": a, "AttributeType": t} for a, t in tbl.attribute_definitions
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if tbl.global_secondary_indexes:
            kwargs["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": g.name,
                    "KeySchema": [{"AttributeName": a, "KeyType": k} for a, k in g.key_schema],
                    "Projection": {"ProjectionType": g.projection_type}
                    | ({"NonKeyAttributes": list(g.non_key_attributes)} if g.non_key_attributes else {}),
                }
                for g in tbl.global_secondary_indexes
            ]
        if tbl.stream_view_type:
            kwargs["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": tbl.stream_view_type}
        _ignore_exists(ddb.create_table, **kwargs)
        # AWS (and dynalite) keep a new table CREATING for a while; moto answers ACTIVE at once
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
        description = ddb.describe_table(TableName=name)["Table"]
        if tbl.ttl_attribute:
            ttl = ddb.describe_time_to_live(TableName=name).get("TimeToLiveDescription", {})
            if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
                ddb.update_time_to_live(
                    TableName=name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": tbl.ttl_attribute},
                )
        out.physical[tbl.logical_id] = name
        out.attributes[tbl.logical_id] = {"Arn": description["TableArn"], "TableName": name}
        if description.get("LatestStreamArn"):
            out.attributes[tbl.logical_id]["StreamArn"] = description["LatestStreamArn"]
        out.account_id = description["TableArn"].split(":")[4]


def _secret_value(spec: SecretSpec, values: Mapping[str, str] | None) -> str:
    for key in (spec.logical_id, spec.name):
        if values and key in values:
            return values[key]
    return spec.secret_string if spec.secret_string is not None else generate_secret_string(spec.generate)


def _create_secret(client: Any, name: str, value: str) -> str:
    try:
        arn: str = client.create_secret(Name=name, SecretString=value)["ARN"]
        return arn
    except Exception as exc:
        if getattr(exc, "response", {}).get("Error", {}).get("Code") != "ResourceExistsException":
            raise
        existing: str = client.describe_secret(SecretId=name)["ARN"]
        return existing


def _synthesize_the_rest(template: Mapping[str, Any], names: Mapping[str, str], out: Provisioned) -> None:
    """Plausible physical values for resources the emulator does not host (functions, topics ...),
    so that references to them still resolve."""
    region, account = out.region, out.account_id
    for lid, r in template["Resources"].items():
        if lid in out.physical:
            continue
        rtype = str(r.get("Type", ""))
        name = names[lid]
        service = rtype.split("::")[1].lower() if rtype.count("::") == 2 else "unknown"
        if rtype == FUNCTION:
            arn = f"arn:aws:lambda:{region}:{account}:function:{name}"
            out.physical[lid], out.attributes[lid] = name, {"Arn": arn}
        elif rtype == "AWS::SNS::Topic":
            arn = f"arn:aws:sns:{region}:{account}:{name}"
            out.physical[lid], out.attributes[lid] = arn, {"TopicArn": arn, "TopicName": name}
        elif rtype == "AWS::Logs::LogGroup":
            arn = f"arn:aws:logs:{region}:{account}:log-group:{name}:*"
            out.physical[lid], out.attributes[lid] = name, {"Arn": arn}
        elif rtype == "AWS::IAM::Role":
            arn = f"arn:aws:iam::{account}:role/{name}"
            out.physical[lid], out.attributes[lid] = name, {"Arn": arn, "RoleId": name}
        else:
            arn = f"arn:aws:{service}:{region}:{account}:{name}"
            out.physical[lid], out.attributes[lid] = name, {"Arn": arn}
