"""Template assertions: every property the foundation issue fixes, read from the synthesized stack."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from .conftest import Synthesized

FUNCTIONS = {
    "ApiFunction": ("reminders.handlers.api.handler", 10),
    "PublicFunction": ("reminders.handlers.public.handler", 10),  # issue 24: the public routes
    "DispatcherFunction": ("reminders.handlers.dispatcher.tick_handler", 30),
    "DispatchWorkerFunction": ("reminders.handlers.dispatcher.shard_handler", 60),
    # The delivery consumers' timeout comes from the one formula of the time budgets (issue 9).
    "EmailDeliveryFunction": ("reminders.handlers.delivery.email_handler", 60),
    "WebhookDeliveryFunction": ("reminders.handlers.delivery.webhook_handler", 60),
    "SesEventsFunction": ("reminders.handlers.ses_events.handler", 10),
    "ReceiptsFunction": ("reminders.handlers.receipts.handler", 10),  # issue 19: the table stream
    "OpEventsFunction": ("reminders.handlers.opevents.handler", 10),  # issue 16: the table stream
}
CHANNEL_QUEUES = ("Email", "Webhook")
ALL_QUEUES = ("Email", "Webhook", "Dispatch")
FOURTEEN_DAYS_SECONDS = 14 * 24 * 3600
SHARED_ENVIRONMENT = {
    "TABLE_NAME",
    "EMAIL_QUEUE_URL",
    "WEBHOOK_QUEUE_URL",
    "EMAIL_DLQ_URL",
    "WEBHOOK_DLQ_URL",
    "DISPATCH_QUEUE_URL",
    "DUE_SHARDS",
    "MAX_RECEIVE_COUNT",
    "WEBHOOK_SECRET_ARN",
    "ENDPOINT_KEY_ID",
    "BOOTSTRAP_PRINCIPAL",
    "SES_CONFIGURATION_SET",
    "EMAIL_FROM",
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
    "POWERTOOLS_TRACER_CAPTURE_ERROR",
    "DELIVERY_MAX_CONCURRENCY",
    "RETENTION_DAYS",
    "UNSUBSCRIBE_SECRET_ARN",
    "ADDRESS_HASH_SECRET_ARN",
}


def props(synthesized: Synthesized, logical_id: str) -> dict[str, Any]:
    properties: dict[str, Any] = synthesized.resources[logical_id]["Properties"]
    return properties


def ref(logical_id: str) -> dict[str, str]:
    return {"Ref": logical_id}


def arn_of(logical_id: str) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def policy_statements(synthesized: Synthesized, function_id: str) -> list[dict[str, Any]]:
    """All statements of the identity policies attached to the function's role."""
    role = props(synthesized, function_id)["Role"]["Fn::GetAtt"][0]
    statements: list[dict[str, Any]] = []
    for resource in synthesized.resources.values():
        if resource["Type"] == "AWS::IAM::Policy" and ref(role) in resource["Properties"]["Roles"]:
            statements += resource["Properties"]["PolicyDocument"]["Statement"]
    return statements


def allowed(statements: list[dict[str, Any]], action: str, resource: Any) -> bool:
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        resources = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
        if s["Effect"] == "Allow" and action in actions and resource in resources:
            return True
    return False


# -- queues -----------------------------------------------------------------------------------


def test_ten_standard_queues_with_sqs_managed_encryption_and_14_days_retention(template: Any) -> None:
    """Three queue/DLQ pairs, the on-failure DLQs of the receipts (issue 19) and operational
    events (issue 16) stream mappings, and the SES events rule's DLQ and function's on-failure
    destination (issue 24 item 6)."""
    template.resource_count_is("AWS::SQS::Queue", 10)
    template.all_resources_properties(
        "AWS::SQS::Queue",
        {
            "SqsManagedSseEnabled": True,
            "MessageRetentionPeriod": FOURTEEN_DAYS_SECONDS,
            "FifoQueue": Match.absent(),
        },
    )


def test_every_queue_denies_requests_without_ssl(template: Any, logical_ids: dict[str, str]) -> None:
    for name in ALL_QUEUES:
        for queue in (f"{name}Queue", f"{name}DLQ"):
            template.has_resource_properties(
                "AWS::SQS::QueuePolicy",
                {
                    "Queues": [ref(logical_ids[queue])],
                    "PolicyDocument": {
                        "Statement": Match.array_with(
                            [
                                Match.object_like(
                                    {
                                        "Effect": "Deny",
                                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                    }
                                )
                            ]
                        )
                    },
                },
            )


@pytest.mark.parametrize(("name", "max_receive_count"), [("Email", 20), ("Webhook", 20), ("Dispatch", 5)])
def test_each_queue_redrives_to_its_own_dlq_as_a_backstop(
    template: Any, logical_ids: dict[str, str], name: str, max_receive_count: int
) -> None:
    template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "QueueName": f"RemindersStack-{name}Queue",
            "RedrivePolicy": {
                "deadLetterTargetArn": arn_of(logical_ids[f"{name}DLQ"]),
                "maxReceiveCount": max_receive_count,
            },
        },
    )


def test_channel_receive_budget_matches_the_context_and_the_functions_environment(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    budget = int(synthesized.context.get("reminders:deliveryMaxReceiveCount", 20))
    for name in CHANNEL_QUEUES:
        assert props(synthesized, logical_ids[f"{name}Queue"])["RedrivePolicy"]["maxReceiveCount"] == budget
    for function in FUNCTIONS:
        env = props(synthesized, logical_ids[function])["Environment"]["Variables"]
        assert env["MAX_RECEIVE_COUNT"] == str(budget)


@pytest.mark.parametrize("name", ALL_QUEUES)
def test_each_dlq_allows_redrive_only_from_its_source_queue(template: Any, name: str) -> None:
    template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "QueueName": f"RemindersStack-{name}DLQ",
            "MessageRetentionPeriod": FOURTEEN_DAYS_SECONDS,
            "RedrivePolicy": Match.absent(),
            "RedriveAllowPolicy": {
                "redrivePermission": "byQueue",
                "sourceQueueArns": [f"arn:aws:sqs:us-east-1:111111111111:RemindersStack-{name}Queue"],
            },
        },
    )


def test_visibility_timeout_is_six_times_the_consuming_function_timeout(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    mappings = [
        r
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping" and "StartingPosition" not in r["Properties"]
    ]
    assert len(mappings) == 3  # the SQS ones (the receipts mapping reads the table's stream)
    for mapping in mappings:
        function = mapping["Properties"]["FunctionName"]["Ref"]
        queue = mapping["Properties"]["EventSourceArn"]["Fn::GetAtt"][0]
        timeout = props(synthesized, function)["Timeout"]
        assert props(synthesized, queue)["VisibilityTimeout"] == 6 * timeout
    consumed = {m["Properties"]["EventSourceArn"]["Fn::GetAtt"][0] for m in mappings}
    assert consumed == {logical_ids[f"{n}Queue"] for n in ALL_QUEUES}


def test_delivery_timeout_and_visibility_come_from_the_timing_formula(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    from reminders.domain.timing import DEFAULT_TIMING

    for name in CHANNEL_QUEUES:
        fn = props(synthesized, logical_ids[f"{name}DeliveryFunction"])
        queue = props(synthesized, logical_ids[f"{name}Queue"])
        assert fn["Timeout"] == DEFAULT_TIMING.function_timeout_seconds
        assert queue["VisibilityTimeout"] == DEFAULT_TIMING.visibility_timeout_seconds
        assert DEFAULT_TIMING.lease_seconds < queue["VisibilityTimeout"]


# -- table ------------------------------------------------------------------------------------


def test_table_is_on_demand_with_pitr_ttl_and_retained(template: Any) -> None:
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "KeySchema": [
                        {"AttributeName": "pk", "KeyType": "HASH"},
                        {"AttributeName": "sk", "KeyType": "RANGE"},
                    ],
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    "TimeToLiveSpecification": {"AttributeName": "xp", "Enabled": True},
                }
            ),
        },
    )


def test_due_index_is_sharded_and_projects_only_what_the_dispatcher_reads(template: Any) -> None:
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "AttributeDefinitions": Match.array_with(
                [
                    {"AttributeName": "gpk", "AttributeType": "S"},
                    {"AttributeName": "gsk", "AttributeType": "S"},
                ]
            ),
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "due",
                    "KeySchema": [
                        {"AttributeName": "gpk", "KeyType": "HASH"},
                        {"AttributeName": "gsk", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["rid", "v", "chs", "w"]},
                },
                {
                    "IndexName": "attention",
                    "KeySchema": [
                        {"AttributeName": "nx", "KeyType": "HASH"},
                        {"AttributeName": "nxs", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                },
            ],
        },
    )


def test_attention_index_is_sparse_keys_only_on_attributes_the_codec_derives(template: Any) -> None:
    """The listing's index: keys only (minimal projection), on ``nx``/``nxs``, which the codec writes
    only while a delivery needs attention."""
    from reminders.adapters.codec import ATTENTION_PK, ATTENTION_SK

    assert (ATTENTION_PK, ATTENTION_SK) == ("nx", "nxs")
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "AttributeDefinitions": Match.array_with(
                [
                    {"AttributeName": "nx", "AttributeType": "S"},
                    {"AttributeName": "nxs", "AttributeType": "S"},
                ]
            )
        },
    )


# -- functions --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_runtime_architecture_handler_timeout_memory(
    template: Any, logical_ids: dict[str, str], name: str
) -> None:
    handler, timeout = FUNCTIONS[name]
    assert name in logical_ids
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": handler,
            "Runtime": "python3.13",
            "Architectures": ["arm64"],
            "Timeout": timeout,
            # issue 32: the delivery consumers at the size the bench's memory curve chose
            "MemorySize": 192 if "DeliveryFunction" in name else 256,
        },
    )


def test_exactly_the_functions_listed(template: Any) -> None:
    template.resource_count_is("AWS::Lambda::Function", len(FUNCTIONS))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_gets_the_full_environment_resolved_from_resources(
    synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    env = props(synthesized, logical_ids[name])["Environment"]["Variables"]
    extra = {"CHANNEL"} if "Delivery" in name else set()
    if name == "EmailDeliveryFunction":
        extra.add("UNSUBSCRIBE_BASE_URL")  # the links in every email point at the API (issue 19)
    assert set(env) == SHARED_ENVIRONMENT | extra
    assert env["TABLE_NAME"] == ref(logical_ids["RemindersTable"])
    for queue in ALL_QUEUES:
        assert env[f"{queue.upper()}_QUEUE_URL"] == ref(logical_ids[f"{queue}Queue"])
    for channel in CHANNEL_QUEUES:
        assert env[f"{channel.upper()}_DLQ_URL"] == ref(logical_ids[f"{channel}DLQ"])
    assert env["WEBHOOK_SECRET_ARN"] == ref(logical_ids["SigningSecret"])
    assert env["SES_CONFIGURATION_SET"] == ref(logical_ids["ConfigurationSet"])
    assert env["DUE_SHARDS"] == str(synthesized.context["reminders:dueShards"])
    assert env["EMAIL_FROM"] == synthesized.context["reminders:emailFrom"]
    assert env["POWERTOOLS_SERVICE_NAME"] == "reminders"
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == "Reminders"
    assert env["POWERTOOLS_LOG_LEVEL"] == "INFO"
    if extra:
        assert env["CHANNEL"] == ("email" if name.startswith("Email") else "webhook")


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_use_the_regional_powertools_layer_and_the_deps_layer(
    synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    powertools, deps = props(synthesized, logical_ids[name])["Layers"]
    assert powertools == {
        "Fn::Join": [
            "",
            [
                "arn:aws:lambda:",
                {"Ref": "AWS::Region"},
                ":017000801446:layer:AWSLambdaPowertoolsPythonV3-python313-arm64:40",
            ],
        ]
    }
    layer = props(synthesized, deps["Ref"])
    assert layer["CompatibleRuntimes"] == ["python3.13"]
    assert layer["CompatibleArchitectures"] == ["arm64"]


def test_code_asset_is_the_functions_dir_without_the_ops_tools(synthesized: Synthesized) -> None:
    paths = {
        r["Metadata"]["aws:asset:path"]
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Lambda::Function"
    }
    assert len(paths) == 1, "all functions share one code asset"
    bundle = synthesized.outdir / paths.pop()
    assert (bundle / "reminders" / "handlers" / "api.py").is_file()
    assert not (bundle / "reminders_ops").exists()
    assert not list(bundle.rglob("__pycache__"))
    assert not list(bundle.glob("*.egg-info"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_function_logs_to_its_own_group_kept_one_month(
    template: Any, synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    group = props(synthesized, logical_ids[name])["LoggingConfig"]["LogGroup"]["Ref"]
    assert props(synthesized, group)["RetentionInDays"] == 30
    role = props(synthesized, logical_ids[name])["Role"]["Fn::GetAtt"][0]
    assert "ManagedPolicyArns" not in props(synthesized, role), "no AWS managed policy on execution roles"
    statements = policy_statements(synthesized, logical_ids[name])
    assert allowed(statements, "logs:PutLogEvents", arn_of(group))


def test_dispatch_worker_consumes_one_shard_message_at_a_time_up_to_one_per_shard(
    template: Any, synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    shards = max(2, int(synthesized.context["reminders:dueShards"]))
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "FunctionName": ref(logical_ids["DispatchWorkerFunction"]),
            "EventSourceArn": arn_of(logical_ids["DispatchQueue"]),
            "BatchSize": 1,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "ScalingConfig": {"MaximumConcurrency": shards},
        },
    )


@pytest.mark.parametrize("channel", CHANNEL_QUEUES)
def test_delivery_consumers_report_partial_batch_failures(
    template: Any, synthesized: Synthesized, logical_ids: dict[str, str], channel: str
) -> None:
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "FunctionName": ref(logical_ids[f"{channel}DeliveryFunction"]),
            "EventSourceArn": arn_of(logical_ids[f"{channel}Queue"]),
            "BatchSize": synthesized.context["reminders:deliveryBatchSize"],
            "MaximumBatchingWindowInSeconds": 0,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "ScalingConfig": {"MaximumConcurrency": synthesized.context["reminders:deliveryMaxConcurrency"]},
        },
    )


def test_tick_rule_runs_the_dispatcher_every_minute_without_async_retries(
    template: Any, logical_ids: dict[str, str]
) -> None:
    template.has_resource_properties(
        "AWS::Events::Rule",
        {
            "ScheduleExpression": "rate(1 minute)",
            "State": "ENABLED",
            "Targets": [Match.object_like({"Arn": arn_of(logical_ids["DispatcherFunction"])})],
        },
    )
    template.has_resource_properties(
        "AWS::Lambda::Permission",
        {
            "Action": "lambda:InvokeFunction",
            "FunctionName": arn_of(logical_ids["DispatcherFunction"]),
            "Principal": "events.amazonaws.com",
        },
    )
    template.has_resource_properties(
        "AWS::Lambda::EventInvokeConfig",
        {"FunctionName": ref(logical_ids["DispatcherFunction"]), "MaximumRetryAttempts": 0},
    )


# -- grants -----------------------------------------------------------------------------------


def test_every_function_reads_and_writes_the_table_and_its_index(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    """Every function but PublicFunction, which reaches only its routes' partitions (issue 24 item 8:
    tests/infra/test_infra_public_function.py)."""
    table = logical_ids["RemindersTable"]
    index = {"Fn::Join": ["", [arn_of(table), "/index/*"]]}
    for name in set(FUNCTIONS) - {"PublicFunction"}:
        statements = policy_statements(synthesized, logical_ids[name])
        for action in ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"):
            assert allowed(statements, action, arn_of(table)), (name, action)
        assert allowed(statements, "dynamodb:Query", index), name


SENDS = {
    "ApiFunction": {"EmailQueue", "WebhookQueue"},
    "PublicFunction": set(),
    "DispatcherFunction": {"DispatchQueue"},
    "DispatchWorkerFunction": {"EmailQueue", "WebhookQueue", "DispatchQueue"},
    "EmailDeliveryFunction": {"EmailQueue", "EmailDLQ"},
    "WebhookDeliveryFunction": {"WebhookQueue", "WebhookDLQ"},
    "SesEventsFunction": set(),
    "ReceiptsFunction": set(),
    "OpEventsFunction": {"WebhookQueue"},  # an event reminder is due now: handed to SQS at once
}
CONSUMES = {
    "DispatchWorkerFunction": "DispatchQueue",
    "EmailDeliveryFunction": "EmailQueue",
    "WebhookDeliveryFunction": "WebhookQueue",
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_queue_grants_are_exactly_what_each_function_needs(
    synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    statements = policy_statements(synthesized, logical_ids[name])
    queues = [f"{q}{kind}" for q in ALL_QUEUES for kind in ("Queue", "DLQ")]
    can_send = {q for q in queues if allowed(statements, "sqs:SendMessage", arn_of(logical_ids[q]))}
    assert can_send == SENDS[name]
    can_consume = {
        q
        for q in queues
        if allowed(statements, "sqs:DeleteMessage", arn_of(logical_ids[q]))
        and allowed(statements, "sqs:ChangeMessageVisibility", arn_of(logical_ids[q]))
    }
    assert can_consume == ({CONSUMES[name]} if name in CONSUMES else set())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_only_the_webhook_consumer_and_the_public_function_read_the_signing_secret(
    synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    """The webhook consumer signs with it; the public function verifies receivers' receipts with it
    (issue 19; issue 24 item 8 moved the route out of the API function)."""
    statements = policy_statements(synthesized, logical_ids[name])
    can_read = allowed(statements, "secretsmanager:GetSecretValue", ref(logical_ids["SigningSecret"]))
    assert can_read == (name in ("WebhookDeliveryFunction", "PublicFunction"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_only_the_email_consumer_sends_email_from_the_sender_through_the_configuration_set(
    synthesized: Synthesized, logical_ids: dict[str, str], name: str
) -> None:
    statements = policy_statements(synthesized, logical_ids[name])
    ses_statements = [s for s in statements if "ses:SendEmail" in json.dumps(s["Action"])]
    if name != "EmailDeliveryFunction":
        assert ses_statements == []
        return
    sender = synthesized.context["reminders:emailFrom"]
    domain = sender.rsplit("@", 1)[1]
    resources = json.dumps([s["Resource"] for s in ses_statements])
    assert f"identity/{sender}" in resources
    assert f"identity/{domain}" in resources
    assert "configuration-set/" in resources
    assert "*" not in resources


# -- email, webhook secret --------------------------------------------------------------------


def test_ses_configuration_set_sends_delivery_events_to_the_default_bus(
    template: Any, logical_ids: dict[str, str]
) -> None:
    template.resource_count_is("AWS::SES::ConfigurationSet", 1)
    template.has_resource_properties(
        "AWS::SES::ConfigurationSetEventDestination",
        {
            "ConfigurationSetName": ref(logical_ids["ConfigurationSet"]),
            "EventDestination": {
                "Enabled": True,
                "EventBridgeDestination": {
                    "EventBusArn": "arn:aws:events:us-east-1:111111111111:event-bus/default"
                },
                "MatchingEventTypes": Match.array_with(["send", "delivery", "bounce", "complaint", "reject"]),
            },
        },
    )


def test_webhook_signing_secret_is_generated_and_retained(template: Any) -> None:
    template.has_resource(
        "AWS::SecretsManager::Secret",
        {
            "DeletionPolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "GenerateSecretString": Match.object_like(
                        {"ExcludePunctuation": True, "IncludeSpace": False, "PasswordLength": 48}
                    ),
                    "SecretString": Match.absent(),
                }
            ),
        },
    )


# -- HTTP API ---------------------------------------------------------------------------------

IAM_ROUTES = [
    "POST /reminders",
    "GET /reminders",
    "GET /reminders/{id}",
    "PATCH /reminders/{id}",
    "DELETE /reminders/{id}",
    "POST /endpoints",
    "GET /endpoints/{id}",
    "PATCH /endpoints/{id}",
    "DELETE /endpoints/{id}",
    "POST /endpoints/{id}/rotate-secret",
    "POST /endpoints/{id}/enable",
    "POST /endpoints/{id}/disable",
    "GET /suppressions",
    "DELETE /suppressions/{address_hash}",
    "PUT /accounts/{account_id}/event-endpoint",
    "GET /accounts/{account_id}/event-endpoint",
    "DELETE /accounts/{account_id}/event-endpoint",
    "GET /templates/{template_id}/versions",
    "PUT /templates/{template_id}/versions/{version}",
    "GET /templates/{template_id}/versions/{version}",
    "POST /templates/{template_id}/versions/{version}/retire",
    "POST /templates/{template_id}/versions/{version}/preview",
]
PUBLIC_ROUTES = ["GET /health", "GET /openapi.json", "POST /unsubscribe/{token}", "POST /inbound/receiver"]


def test_http_api_v2_with_payload_format_2(template: Any, logical_ids: dict[str, str]) -> None:
    template.has_resource_properties("AWS::ApiGatewayV2::Api", {"ProtocolType": "HTTP"})
    template.resource_count_is("AWS::ApiGatewayV2::Integration", 2)  # ApiFunction, PublicFunction
    for function in ("ApiFunction", "PublicFunction"):
        template.has_resource_properties(
            "AWS::ApiGatewayV2::Integration",
            {
                "IntegrationType": "AWS_PROXY",
                "IntegrationUri": arn_of(logical_ids[function]),
                "PayloadFormatVersion": "2.0",
            },
        )


def test_reminder_routes_require_iam_and_health_and_openapi_are_public(template: Any) -> None:
    template.resource_count_is("AWS::ApiGatewayV2::Route", len(IAM_ROUTES) + len(PUBLIC_ROUTES))
    for route in IAM_ROUTES:
        template.has_resource_properties(
            "AWS::ApiGatewayV2::Route", {"RouteKey": route, "AuthorizationType": "AWS_IAM"}
        )
    for route in PUBLIC_ROUTES:
        template.has_resource_properties(
            "AWS::ApiGatewayV2::Route", {"RouteKey": route, "AuthorizationType": "NONE"}
        )


def test_default_stage_writes_json_access_logs(synthesized: Synthesized, template: Any) -> None:
    template.has_resource_properties(
        "AWS::ApiGatewayV2::Stage",
        {
            "StageName": "$default",
            "AutoDeploy": True,
            "AccessLogSettings": {"DestinationArn": Match.any_value(), "Format": Match.any_value()},
        },
    )
    stage = next(r for r in synthesized.resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage")
    log_format = json.loads(stage["Properties"]["AccessLogSettings"]["Format"])
    assert log_format["requestId"] == "$context.requestId"
    group = stage["Properties"]["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]
    assert synthesized.resources[group]["Properties"]["RetentionInDays"] == 30


# -- observability ----------------------------------------------------------------------------


def alarms(synthesized: Synthesized) -> list[dict[str, Any]]:
    return [r["Properties"] for r in synthesized.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]


def metric_alarm(synthesized: Synthesized, metric: str, dimension_ref: str | None = None) -> dict[str, Any]:
    found = [
        a
        for a in alarms(synthesized)
        if a.get("MetricName") == metric
        and (dimension_ref is None or f'"{dimension_ref}"' in json.dumps(a.get("Dimensions", [])))
    ]
    assert len(found) == 1, (metric, dimension_ref, len(found))
    return found[0]


@pytest.mark.parametrize("queue", ALL_QUEUES)
def test_oldest_message_age_alarm_per_work_queue_against_the_slo(
    synthesized: Synthesized, logical_ids: dict[str, str], queue: str
) -> None:
    alarm = metric_alarm(synthesized, "ApproximateAgeOfOldestMessage", logical_ids[f"{queue}Queue"])
    assert alarm["Threshold"] == synthesized.context["reminders:oldestMessageSloSeconds"]
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["Statistic"] == "Maximum"


@pytest.mark.parametrize("queue", ALL_QUEUES)
def test_any_message_in_a_dlq_alarms(
    synthesized: Synthesized, logical_ids: dict[str, str], queue: str
) -> None:
    alarm = metric_alarm(synthesized, "ApproximateNumberOfMessagesVisible", logical_ids[f"{queue}DLQ"])
    assert alarm["Threshold"] == 0
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"


@pytest.mark.parametrize("name", ["DispatcherFunction", "DispatchWorkerFunction", "SesEventsFunction"])
def test_dispatcher_errors_alarm(synthesized: Synthesized, logical_ids: dict[str, str], name: str) -> None:
    alarm = metric_alarm(synthesized, "Errors", logical_ids[name])
    assert (alarm["Namespace"], alarm["Threshold"], alarm["Statistic"]) == ("AWS/Lambda", 0, "Sum")


def test_eligible_but_not_enqueued_alarm_on_the_oldest_due_age(synthesized: Synthesized) -> None:
    alarm = metric_alarm(synthesized, "oldest_due_age_seconds")
    assert alarm["Namespace"] == "Reminders"
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "reminders"}]
    assert alarm["Statistic"] == "Maximum"
    assert alarm["Threshold"] == synthesized.context["reminders:oldestMessageSloSeconds"]


def test_configuration_hold_alarm_counts_every_channel(synthesized: Synthesized) -> None:
    """The counter may carry a channel dimension: the alarm sums the service-only and per-channel
    series, since CloudWatch matches dimension sets exactly."""
    (alarm,) = [a for a in alarms(synthesized) if "configuration_hold" in json.dumps(a.get("Metrics", []))]
    assert alarm["Threshold"] == 0
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    queries = alarm["Metrics"]
    (expression,) = [q["Expression"] for q in queries if "Expression" in q]
    dimension_sets = []
    for query in queries:
        if "MetricStat" in query:
            stat = query["MetricStat"]
            assert stat["Metric"]["Namespace"] == "Reminders"
            assert stat["Metric"]["MetricName"] == "configuration_hold"
            assert stat["Stat"] == "Sum"
            assert query["Id"] in expression and query["ReturnData"] is False
            dimension_sets.append({d["Name"]: d["Value"] for d in stat["Metric"]["Dimensions"]})
    assert sorted(dimension_sets, key=len) == [
        {"service": "reminders"},
        {"service": "reminders", "channel": "email"},
        {"service": "reminders", "channel": "webhook"},
    ]


def test_every_alarm_notifies_the_alarm_topic(synthesized: Synthesized, logical_ids: dict[str, str]) -> None:
    topic = ref(logical_ids["AlarmTopic"])
    found = alarms(synthesized)
    # queue ages (3), DLQ depths (3 + the receipts and events DLQs), function errors (3 +
    # ReceiptsFunction + OpEventsFunction), configuration hold + oldest due age + bad rows (3), an
    # endpoint held past its SLO (1, issue 16), the SES events' rule DLQ and on-failure queue (2,
    # issue 24), PublicFunction's errors (1, issue 24)
    assert len(found) == 3 + 5 + 5 + 3 + 1 + 2 + 1
    for alarm in found:
        assert alarm.get("MetricName") or alarm.get("Metrics"), alarm
        assert alarm["AlarmActions"] == [topic]
        assert alarm["OKActions"] == [topic]
        assert alarm["TreatMissingData"] == "notBreaching"


def test_alarm_topic_enforces_ssl_and_lets_cloudwatch_publish(
    template: Any, logical_ids: dict[str, str]
) -> None:
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "Topics": [ref(logical_ids["AlarmTopic"])],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
                        ),
                        Match.object_like(
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "cloudwatch.amazonaws.com"},
                                "Action": "sns:Publish",
                            }
                        ),
                    ]
                )
            },
        },
    )


def test_dashboard_shows_queues_outcomes_lateness_and_lambda_health(synthesized: Synthesized) -> None:
    (body,) = [
        json.dumps(r["Properties"]["DashboardBody"])
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::CloudWatch::Dashboard"
    ]
    for needle in (
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "delivered",
        "retry_scheduled",
        "dead_lettered",
        "duplicate_suppressed",
        "stale_skipped",
        "lease_expired",
        "SEARCH(",
        "schedule_to_send_lateness_seconds",
        '\\"stat\\":\\"p50\\"',
        '\\"stat\\":\\"p99\\"',
        "oldest_due_age_seconds",
        "configuration_hold",
        "Errors",
        "Duration",
        "Throttles",
    ):
        assert needle in body, needle


def test_outputs_name_the_api_table_queues_and_dlqs(template: Any) -> None:
    for output in ("ApiUrl", "TableName"):
        template.has_output(output, {})
    for queue in ALL_QUEUES:
        template.has_output(f"{queue}QueueUrl", {})
        template.has_output(f"{queue}DLQUrl", {})


def test_ses_send_events_reach_the_reconciler(template: Any, logical_ids: dict[str, str]) -> None:
    """SES sending events (default bus) of Send/Delivery, and the feedback of Bounce/Complaint/Reject
    (issue 19: suppression and outcome annotations), go to the reconciliation function."""
    template.has_resource_properties(
        "AWS::Events::Rule",
        {
            "EventPattern": {
                "source": ["aws.ses"],
                "detail-type": [
                    "Email Sent",
                    "Email Delivered",
                    "Email Bounced",
                    "Email Complaint Received",
                    "Email Rejected",
                ],
            },
            "Targets": [Match.object_like({"Arn": arn_of(logical_ids["SesEventsFunction"])})],
        },
    )


def test_a_row_the_dispatcher_or_watchdog_cannot_read_alarms(synthesized: Synthesized) -> None:
    alarm = metric_alarm(synthesized, "bad_row")
    assert alarm["Namespace"] == "Reminders"
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "reminders"}]
    assert alarm["Statistic"] == "Sum"
    assert alarm["Threshold"] == 0 and alarm["ComparisonOperator"] == "GreaterThanThreshold"


def test_every_route_is_throttled_and_health_and_openapi_tightly(synthesized: Synthesized) -> None:
    from infra.settings import Settings

    defaults = Settings(account="", region="")
    ((stage_id, stage),) = [
        (lid, r) for lid, r in synthesized.resources.items() if r["Type"] == "AWS::ApiGatewayV2::Stage"
    ]
    assert stage["Properties"]["DefaultRouteSettings"] == {
        "ThrottlingBurstLimit": defaults.api_burst,
        "ThrottlingRateLimit": defaults.api_rate_per_second,
    }
    tight = {
        "ThrottlingBurstLimit": defaults.public_route_burst,
        "ThrottlingRateLimit": defaults.public_route_rate_per_second,
    }
    # Receipts and unsubscribes carry tenants' traffic: their own, larger limits (issue 24 item 7).
    assert stage["Properties"]["RouteSettings"] == {
        "GET /health": tight,
        "GET /openapi.json": tight,
        "POST /inbound/receiver": {
            "ThrottlingBurstLimit": defaults.receipts_burst,
            "ThrottlingRateLimit": defaults.receipts_rate_per_second,
        },
        "POST /unsubscribe/{token}": {
            "ThrottlingBurstLimit": defaults.unsubscribe_burst,
            "ThrottlingRateLimit": defaults.unsubscribe_rate_per_second,
        },
    }
    assert defaults.public_route_rate_per_second < defaults.api_rate_per_second
    # RouteSettings name routes by key: CloudFormation must create every route before the stage.
    routes = {lid for lid, r in synthesized.resources.items() if r["Type"] == "AWS::ApiGatewayV2::Route"}
    assert routes <= set(stage.get("DependsOn", [])), stage_id


def test_only_the_public_function_reserves_concurrency_by_default(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    """Issue 24 item 7: the public routes' function (a flood of them must not take the account's
    concurrency from the consumers); no other."""
    reserved = {
        lid: r["Properties"].get("ReservedConcurrentExecutions")
        for lid, r in synthesized.resources.items()
        if r["Type"] == "AWS::Lambda::Function"
    }
    assert reserved.pop(logical_ids["PublicFunction"]) == 50
    assert reserved and set(reserved.values()) == {None}


def test_route_limits_and_api_reserved_concurrency_come_from_context(tmp_path: Any) -> None:
    from infra.app import build_app

    from .conftest import STACK, cdk_json_context

    context = {
        **cdk_json_context(),
        "reminders:apiReservedConcurrency": "50",
        "reminders:publicRouteRatePerSecond": "2",
        "reminders:publicRouteBurst": "3",
        "reminders:apiRatePerSecond": "40",
        "reminders:apiBurst": "80",
        "reminders:receiptsRatePerSecond": "30",
        "reminders:receiptsBurst": "60",
        "reminders:unsubscribeRatePerSecond": "7",
        "reminders:unsubscribeBurst": "9",
        "reminders:publicReservedConcurrency": "0",
    }
    app, _ = build_app(context, str(tmp_path), nag=False)
    app.synth()
    resources = json.loads((tmp_path / f"{STACK}.template.json").read_text())["Resources"]
    reserved = {
        r["Metadata"]["aws:cdk:path"].split("/")[-2]: r["Properties"].get("ReservedConcurrentExecutions")
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function"
    }
    assert reserved.pop("ApiFunction") == 50
    assert set(reserved.values()) == {None}  # PublicFunction's reservation off with 0 (issue 24)
    (stage,) = [r for r in resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage"]
    assert stage["Properties"]["DefaultRouteSettings"] == {
        "ThrottlingBurstLimit": 80,
        "ThrottlingRateLimit": 40,
    }
    assert stage["Properties"]["RouteSettings"]["GET /health"] == {
        "ThrottlingBurstLimit": 3,
        "ThrottlingRateLimit": 2,
    }
    assert stage["Properties"]["RouteSettings"]["POST /inbound/receiver"] == {
        "ThrottlingBurstLimit": 60,
        "ThrottlingRateLimit": 30,
    }
    assert stage["Properties"]["RouteSettings"]["POST /unsubscribe/{token}"] == {
        "ThrottlingBurstLimit": 9,
        "ThrottlingRateLimit": 7,
    }


def test_only_the_email_consumer_and_the_public_function_read_the_unsubscribe_secret(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    """Issue 19: the HMAC key of the List-Unsubscribe links is its own secret, read by the function
    that signs (email consumer) and the one that verifies (the public function), by no other."""
    secret = logical_ids["UnsubscribeSecret"]
    readers = set()
    for r in synthesized.resources.values():
        if r["Type"] != "AWS::IAM::Policy":
            continue
        for st in r["Properties"]["PolicyDocument"]["Statement"]:
            if "secretsmanager:GetSecretValue" in st["Action"] and st["Resource"] == ref(secret):
                readers |= {role["Ref"] for role in r["Properties"]["Roles"]}
    assert readers == {
        logical_ids["EmailDeliveryFunctionRole"],
        logical_ids["PublicFunctionRole"],
    }


def test_receipts_follow_from_the_table_stream_filtered_with_their_own_dlq_and_alarms(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    """Issue 19: the API's conditional put of a receipt is the durable first step; the table's stream
    (new images) carries it to ReceiptsFunction, filtered to new RCPT# items, bounded retries, bisect,
    partial batch failures, an on-failure SQS DLQ that is alarmed, and a public, throttled route."""
    table = props(synthesized, logical_ids["RemindersTable"])
    assert table["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    (m,) = [
        r["Properties"]
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and "StartingPosition" in r["Properties"]
        and r["Properties"]["FunctionName"] == ref(logical_ids["ReceiptsFunction"])
    ]
    assert m["EventSourceArn"] == {"Fn::GetAtt": [logical_ids["RemindersTable"], "StreamArn"]}
    assert m["MaximumRetryAttempts"] == 10 and m["BisectBatchOnFunctionError"] is True
    assert m["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert m["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": [logical_ids["ReceiptsDLQ"], "Arn"]
    }
    (pattern,) = [json.loads(f["Pattern"]) for f in m["FilterCriteria"]["Filters"]]
    assert pattern == {"eventName": ["INSERT"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "RCPT#"}]}}}}
    alarms = [
        r["Properties"] for r in synthesized.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"
    ]
    watched = {
        d["Value"].get("Fn::GetAtt", [None])[0]
        for a in alarms
        for d in a.get("Dimensions", [])
        if isinstance(d["Value"], dict)
    }
    assert logical_ids["ReceiptsDLQ"] in watched
    stage = next(r for r in synthesized.resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage")
    assert "POST /inbound/receiver" in stage["Properties"]["RouteSettings"]


def test_an_endpoint_held_longer_than_its_slo_alarms(synthesized: Synthesized) -> None:
    """Issue 16: every failed probe reports how long its endpoint has been held."""
    alarm = metric_alarm(synthesized, "endpoint_held_seconds")
    assert alarm["Threshold"] == 3600 and alarm["Statistic"] == "Maximum"
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["TreatMissingData"] == "notBreaching" and alarm["AlarmActions"]


def test_operational_events_follow_from_the_table_stream_old_and_new_images_with_their_own_dlq_and_alarms(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    """Issue 16: OpEventsFunction reads the table's stream with both images (it diffs them), filtered
    to changed reminder items and endpoint health items, bounded retries, bisect, partial batch
    failures, an on-failure SQS DLQ that is alarmed, and an alarm on its errors."""
    table = props(synthesized, logical_ids["RemindersTable"])
    assert table["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    (m,) = [
        r["Properties"]
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"].get("FunctionName") == ref(logical_ids["OpEventsFunction"])
    ]
    assert m["EventSourceArn"] == {"Fn::GetAtt": [logical_ids["RemindersTable"], "StreamArn"]}
    assert m["MaximumRetryAttempts"] == 10 and m["BisectBatchOnFunctionError"] is True
    assert m["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert m["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": [logical_ids["OpEventsDLQ"], "Arn"]
    }
    patterns = [json.loads(f["Pattern"]) for f in m["FilterCriteria"]["Filters"]]
    assert patterns == [
        {
            "eventName": ["MODIFY"],
            "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "R#"}]}, "sk": {"S": ["R"]}}},
        },
        {
            "eventName": ["INSERT", "MODIFY"],
            "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "E#"}]}, "sk": {"S": ["H"]}}},
        },
    ]
    alarms = [
        r["Properties"] for r in synthesized.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"
    ]
    watched = {
        d["Value"].get("Fn::GetAtt", [None])[0] if isinstance(d["Value"], dict) else None
        for a in alarms
        for d in a.get("Dimensions", [])
    }
    refs = {
        d["Value"].get("Ref") for a in alarms for d in a.get("Dimensions", []) if isinstance(d["Value"], dict)
    }
    assert logical_ids["OpEventsDLQ"] in watched
    assert logical_ids["OpEventsFunction"] in refs
