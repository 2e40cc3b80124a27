"""The template's resources created in the emulator (``reminders_ops.provision.provision``) and the
runtime's spec read from the same template (``Inventory``), resolved to the local resources.

What ``template.py`` does not describe and the runtime needs — rule targets' constant ``Input``,
rules without a schedule, targets that are not functions of the stack, the stack's ``Outputs`` — is
read here from the template itself; anything the runtime cannot run lands in ``spec.unwired``
(the runtime adds the event-pattern rules no local source emits events for).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reminders_ops.provision import (
    EVENT_SOURCE_MAPPING,
    RULE,
    AwsClients,
    Inventory,
    Provisioned,
    Resolver,
    TemplateError,
    load_template,
    provision,
    ref_target,
)

from .emulator import Emulator
from .spec import (
    FunctionSpec,
    LocalSpec,
    MappingSpec,
    QueueSpec,
    RouteSpec,
    RuleSpec,
    TargetSpec,
)
from .streams import StreamMappingSpec


def provision_stack(
    template_path: Path, emulator: Emulator, secret_value: str | None = None
) -> tuple[LocalSpec, Provisioned]:
    """Create the stack's resources in the emulator. ``secret_value``: the value of every secret of
    the stack (the dev webhook signing secret locally) instead of a generated one."""
    template = load_template(template_path)
    clients = AwsClients.create(endpoint_url=emulator.endpoint, region_name=emulator.region)
    inventory = Inventory.from_template(template)
    values = {sid: secret_value for sid in inventory.secrets} if secret_value is not None else None
    provisioned = provision(template, clients, secret_values=values)
    return build_spec(template, provisioned), provisioned


def build_spec(template: Mapping[str, Any], p: Provisioned) -> LocalSpec:
    inv = p.inventory
    resources: Mapping[str, Any] = template["Resources"]
    unwired: list[str] = []

    functions = {
        lid: FunctionSpec(
            logical_id=lid,
            name=p.physical[lid],
            handler=f.handler,
            timeout_seconds=float(f.timeout_seconds),
            memory_mb=f.memory_mb,
            environment=dict(p.environments[lid]),
        )
        for lid, f in inv.functions.items()
    }
    queues = {}
    for lid, q in inv.queues.items():
        attrs = p.attributes[lid]
        dlq = q.redrive_policy
        queues[lid] = QueueSpec(
            logical_id=lid,
            name=attrs["QueueName"],
            arn=attrs["Arn"],
            url=attrs["QueueUrl"],
            dlq_arn=p.attributes[dlq.dead_letter_queue]["Arn"] if dlq else None,
            max_receive_count=dlq.max_receive_count if dlq else None,
            visibility_timeout_seconds=q.visibility_timeout_seconds,
        )

    mappings: list[MappingSpec] = []
    stream_mappings: list[StreamMappingSpec] = []
    for es in inv.event_sources:
        if es.table is not None:
            on_failure = es.on_failure_queue
            stream_mappings.append(
                StreamMappingSpec(
                    logical_id=es.logical_id,
                    function_id=es.function,
                    table_name=p.physical[es.table],
                    batch_size=es.batch_size,
                    filters=tuple(dict(f) for f in es.filters),
                    max_retries=es.maximum_retry_attempts if es.maximum_retry_attempts is not None else 10,
                    on_failure_queue_url=p.attributes[on_failure]["QueueUrl"] if on_failure else None,
                    report_batch_item_failures=es.reports_batch_item_failures,
                    enabled=es.enabled,
                )
            )
            continue
        if es.queue is None:
            source = resources[es.logical_id].get("Properties", {}).get("EventSourceArn")
            unwired.append(f"{es.logical_id}: event source {source!r} is not an SQS queue of the stack")
            continue
        mappings.append(
            MappingSpec(
                logical_id=es.logical_id,
                function_id=es.function,
                queue_arn=queues[es.queue].arn,
                batch_size=es.batch_size,
                batching_window_seconds=float(es.batching_window_seconds),
                max_concurrency=es.maximum_concurrency,
                report_batch_item_failures=es.reports_batch_item_failures,
                enabled=es.enabled,
            )
        )
    listed = {es.logical_id for es in inv.event_sources}
    for lid, r in resources.items():
        if r.get("Type") == EVENT_SOURCE_MAPPING and lid not in listed:
            unwired.append(f"{lid}: event source mapping not understood")

    rules: list[RuleSpec] = []
    for lid, r in resources.items():
        if r.get("Type") != RULE:
            continue
        props = r.get("Properties", {})
        name = p.physical.get(lid, lid)
        targets: list[TargetSpec] = []
        for tgt in props.get("Targets", []):
            fid = ref_target(tgt.get("Arn"))
            if fid not in functions:
                unwired.append(f"{lid}: target {tgt.get('Id')} is not a function of the stack")
                continue
            if "InputPath" in tgt or "InputTransformer" in tgt:
                unwired.append(f"{lid}: target {tgt.get('Id')} uses InputPath/InputTransformer")
                continue
            targets.append(TargetSpec(fid, tgt.get("Input") if isinstance(tgt.get("Input"), str) else None))
        schedule = props.get("ScheduleExpression")
        rules.append(
            RuleSpec(
                logical_id=lid,
                name=name,
                arn=f"arn:aws:events:{p.region}:{p.account_id}:rule/{name}",
                schedule=schedule,
                event_pattern=props.get("EventPattern"),
                targets=tuple(targets),
                enabled=str(props.get("State", "ENABLED")) == "ENABLED",
            )
        )

    routes: list[RouteSpec] = []
    for route in inv.routes:
        if route.function is None:
            unwired.append(f"{route.logical_id}: route {route.route_key} has no Lambda proxy integration")
            continue
        routes.append(RouteSpec(route.route_key, route.function, route.authorization_type))

    return LocalSpec(
        account_id=p.account_id,
        region=p.region,
        functions=functions,
        queues=queues,
        mappings=mappings,
        rules=rules,
        routes=routes,
        table_names=[p.physical[t] for t in inv.tables],
        unwired=unwired,
        outputs=resolve_outputs(template, p),
        stream_mappings=stream_mappings,
    )


def resolve_outputs(template: Mapping[str, Any], p: Provisioned) -> dict[str, str]:
    """The stack's Outputs as they would read for the local resources (what the CLI resolves names
    from, locally as against a deployed stack)."""
    resolver = Resolver(
        template,
        p.physical,
        p.attributes,
        region=p.region,
        account_id=p.account_id,
        stack_name=p.inventory.stack_name,
    )
    out: dict[str, str] = {}
    for name, o in (template.get("Outputs") or {}).items():
        try:
            out[name] = str(resolver.resolve(o.get("Value")))
        except TemplateError:
            continue
    return out
