"""`sam local invoke` of every function of the synthesized template, each with its events/ sample,
in the stand-in Lambda container (tests/sam/run.sh), against moto on the docker bridge gateway.

Each invocation asserts its observable effect, and that the function logged, at cold start, the
Powertools release of the layer (== the pin) and its clients' retry mode and timeouts. Setup that
is not under test (creating a reminder due now, a delivery whose send was not recorded) runs the
same handlers in this process against the same moto server.
"""

from __future__ import annotations

import base64
import copy
import json
import secrets
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Any

import boto3
import pytest

pytestmark = pytest.mark.sam

EVENTS = Path(__file__).resolve().parents[2] / "events"
#: What hooks.example.com (the samples' webhook host) resolves to in the container: a public test
#: address nobody connects to (those reminders are due in 2030), so the SSRF guard passes as in AWS.
SAMPLE_WEBHOOK_HOST = "hooks.example.com:93.184.215.14"
PINNED_POWERTOOLS = version("aws-lambda-powertools")


def sample(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def run_in_container(sam: Any, local_template: Path, stack: Any, emulator: Any, name: str, event: Any,
                     **env: str) -> Any:  # fmt: skip
    from reminders_ops.samlocal import env_vars

    spec = stack.inventory.function(name)
    invocation = sam.invoke(
        local_template,
        spec.logical_id,
        event,
        env_vars(stack, endpoint=emulator.endpoint, **env),
        add_hosts=[SAMPLE_WEBHOOK_HOST],
    )
    facts = invocation.log("cold_start")
    clients = invocation.log("client_settings")["clients"]
    print(
        f"\n[sam] {name} ({spec.logical_id}): {facts['machine']}, Python {facts['python']}, "
        f"glibc {facts['libc']}, Powertools {facts['powertools_version']}, pydantic_core "
        f"{facts['pydantic_core']}; {invocation.seconds:.0f} s"
        + (f" ({invocation.attempts} attempts)" if invocation.attempts > 1 else "")
        + "\n[sam]   clients: "
        + ", ".join(
            f"{c['service']} retry={c['retry_mode']}/{c['max_attempts']} "
            f"connect={c['connect_timeout']}s read={c['read_timeout']}s"
            for c in clients
        )
    )
    assert facts["powertools_version"] == PINNED_POWERTOOLS, "the layer's Powertools is the pinned release"
    assert facts["machine"] == {"arm64": "aarch64"}.get(sam.arch, sam.arch)
    assert clients, f"{name} created no AWS client"
    for client in clients:
        assert {"service", "retry_mode", "max_attempts", "connect_timeout", "read_timeout"} <= set(client)
    return invocation.result


def in_process(stack: Any, name: str, event: Any, **env: str) -> Any:
    """The same handler in this process (setup only), against the same moto server."""
    from reminders import runtime
    from reminders.handlers import coldstart
    from reminders_ops.invoke import call_handler, patched_environ

    runtime.reset()
    coldstart.reset()
    with patched_environ(env):
        return call_handler(stack.inventory.function(name), stack, event)


def create_sample_reminder(stack: Any, sam: Any, *, due_at: datetime, webhook_url: str) -> dict[str, Any]:
    """The sample reminder (same account and key, so the same id as the samples refer to)."""
    event = copy.deepcopy(sample("api-create-reminder.json"))
    body = json.loads(event["body"])
    body["due_at"] = due_at.isoformat()
    for channel in body["channels"]:
        if channel["type"] == "webhook":
            channel["url"] = webhook_url
    event["body"] = json.dumps(body)
    response = in_process(stack, "ApiFunction", event, ALLOW_DESTINATION_NETWORKS=f"{sam.gateway}/32")
    assert response["statusCode"] == 201, response
    created: dict[str, Any] = json.loads(response["body"])
    return created


def register_bare_url_endpoint(stack: Any, sam: Any, url: str) -> tuple[str, str]:
    """The sample account registers the implicit endpoint of ``url``'s origin (``bare_urls``), in
    this process, as an application does to read the secret its bare-URL webhooks are signed with
    (issue 24: no stack-wide secret verifies a receipt or signs after the migration window). The
    endpoints' KMS key is made in the emulator (the provisioner makes none): (secret, key arn)."""
    key = boto3.client("kms").create_key()["KeyMetadata"]["Arn"]
    for fn in ("ApiFunction", "WebhookDeliveryFunction", "PublicFunction"):  # in this process too
        stack.environments[stack.inventory.function(fn).logical_id]["ENDPOINT_KEY_ID"] = key
    event = copy.deepcopy(sample("api-create-reminder.json"))
    account = json.loads(event["body"])["account_id"]
    event.update(routeKey="POST /endpoints", rawPath="/endpoints")
    event["requestContext"].update(routeKey="POST /endpoints")
    event["requestContext"]["http"]["path"] = "/endpoints"
    event["body"] = json.dumps({"account_id": account, "url": url, "bare_urls": True})
    event["headers"]["content-length"] = str(len(event["body"]))
    response = in_process(
        stack, "ApiFunction", event, ENDPOINT_KEY_ID=key, ALLOW_DESTINATION_NETWORKS="0.0.0.0/0"
    )
    assert response["statusCode"] == 201, response
    return json.loads(response["body"])["secret"], key


def get_sample_reminder(stack: Any) -> dict[str, Any]:
    response = in_process(stack, "ApiFunction", sample("api-get-reminder.json"))
    assert response["statusCode"] == 200, response
    reminder: dict[str, Any] = json.loads(response["body"])
    return reminder


def delivery(reminder: dict[str, Any], channel_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(d for d in reminder["deliveries"] if d["channel_id"] == channel_id)
    return found


def receive_all(stack: Any, queue: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs")
    messages: list[dict[str, Any]] = []
    while batch := sqs.receive_message(
        QueueUrl=stack.queue_url(queue), MaxNumberOfMessages=10, AttributeNames=["All"]
    ).get("Messages", []):
        messages += batch
    return messages


def live_sqs_event(stack: Any, sample_name: str, queue: str, message: dict[str, Any]) -> dict[str, Any]:
    """The sample, carrying the live message's id and receipt handle, as the event source builds it."""
    event = copy.deepcopy(sample(sample_name))
    (record,) = event["Records"]
    assert json.loads(message["Body"]) == json.loads(record["body"]), "the sample matches the live message"
    record.update(
        messageId=message["MessageId"],
        receiptHandle=message["ReceiptHandle"],
        md5OfBody=message["MD5OfBody"],
        eventSourceARN=stack.queue_arn(queue),
    )
    record["attributes"].update(message["Attributes"])
    return event


def unused_url(sam: Any) -> str:
    return f"http://{sam.gateway}:9/unused"


# ---------------------------------------------------------------------------------------------


def test_api_creates_the_sample_reminder_201_and_gets_it_200(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    created = run_in_container(
        sam, local_template, stack, emulator, "ApiFunction", sample("api-create-reminder.json")
    )
    assert created["statusCode"] == 201, created
    body = json.loads(created["body"])
    assert body["id"] == sample("api-get-reminder.json")["pathParameters"]["id"]
    assert body["state"] == "scheduled"  # due in 2030
    got = run_in_container(
        sam, local_template, stack, emulator, "ApiFunction", sample("api-get-reminder.json")
    )
    assert got["statusCode"] == 200, got
    reminder = json.loads(got["body"])
    assert reminder["id"] == body["id"]
    assert sorted(d["channel_id"] for d in reminder["deliveries"]) == ["email-0", "webhook-0"]


def test_dispatcher_tick_sends_one_message_per_index_shard(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    result = run_in_container(
        sam, local_template, stack, emulator, "DispatcherFunction", sample("dispatcher-tick.json")
    )
    shards = int(stack.environment("DispatcherFunction")["DUE_SHARDS"])
    assert result == {"shards": shards}
    sent = sorted(json.loads(m["Body"])["shard"] for m in receive_all(stack, "DispatchQueue"))
    assert sent == list(range(shards))


def test_dispatch_worker_enqueues_the_due_reminder_of_its_shard(
    sam: Any, local_template: Path, stack: Any, emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reminders.adapters.clock import SystemClock
    from reminders.services.skew import StoreCorrectedClock

    now = datetime.now(UTC)
    # Created an hour ago for half an hour ago: beyond the SQS window then, so it waits in the due
    # index (scheduled) until a dispatch worker pages its shard.
    with monkeypatch.context() as m:
        m.setattr(SystemClock, "now", lambda self: now - timedelta(hours=1))
        # The API corrects its clock by the store's (issue 25 item 7): the hour back is its too.
        m.setattr(StoreCorrectedClock, "now", lambda self: now - timedelta(hours=1))
        created = create_sample_reminder(
            stack, sam, due_at=now - timedelta(minutes=30), webhook_url=unused_url(sam)
        )
    assert created["state"] == "scheduled"
    assert receive_all(stack, "EmailQueue") == []
    boto3.client("sqs").send_message(
        QueueUrl=stack.queue_url("DispatchQueue"),
        MessageBody=sample("dispatch-worker-shard.json")["Records"][0]["body"],
    )
    (message,) = receive_all(stack, "DispatchQueue")
    event = live_sqs_event(stack, "dispatch-worker-shard.json", "DispatchQueue", message)
    assert run_in_container(sam, local_template, stack, emulator, "DispatchWorkerFunction", event) == {
        "batchItemFailures": []
    }
    for queue, channel in (("EmailQueue", "email-0"), ("WebhookQueue", "webhook-0")):
        (enqueued,) = receive_all(stack, queue)
        assert json.loads(enqueued["Body"]) == {
            "reminder_id": created["id"],
            "channel_id": channel,
            "version": 1,
        }


def test_email_consumer_sends_through_moto_ses_and_records_delivered(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    create_sample_reminder(
        stack, sam, due_at=datetime.now(UTC) - timedelta(seconds=1), webhook_url=unused_url(sam)
    )
    (message,) = receive_all(stack, "EmailQueue")
    event = live_sqs_event(stack, "email-delivery-batch.json", "EmailQueue", message)
    assert emulator.ses_sent_count() == 0
    result = run_in_container(sam, local_template, stack, emulator, "EmailDeliveryFunction", event)
    assert result == {"batchItemFailures": []}
    assert emulator.ses_sent_count() == 1
    assert delivery(get_sample_reminder(stack), "email-0")["state"] == "delivered"


def test_webhook_consumer_posts_a_signed_webhook_to_the_receiver(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    from reminders_ops.local.receiver import WebhookReceiver

    # Issue 24: a bare URL signs with its account's endpoint of that origin (no stack-wide secret after
    # the migration window, and SAM passes no variable the template does not declare, so no cut-over
    # is set here): the application registers that endpoint and its receiver holds the secret.
    with WebhookReceiver(
        "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode(), host=sam.gateway
    ) as receiver:
        secret, key = register_bare_url_endpoint(stack, sam, receiver.url)
        receiver.use_secret(secret)
        create_sample_reminder(
            stack, sam, due_at=datetime.now(UTC) - timedelta(seconds=1), webhook_url=receiver.url + "/hooks"
        )
        (message,) = receive_all(stack, "WebhookQueue")
        event = live_sqs_event(stack, "webhook-delivery-batch.json", "WebhookQueue", message)
        result = run_in_container(
            sam, local_template, stack, emulator, "WebhookDeliveryFunction", event,
            ALLOW_DESTINATION_NETWORKS=f"{sam.gateway}/32", ENDPOINT_KEY_ID=key,
        )  # fmt: skip
        state = receiver.snapshot()
    assert result == {"batchItemFailures": []}
    webhook = delivery(get_sample_reminder(stack), "webhook-0")
    assert state["accepted"] == {webhook["key"]: 1}, state  # verified signature, one accepted send
    assert state["rejected_signatures"] == 0
    assert webhook["state"] == "delivered"


def test_ses_events_function_marks_an_unrecorded_send_delivered(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    from reminders import runtime
    from reminders.domain.states import DeliveryState

    created = create_sample_reminder(
        stack, sam, due_at=datetime.now(UTC) - timedelta(seconds=1), webhook_url=unused_url(sam)
    )
    # A worker claimed the email and SES accepted it, but the worker died before recording.
    store = runtime.store()
    reminder = store.get(created["id"])
    assert reminder is not None
    email = reminder.deliveries["email-0"]
    lease = (datetime.now(UTC) + timedelta(seconds=60)).isoformat()
    assert store.save_delivery(
        created["id"],
        replace(email, state=DeliveryState.SENDING, lease_owner="crashed", lease_until=lease),
        email.rev,
    )
    result = run_in_container(
        sam, local_template, stack, emulator, "SesEventsFunction", sample("ses-send-event.json")
    )
    assert result == {"outcome": "reconciled"}
    assert delivery(get_sample_reminder(stack), "email-0")["state"] == "delivered"


def test_receipts_function_merges_a_stored_receipt_from_the_table_stream(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    """Issue 19: the stream record of a stored receiver receipt (``processed``) for the sample webhook
    delivery: the standing receipt and its history line are recorded. The delivery was never claimed,
    so the receipt proves no send (issue 24): it stays as it was, only annotated."""
    create_sample_reminder(
        stack, sam, due_at=datetime.now(UTC) - timedelta(seconds=1), webhook_url=unused_url(sam)
    )
    before = delivery(get_sample_reminder(stack), "webhook-0")
    event = sample("receipts-stream-batch.json")
    (record,) = event["Records"]
    assert record["dynamodb"]["NewImage"]["pk"]["S"] == "RCPT#" + before["key"], "the sample names it"
    assert before["state"] != "delivered" and before["receiver_receipt"] is None
    result = run_in_container(sam, local_template, stack, emulator, "ReceiptsFunction", event)
    assert result == {"batchItemFailures": []}
    webhook = delivery(get_sample_reminder(stack), "webhook-0")
    assert webhook["state"] == before["state"] != "delivered"
    assert webhook["receiver_receipt"].startswith("p|2030-01-20T08:00:01")
    assert webhook["history"][-1]["event"] == "receipt"


def test_public_function_unsubscribes_and_accepts_a_signed_receipt(
    sam: Any, local_template: Path, stack: Any, emulator: Any
) -> None:
    """Issue 24 item 8: the public routes' own function, with its samples: the one-click unsubscribe
    (token signed with the sample key, set as the stack's UnsubscribeSecret) answers 200 and writes
    the account's suppression entry; the receipt sample, re-signed now with the secret of the
    account's endpoint the sample webhook was sent through, answers 202 and stores the receipt."""
    from reminders.adapters.secrets import signing_key
    from standardwebhooks.webhooks import Webhook

    boto3.client("secretsmanager").put_secret_value(
        SecretId=stack.environment("PublicFunction")["UNSUBSCRIBE_SECRET_ARN"],
        SecretString="sample-unsubscribe-key",
    )
    result = run_in_container(
        sam, local_template, stack, emulator, "PublicFunction", sample("public-unsubscribe.json")
    )
    assert result["statusCode"] == 200, result
    table = boto3.resource("dynamodb").Table(stack.environment("PublicFunction")["TABLE_NAME"])
    assert table.query(KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": "SUP#acct-1042"})[
        "Items"
    ]

    # Issue 24: a receipt proves only a webhook that was sent, verified with the secret of the
    # account's endpoint it went through: the sample webhook is sent first (in this process) to a
    # receiver of an origin whose endpoint the account registered.
    from reminders_ops.local.receiver import WebhookReceiver

    with WebhookReceiver(
        "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode(), host=sam.gateway
    ) as receiver:
        secret, key = register_bare_url_endpoint(stack, sam, receiver.url)
        receiver.use_secret(secret)
        create_sample_reminder(
            stack, sam, due_at=datetime.now(UTC) - timedelta(seconds=1), webhook_url=receiver.url + "/hooks"
        )
        (message,) = receive_all(stack, "WebhookQueue")
        sent = in_process(
            stack, "WebhookDeliveryFunction",
            live_sqs_event(stack, "webhook-delivery-batch.json", "WebhookQueue", message),
            ALLOW_DESTINATION_NETWORKS=f"{sam.gateway}/32", ENDPOINT_KEY_ID=key,
        )  # fmt: skip
        assert sent == {"batchItemFailures": []} and receiver.snapshot()["rejected_signatures"] == 0
    receipt = copy.deepcopy(sample("public-receipt.json"))
    now = datetime.now(UTC)
    receipt["headers"]["webhook-timestamp"] = str(int(now.timestamp()))
    receipt["headers"]["webhook-signature"] = Webhook(signing_key(secret)).sign(
        receipt["headers"]["webhook-id"], now, receipt["body"]
    )
    result = run_in_container(
        sam, local_template, stack, emulator, "PublicFunction", receipt, ENDPOINT_KEY_ID=key
    )
    assert result["statusCode"] == 202, result
    webhook_id = json.loads(receipt["body"])["webhook_id"]
    assert table.query(
        KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": "RCPT#" + webhook_id}
    )["Items"]
