"""What operational events cost per delivered reminder (``make bench``, figure "opevents"; issue 16).

On moto in-process with the real handlers and real HTTP to local receivers: N reminders delivered
for an account WITHOUT an event endpoint, then N for an account WITH one; the table's stream is read
by the local runtime's stream mapping with OpEventsFunction's filters and drives its handler.

Printed per delivered reminder: stream records that pass the filter, OpEventsFunction invocations
(with full batches), registration reads; and for the account with an event endpoint the extra
event reminder's DynamoDB calls, write units (from the stored items' sizes), SQS messages and
webhook POSTs. Lambda's reads of a table stream are not billed; filtered-out records are no
invocations.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

#: OpEventsFunction's mapping filters, as infra/opevents.py writes them (tests/infra asserts both).
FILTERS = (
    {"eventName": ["MODIFY"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "R#"}]}, "sk": {"S": ["R"]}}}},
    {
        "eventName": ["INSERT", "MODIFY"],
        "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "E#"}]}, "sk": {"S": ["H"]}}},
    },
)
BATCH_SIZE = 100  # infra/opevents.py BATCH_SIZE


class _Counter:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, event_name: str, **_: Any) -> None:
        op = event_name.rsplit(".", 1)[-1]
        self.calls[op] = self.calls.get(op, 0) + 1

    def total(self) -> int:
        return sum(self.calls.values())


def measure(n: int = 50) -> dict[str, Any]:
    import boto3
    from moto import mock_aws
    from reminders import runtime
    from reminders.adapters.codec import reminder_to_item
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders.domain.models import ChannelType
    from reminders.domain.opevents import EVENT_KIND
    from reminders.handlers.delivery import webhook_handler
    from reminders.handlers.opevents import handler as opevents_handler
    from reminders.services.endpoints import NewEndpoint
    from reminders.services.intents import ChannelSpec, NewReminder

    from reminders_ops.bench.sim.embedded import create_stack_resources
    from reminders_ops.bench.sim.model import item_size, write_units
    from reminders_ops.invoke import lambda_context
    from reminders_ops.local.events import sqs_event
    from reminders_ops.local.receiver import WebhookReceiver
    from reminders_ops.local.streams import DynamoStreamMapping, StreamMappingSpec

    class Fn:
        name = "OpEventsFunction"

        def __init__(self) -> None:
            self.invocations = 0
            self.records = 0

        def invoke(self, event: dict[str, Any]) -> Any:
            self.invocations += 1
            self.records += len(event["Records"])
            return opevents_handler(event, lambda_context("opevents"))  # type: ignore[arg-type]

    saved = dict(os.environ)
    out: dict[str, Any] = {"reminders_per_account": n}
    with (
        mock_aws(),
        WebhookReceiver(DEV_WEBHOOK_SECRET) as app,
        WebhookReceiver("whsec_" + "A" * 32) as events,
    ):
        os.environ.update(
            {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
        )
        env = create_stack_resources()
        key = boto3.client("kms").create_key(Description="endpoints")["KeyMetadata"]["Arn"]
        env.update(
            {
                "WEBHOOK_SIGNING_SECRET": DEV_WEBHOOK_SECRET,
                "POWERTOOLS_METRICS_NAMESPACE": "Reminders",
                "POWERTOOLS_LOG_LEVEL": "WARNING",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "ENDPOINT_KEY_ID": key,
                "ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8",
            }
        )
        os.environ.update(env)
        runtime.reset()
        ddb = boto3.client("dynamodb")
        ddb.update_table(
            TableName=env["TABLE_NAME"],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        sqs = boto3.client("sqs")
        queue = env["WEBHOOK_QUEUE_URL"]
        arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

        def drain() -> int:
            handled = 0
            while msgs := sqs.receive_message(
                QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
            ).get("Messages", []):
                result = webhook_handler(sqs_event(list(msgs), arn), lambda_context("webhook"))  # type: ignore[arg-type]
                failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
                for m in msgs:
                    if m["MessageId"] not in failed:
                        sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
                handled += len(msgs)
            return handled

        def create(account: str, i: int) -> None:
            runtime.reminders_service().create(
                NewReminder(
                    account_id=account,
                    key=f"renewal:{account}:{i}",
                    kind="renewal",
                    due_at=datetime.now(UTC),
                    channels=(ChannelSpec(ChannelType.WEBHOOK, app.url + "/hooks"),),
                    template_id="renewal",
                    template_version=1,
                    data={"plan": "pro"},
                )
            )

        streams = boto3.client(
            "dynamodbstreams", endpoint_url="https://streams.dynamodb.us-east-1.amazonaws.com"
        )
        spec = StreamMappingSpec(
            "OpEventsMapping",
            "OpEventsFunction",
            env["TABLE_NAME"],
            BATCH_SIZE,
            FILTERS,
            report_batch_item_failures=True,
        )
        fn = Fn()
        mapping = DynamoStreamMapping(spec, fn, ddb, streams, sqs)  # type: ignore[arg-type]
        mapping.stream_arn = ddb.describe_table(TableName=env["TABLE_NAME"])["Table"]["LatestStreamArn"]
        counter = _Counter()
        runtime._client("dynamodb").meta.events.register("before-call.dynamodb.*", counter)
        try:
            # -- an account WITHOUT an event endpoint --------------------------------------------
            for i in range(n):
                create("acct-plain", i)
            mapping.poll_once()  # the creates' records (filtered out: a create is no outcome)
            drain()
            counter.calls.clear()
            before = (fn.records, fn.invocations)
            mapping.poll_once()  # the outcomes
            out["without"] = {
                "records_passing_filter_per_reminder": (fn.records - before[0]) / n,
                "invocations_here": fn.invocations - before[1],
                "invocations_per_reminder_full_batches": (fn.records - before[0]) / n / BATCH_SIZE,
                "registration_reads": counter.calls.get("GetItem", 0),
                "dynamodb_writes": sum(v for k, v in counter.calls.items() if k != "GetItem"),
                "event_reminders": 0,
            }
            # -- an account WITH an event endpoint ----------------------------------------------
            endpoint, secret = runtime.endpoints_service().create(
                NewEndpoint(account_id="acct-events", url=events.url + "/events")
            )
            events.use_secret(secret)
            runtime.opevents_service().register("acct-events", endpoint.id)
            for i in range(n):
                create("acct-events", i)
            mapping.poll_once()
            drain()
            counter.calls.clear()
            before = (fn.records, fn.invocations)
            mapping.poll_once()  # the outcomes → event reminders (and their messages)
            emit_calls = dict(counter.calls)
            delivered_events = drain()  # the events themselves
            counter.calls.clear()
            loop_before = (fn.records, fn.invocations)
            mapping.poll_once()  # the event reminders' own writes: no events (no loop)
            loop_calls = dict(counter.calls)
            items = [
                i
                for i in ddb.scan(TableName=env["TABLE_NAME"])["Items"]
                if i["pk"]["S"].startswith("R#") and i.get("kind", {}).get("S") == EVENT_KIND
            ]
            store = runtime.store()
            sizes = [item_size(reminder_to_item(store.get(i["rid"]["S"]))) for i in items[:20]]  # type: ignore[arg-type]
            posts = sum(events.snapshot()["posts"].values())
            out["with"] = {
                "records_passing_filter_per_reminder": (loop_before[0] - before[0]) / n,
                "invocations_here": loop_before[1] - before[1],
                "event_reminders": len(items),
                "event_deliveries": delivered_events,
                "event_posts": posts,
                "duplicates_accepted": events.snapshot()["duplicates_accepted"],
                "emit_dynamodb_calls_per_reminder": sum(emit_calls.values()) / n,
                "emit_dynamodb_calls": emit_calls,
                "event_records_passing_filter_per_reminder": (fn.records - loop_before[0]) / n,
                "event_records_dynamodb_calls": loop_calls,
                "event_reminders_after_their_own_records": len(
                    [
                        i
                        for i in ddb.scan(TableName=env["TABLE_NAME"])["Items"]
                        if i.get("kind", {}).get("S") == EVENT_KIND
                    ]
                ),
                "event_item_bytes_max": max(sizes) if sizes else 0,
                "write_units_per_event_write": write_units(max(sizes)) if sizes else 0,
                "sqs_messages_per_reminder": delivered_events / n,
                "signed_with_endpoint_secret": all(events.signed_by(secret, k) for k in events.state.bodies),
            }
        finally:
            runtime.reset()
    os.environ.clear()
    os.environ.update(saved)
    return out


def main() -> int:
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    print(json.dumps(measure(n), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
