"""reminders_ops.provision: what it reads from the synthesized template and what it provisions in moto."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from reminders_ops.provision import (
    AwsClients,
    Inventory,
    Provisioned,
    Resolver,
    TemplateError,
    local_names,
    provision,
)

from .conftest import Synthesized

REGION = "us-east-1"


@pytest.fixture(scope="module")
def inventory(synthesized: Synthesized) -> Inventory:
    return Inventory.from_template(synthesized.template)


@pytest.fixture
def provisioned(synthesized: Synthesized) -> Iterator[Provisioned]:
    from moto import mock_aws

    with mock_aws():
        yield provision(synthesized.template, AwsClients.create(region_name=REGION))


def test_lists_the_functions_with_handler_timeout_and_memory(inventory: Inventory) -> None:
    found = {f.name: (f.handler, f.timeout_seconds, f.memory_mb) for f in inventory.functions.values()}
    assert found == {
        "ApiFunction": ("reminders.handlers.api.handler", 10, 256),
        "PublicFunction": ("reminders.handlers.public.handler", 10, 256),
        "DispatcherFunction": ("reminders.handlers.dispatcher.tick_handler", 30, 256),
        "DispatchWorkerFunction": ("reminders.handlers.dispatcher.shard_handler", 60, 256),
        "EmailDeliveryFunction": ("reminders.handlers.delivery.email_handler", 60, 192),
        "WebhookDeliveryFunction": ("reminders.handlers.delivery.webhook_handler", 60, 192),
        "SesEventsFunction": ("reminders.handlers.ses_events.handler", 10, 256),
        "ReceiptsFunction": ("reminders.handlers.receipts.handler", 10, 256),
        "OpEventsFunction": ("reminders.handlers.opevents.handler", 10, 256),
    }


def test_lists_the_sqs_event_sources(inventory: Inventory) -> None:
    found = {
        inventory.functions[e.function].name: (
            inventory.queues[e.queue].name if e.queue else None,
            e.batch_size,
            e.batching_window_seconds,
            e.maximum_concurrency,
            e.reports_batch_item_failures,
        )
        for e in inventory.event_sources
    }
    assert found == {
        "DispatchWorkerFunction": ("DispatchQueue", 1, 0, 16, True),
        "EmailDeliveryFunction": ("EmailQueue", 10, 0, 20, True),
        "WebhookDeliveryFunction": ("WebhookQueue", 10, 0, 20, True),
        "ReceiptsFunction": (None, 25, 0, None, True),  # the table's stream (issue 19)
        "OpEventsFunction": (None, 100, 1, None, True),  # the table's stream (issue 16)
    }
    (stream,) = [
        e
        for e in inventory.event_sources
        if e.table is not None and inventory.functions[e.function].name == "ReceiptsFunction"
    ]
    assert inventory.tables[stream.table].name == "RemindersTable"
    assert stream.maximum_retry_attempts == 10 and stream.on_failure_queue is not None
    assert stream.filters == (
        {"eventName": ["INSERT"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "RCPT#"}]}}}},
    )


def test_lists_the_schedule(inventory: Inventory) -> None:
    (schedule,) = inventory.schedules
    assert schedule.schedule_expression == "rate(1 minute)"
    assert schedule.rate_seconds == 60
    assert [inventory.functions[t].name for t in schedule.targets] == ["DispatcherFunction"]
    assert inventory.schedule_for(inventory.function("DispatcherFunction").logical_id) == schedule


def test_lists_queues_with_redrive_and_redrive_allow_policies(inventory: Inventory) -> None:
    for name, budget, visibility in (("Email", 20, 360), ("Webhook", 20, 360), ("Dispatch", 5, 360)):
        queue, dlq = inventory.queue(f"{name}Queue"), inventory.queue(f"{name}DLQ")
        assert queue.queue_name == f"RemindersStack-{name}Queue"
        assert queue.visibility_timeout_seconds == visibility
        assert queue.retention_seconds == dlq.retention_seconds == 14 * 86400
        assert queue.redrive_policy is not None
        assert (queue.redrive_policy.dead_letter_queue, queue.redrive_policy.max_receive_count) == (
            dlq.logical_id,
            budget,
        )
        assert dlq.redrive_allow_policy is not None
        assert dlq.redrive_allow_policy.permission == "byQueue"
        assert dlq.redrive_allow_policy.source_queues == (queue.logical_id,)
    assert len(inventory.dead_letter_queue_ids()) == 3


def test_lists_the_table_with_its_due_index(inventory: Inventory) -> None:
    (table,) = inventory.tables.values()
    assert table.key_schema == (("pk", "HASH"), ("sk", "RANGE"))
    due, attention = table.global_secondary_indexes
    assert (attention.name, attention.key_schema, attention.projection_type) == (
        "attention",
        (("nx", "HASH"), ("nxs", "RANGE")),
        "KEYS_ONLY",
    )
    assert (due.name, due.key_schema, due.projection_type, due.non_key_attributes) == (
        "due",
        (("gpk", "HASH"), ("gsk", "RANGE")),
        "INCLUDE",
        ("rid", "v", "chs", "w"),
    )
    assert (table.billing_mode, table.ttl_attribute, table.point_in_time_recovery) == (
        "PAY_PER_REQUEST",
        "xp",
        True,
    )


def test_lists_the_ses_configuration_set_and_routes(inventory: Inventory) -> None:
    (configuration_set,) = inventory.configuration_sets.values()
    (destination,) = configuration_set.event_destinations
    assert "EventBridgeDestination" in destination
    routes = {
        r.route_key: (r.authorization_type, inventory.functions[r.function].name)
        for r in inventory.routes
        if r.function
    }
    assert routes["POST /reminders"] == ("AWS_IAM", "ApiFunction")
    assert routes["GET /health"] == ("NONE", "ApiFunction")
    assert routes["POST /inbound/receiver"] == ("NONE", "PublicFunction")  # issue 24 item 8
    assert routes["POST /unsubscribe/{token}"] == ("NONE", "PublicFunction")
    # 5 reminder routes (GET /reminders/preview reaches the function as GET /reminders/{id}), 5
    # endpoint routes (+ enable/disable of issue 16), 2 suppression routes, the two public routes of
    # issue 19, /health, /openapi.json, the account's event endpoint (PUT, GET, DELETE; issue 16) and
    # the 5 template routes of issue 30 (IAM, the API function)
    assert all(v == ("AWS_IAM", "ApiFunction") for k, v in routes.items() if "/templates" in k)
    assert sum("/templates" in k for k in routes) == 5
    assert len(routes) == 26


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("WebhookDelivery", "WebhookDeliveryFunction"),
        ("EmailDeliveryFunction", "EmailDeliveryFunction"),
        ("Dispatcher", "DispatcherFunction"),
        ("DispatchWorker", "DispatchWorkerFunction"),
        ("api", "ApiFunction"),
    ],
)
def test_finds_a_function_by_construct_id_or_unique_prefix(
    inventory: Inventory, selector: str, expected: str
) -> None:
    assert inventory.function(selector).name == expected
    spec = inventory.function(expected)
    assert inventory.function(spec.logical_id) == spec


@pytest.mark.parametrize("selector", ["Dispatch", "Delivery", "Nope"])
def test_refuses_an_ambiguous_or_unknown_function(inventory: Inventory, selector: str) -> None:
    with pytest.raises(KeyError):
        inventory.function(selector)


def test_local_names_are_deterministic_and_readable(synthesized: Synthesized, inventory: Inventory) -> None:
    names = local_names(synthesized.template)
    assert names == local_names(json.loads(json.dumps(synthesized.template)))
    assert names[inventory.queue("EmailQueue").logical_id] == "RemindersStack-EmailQueue"
    (table_id,) = inventory.tables
    assert names[table_id] == "RemindersStack-RemindersTable"
    assert len(set(names.values())) == len(names)


def test_provisions_queues_with_the_template_attributes_and_redrive(provisioned: Provisioned) -> None:
    import boto3

    sqs = boto3.client("sqs", region_name=REGION)
    attributes = sqs.get_queue_attributes(
        QueueUrl=provisioned.queue_url("EmailQueue"), AttributeNames=["All"]
    )["Attributes"]
    assert attributes["VisibilityTimeout"] == "360"
    assert attributes["MessageRetentionPeriod"] == str(14 * 86400)
    redrive = json.loads(attributes["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == provisioned.queue_arn("EmailDLQ")
    assert int(redrive["maxReceiveCount"]) == 20
    assert provisioned.queue_url("EmailQueue").endswith("/RemindersStack-EmailQueue")


def test_provisions_the_table_with_its_index_and_ttl(provisioned: Provisioned) -> None:
    import boto3

    ddb = boto3.client("dynamodb", region_name=REGION)
    name = provisioned.environment("ApiFunction")["TABLE_NAME"]
    table = ddb.describe_table(TableName=name)["Table"]
    assert [g["IndexName"] for g in table["GlobalSecondaryIndexes"]] == ["due", "attention"]
    assert table["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"] == ["rid", "v", "chs", "w"]
    ttl = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "xp"


def test_resolves_every_function_environment_to_the_provisioned_resources(provisioned: Provisioned) -> None:
    import boto3

    env = provisioned.environment("WebhookDeliveryFunction")
    assert env["EMAIL_QUEUE_URL"] == provisioned.queue_url("EmailQueue")
    assert env["WEBHOOK_DLQ_URL"] == provisioned.queue_url("WebhookDLQ")
    assert env["DISPATCH_QUEUE_URL"] == provisioned.queue_url("DispatchQueue")
    assert env["CHANNEL"] == "webhook"
    secret = boto3.client("secretsmanager", region_name=REGION).get_secret_value(
        SecretId=env["WEBHOOK_SECRET_ARN"]
    )
    assert re.fullmatch(r"[A-Za-z0-9]{48}", secret["SecretString"])
    sesv2 = boto3.client("sesv2", region_name=REGION)
    assert sesv2.get_configuration_set(ConfigurationSetName=env["SES_CONFIGURATION_SET"])
    identities = [i["IdentityName"] for i in sesv2.list_email_identities()["EmailIdentities"]]
    assert env["EMAIL_FROM"] in identities
    for other in provisioned.inventory.functions:
        assert not any("{" in value for value in provisioned.environments[other].values())


def test_provisioning_twice_is_idempotent(synthesized: Synthesized) -> None:
    from moto import mock_aws

    with mock_aws():
        clients = AwsClients.create(region_name=REGION)
        first = provision(synthesized.template, clients, secret_values={"SigningSecret": "s3cret"})
        second = provision(synthesized.template, clients, secret_values={"SigningSecret": "s3cret"})
    assert first.physical == second.physical
    assert first.environments == second.environments


def test_resolver_handles_join_sub_select_and_pseudo_parameters() -> None:
    template: dict[str, Any] = {
        "Resources": {},
        "Parameters": {"Stage": {"Type": "String", "Default": "dev"}},
    }
    resolver = Resolver(
        template,
        {"Queue": "https://q"},
        {"Queue": {"Arn": "arn:aws:sqs:r:1:q"}},
        region="eu-west-1",
        account_id="123",
        stack_name="S",
    )
    assert (
        resolver.resolve({"Fn::Join": ["-", [{"Ref": "AWS::Region"}, {"Ref": "Stage"}]]}) == "eu-west-1-dev"
    )
    assert resolver.resolve({"Fn::Sub": "${Queue}/${AWS::AccountId}"}) == "https://q/123"
    assert resolver.resolve({"Fn::Sub": ["${Queue.Arn}|${X}", {"X": "x"}]}) == "arn:aws:sqs:r:1:q|x"
    assert resolver.resolve({"Fn::Select": [1, {"Fn::Split": [",", "a,b"]}]}) == "b"
    with pytest.raises(TemplateError):
        resolver.resolve({"Fn::GetAtt": ["Missing", "Arn"]})
