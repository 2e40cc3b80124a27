"""Every ``Handler`` named in the synthesized template, called with its sample from ``events/`` on moto
provisioned from that template — what ``sam local invoke -t cdk.out/RemindersStack.template.json -e
events/...`` does where a container runtime exists.

The delivery samples and ``api-get-reminder.json`` refer to the reminder ``api-create-reminder.json``
creates (its id derives from account id and business key). To watch a delivery happen, the tests
create that same reminder due now, with its webhook pointed at a local receiver, and hand the
consumer the sample with the live message's receipt handle, as the event source mapping would.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from reminders_ops.invoke import call_handler, import_handler, patched_environ
from reminders_ops.provision import AwsClients, Inventory, Provisioned, provision

from .conftest import Synthesized

EVENTS = Path(__file__).resolve().parents[2] / "events"
REGION = "us-east-1"
LOCAL_NETWORKS = {"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"}  # local development only
PUBLIC_TEST_ADDRESS = "93.184.215.14"  # what hooks.example.com "resolves" to in these tests

SAMPLES = {
    "ApiFunction": ["api-create-reminder.json", "api-get-reminder.json", "api-health.json"],
    "PublicFunction": ["public-unsubscribe.json", "public-receipt.json"],
    "DispatcherFunction": ["dispatcher-tick.json"],
    "DispatchWorkerFunction": ["dispatch-worker-shard.json"],
    "EmailDeliveryFunction": ["email-delivery-batch.json"],
    "WebhookDeliveryFunction": ["webhook-delivery-batch.json"],
    "SesEventsFunction": ["ses-send-event.json"],
    "ReceiptsFunction": ["receipts-stream-batch.json"],
    "OpEventsFunction": ["opevents-stream-batch.json"],
}


def sample(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def fresh_process() -> None:
    """Each Lambda function is its own process: forget the previous handler's cached settings/clients."""
    from reminders import runtime

    reset = getattr(runtime, "reset", None)
    if reset is not None:
        reset()


@pytest.fixture
def stack(synthesized: Synthesized, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provisioned]:
    from moto import mock_aws

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example.com":  # no DNS in tests: a public address nobody connects to
            return real_getaddrinfo(PUBLIC_TEST_ADDRESS, port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with mock_aws():
        yield provision(synthesized.template, AwsClients.create(region_name=REGION))
    fresh_process()


def invoke(stack: Provisioned, function: str, event: Any, **extra_env: str) -> Any:
    fresh_process()
    with patched_environ(extra_env):
        return call_handler(stack.inventory.function(function), stack, event)


def table_items(stack: Provisioned) -> list[dict[str, Any]]:
    import boto3

    table = boto3.resource("dynamodb", region_name=REGION).Table(stack.physical[_table_id(stack)])
    items: list[dict[str, Any]] = table.scan()["Items"]
    return items


def _table_id(stack: Provisioned) -> str:
    (table_id,) = stack.inventory.tables
    return table_id


def receive_all(stack: Provisioned, queue: str) -> list[dict[str, Any]]:
    import boto3

    sqs = boto3.client("sqs", region_name=REGION)
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=stack.queue_url(queue),
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return messages
        messages += batch


def live_sqs_event(
    stack: Provisioned, sample_name: str, queue: str, message: dict[str, Any]
) -> dict[str, Any]:
    """The sample event, carrying the live message's id and receipt handle (as the ESM builds it)."""
    event = copy.deepcopy(sample(sample_name))
    (record,) = event["Records"]
    assert json.loads(message["Body"]) == json.loads(record["body"]), "the sample matches the real message"
    record.update(
        messageId=message["MessageId"],
        receiptHandle=message["ReceiptHandle"],
        md5OfBody=message["MD5OfBody"],
        eventSourceARN=stack.queue_arn(queue),
        awsRegion=REGION,
    )
    record["attributes"].update(message["Attributes"])
    return event


def create_due_now(stack: Provisioned, webhook_url: str) -> dict[str, Any]:
    """The sample reminder (same account and key, hence the same id), due now."""
    event = copy.deepcopy(sample("api-create-reminder.json"))
    body = json.loads(event["body"])
    body["due_at"] = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    for channel in body["channels"]:
        if channel["type"] == "webhook":
            channel["url"] = webhook_url
    event["body"] = json.dumps(body)
    response = invoke(stack, "ApiFunction", event, **LOCAL_NETWORKS)
    assert response["statusCode"] == 201, response
    created: dict[str, Any] = json.loads(response["body"])
    return created


def get_sample_reminder(stack: Provisioned) -> dict[str, Any]:
    response = invoke(stack, "ApiFunction", sample("api-get-reminder.json"))
    assert response["statusCode"] == 200, response
    reminder: dict[str, Any] = json.loads(response["body"])
    return reminder


#: The key the unsubscribe sample's token is signed with (events/README.md): tests set it as the
#: stack's UnsubscribeSecret before invoking the sample.
SAMPLE_UNSUBSCRIBE_KEY = "sample-unsubscribe-key"


def set_unsubscribe_key(stack: Provisioned) -> None:
    import boto3

    boto3.client("secretsmanager", region_name=REGION).put_secret_value(
        SecretId=stack.environment("PublicFunction")["UNSUBSCRIBE_SECRET_ARN"],
        SecretString=SAMPLE_UNSUBSCRIBE_KEY,
    )


def register_bare_url_endpoint(stack: Provisioned, url: str) -> str:
    """The sample account registers the implicit endpoint of ``url``'s origin (``bare_urls``) through
    ApiFunction, as an application does to read the secret its bare-URL webhooks are signed with
    (issue 24: no stack-wide secret verifies a receipt). The endpoints' KMS key is made in moto (the
    provisioner makes none), for every function that seals or opens an endpoint secret."""
    import boto3

    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
    for fn in ("ApiFunction", "WebhookDeliveryFunction", "PublicFunction"):
        stack.environments[stack.inventory.function(fn).logical_id]["ENDPOINT_KEY_ID"] = key
    event = copy.deepcopy(sample("api-create-reminder.json"))
    account = json.loads(event["body"])["account_id"]
    event.update(routeKey="POST /endpoints", rawPath="/endpoints")
    event["requestContext"].update(routeKey="POST /endpoints")
    event["requestContext"]["http"]["path"] = "/endpoints"
    event["body"] = json.dumps({"account_id": account, "url": url, "bare_urls": True})
    event["headers"]["content-length"] = str(len(event["body"]))
    response = invoke(stack, "ApiFunction", event, **LOCAL_NETWORKS)
    assert response["statusCode"] == 201, response
    secret: str = json.loads(response["body"])["secret"]
    return secret


def live_receipt_event(stack: Provisioned) -> dict[str, Any]:
    """The receipt sample, for the sample webhook delivery once it was sent (to a local receiver),
    signed now with the secret that signed the webhook — its account's endpoint of that origin — as
    its receiver would (a Standard Webhooks signature is valid for 5 minutes, so the sample's own is
    stale)."""
    from reminders.adapters.secrets import signing_key
    from standardwebhooks.webhooks import Webhook

    with Receiver() as receiver:
        secret = register_bare_url_endpoint(stack, receiver.url)
        create_due_now(stack, receiver.url)
        (message,) = receive_all(stack, "WebhookQueue")
        event = live_sqs_event(stack, "webhook-delivery-batch.json", "WebhookQueue", message)
        assert invoke(stack, "WebhookDeliveryFunction", event, **LOCAL_NETWORKS) == {"batchItemFailures": []}
    (_path, sent, body), *_ = receiver.requests
    Webhook(signing_key(secret)).verify(body, sent)  # the account's own secret signed the webhook
    receipt = copy.deepcopy(sample("public-receipt.json"))
    assert json.loads(receipt["body"])["webhook_id"] == sent["webhook-id"], "the sample names that delivery"
    now = datetime.now(UTC)
    receipt["headers"].update(
        {
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(signing_key(secret)).sign(
                receipt["headers"]["webhook-id"], now, receipt["body"]
            ),
        }
    )
    return receipt


class Receiver:
    """A webhook endpoint on 127.0.0.1 that answers 200 and records what it received."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"ok": true}')

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/reminders"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------------


def test_every_handler_in_the_template_imports_and_has_a_sample(synthesized: Synthesized) -> None:
    inventory = Inventory.from_template(synthesized.template)
    assert {f.name for f in inventory.functions.values()} == set(SAMPLES)
    for spec in inventory.functions.values():
        assert callable(import_handler(spec.handler)), spec.handler
        for name in SAMPLES[spec.name]:
            assert (EVENTS / name).is_file(), name


def test_api_health_sample_answers_200(stack: Provisioned) -> None:
    response = invoke(stack, "ApiFunction", sample("api-health.json"))
    assert response["statusCode"] == 200
    assert json.loads(response["body"]) == {"status": "ok"}


def test_api_create_sample_writes_the_reminder_and_its_sharded_due_index_entry(stack: Provisioned) -> None:
    response = invoke(stack, "ApiFunction", sample("api-create-reminder.json"))
    assert response["statusCode"] == 201, response
    created = json.loads(response["body"])
    assert created["state"] == "scheduled"  # due in 2030: waits in the due index, not in SQS
    rows = [i for i in table_items(stack) if created["id"] in str(i["pk"])]
    assert len(rows) == 1
    # "<minute bucket YYYYMMDDHHMM>#<shard>": 2030-01-13T09:00+01:00 is 08:00 UTC
    assert str(rows[0]["gpk"]).startswith("203001130800#")
    assert receive_all(stack, "EmailQueue") == []


def test_api_get_sample_returns_the_created_reminder(stack: Provisioned) -> None:
    assert invoke(stack, "ApiFunction", sample("api-create-reminder.json"))["statusCode"] == 201
    reminder = get_sample_reminder(stack)
    assert reminder["id"] == sample("api-get-reminder.json")["pathParameters"]["id"]
    assert sorted(d["channel_id"] for d in reminder["deliveries"]) == ["email-0", "webhook-0"]


def test_public_unsubscribe_sample_suppresses_the_address_for_its_account_and_kind(
    stack: Provisioned,
) -> None:
    """Issue 24 item 8: the one-click unsubscribe runs in PublicFunction (token signed with the
    sample key, set as the stack's UnsubscribeSecret): 200 and one suppression entry, no address."""
    set_unsubscribe_key(stack)
    response = invoke(stack, "PublicFunction", sample("public-unsubscribe.json"))
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"]) == {"status": "unsubscribed"}
    (entry,) = [i for i in table_items(stack) if str(i["pk"]).startswith("SUP#")]
    assert entry["pk"] == "SUP#acct-1042" and str(entry["sk"]).endswith("#renewal-reminder")
    assert "customer@example.com" not in json.dumps(entry, default=str)


def test_public_receipt_sample_stores_the_receipt_for_the_stream(stack: Provisioned) -> None:
    """Issue 24 item 8: a receiver's signed receipt (the sample, re-signed now) runs in
    PublicFunction: 202 and the receipt item the stream carries to ReceiptsFunction."""
    response = invoke(stack, "PublicFunction", live_receipt_event(stack))
    assert response["statusCode"] == 202, response
    (receipt,) = [i for i in table_items(stack) if str(i["pk"]).startswith("RCPT#")]
    assert receipt["pk"] == "RCPT#" + json.loads(sample("public-receipt.json")["body"])["webhook_id"]


def test_public_function_answers_404_for_a_route_the_template_does_not_send_it(stack: Provisioned) -> None:
    """Only its two routes: an IAM route's event (misrouted) is a route it does not have."""
    response = invoke(stack, "PublicFunction", sample("api-get-reminder.json"))
    assert response["statusCode"] == 404 and json.loads(response["body"]) == {"message": "Not Found"}


def test_dispatcher_tick_sample_sends_one_message_per_index_shard(stack: Provisioned) -> None:
    invoke(stack, "DispatcherFunction", sample("dispatcher-tick.json"))
    shards = sorted(json.loads(m["Body"])["shard"] for m in receive_all(stack, "DispatchQueue"))
    assert shards == list(range(int(stack.environment("DispatcherFunction")["DUE_SHARDS"])))


def test_dispatch_worker_sample_drains_its_shard_and_checkpoints_it(stack: Provisioned) -> None:
    import boto3

    body = sample("dispatch-worker-shard.json")["Records"][0]["body"]
    boto3.client("sqs", region_name=REGION).send_message(
        QueueUrl=stack.queue_url("DispatchQueue"), MessageBody=body
    )
    (message,) = receive_all(stack, "DispatchQueue")
    before = {str(i["pk"]) for i in table_items(stack)}
    response = invoke(
        stack,
        "DispatchWorkerFunction",
        live_sqs_event(stack, "dispatch-worker-shard.json", "DispatchQueue", message),
    )
    assert response == {"batchItemFailures": []}
    written = {str(i["pk"]) for i in table_items(stack)} - before
    assert any("011" in pk for pk in written), written  # the shard's checkpoint row


def test_email_delivery_sample_sends_through_ses_and_records_delivered(stack: Provisioned) -> None:
    from moto.backends import get_backend

    created = create_due_now(stack, "http://127.0.0.1:9/unused")
    (message,) = receive_all(stack, "EmailQueue")
    event = live_sqs_event(stack, "email-delivery-batch.json", "EmailQueue", message)
    response = invoke(stack, "EmailDeliveryFunction", event)
    assert response == {"batchItemFailures": []}
    sent = list(get_backend("ses")[stack.account_id][REGION].sent_messages)
    assert len(sent) == 1
    assert set(sent[0].destinations) == {"customer@example.com"}  # moto lists To twice for raw sends
    assert sent[0].source == stack.environment("EmailDeliveryFunction")["EMAIL_FROM"]
    reminder = get_sample_reminder(stack)
    assert reminder["id"] == created["id"]
    email = next(d for d in reminder["deliveries"] if d["channel_id"] == "email-0")
    assert email["state"] == "delivered"


def test_webhook_delivery_sample_posts_a_signed_request_and_records_delivered(stack: Provisioned) -> None:
    import boto3
    from standardwebhooks.webhooks import Webhook

    # The provisioner makes no KMS key: the endpoints' key in moto, as the local runtime does. The
    # deploy's cut-over is now (issue 24): the bare URL's webhook carries its account's implicit
    # endpoint's signature and, during the migration window, the stack secret's.
    key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
    env = stack.environments[stack.inventory.function("WebhookDeliveryFunction").logical_id]
    env.update({"ENDPOINT_KEY_ID": key, "SIGNING_CUTOVER_AT": datetime.now(UTC).isoformat()})
    with Receiver() as receiver:
        create_due_now(stack, receiver.url)
        (message,) = receive_all(stack, "WebhookQueue")
        event = live_sqs_event(stack, "webhook-delivery-batch.json", "WebhookQueue", message)
        response = invoke(stack, "WebhookDeliveryFunction", event, **LOCAL_NETWORKS)
    assert response == {"batchItemFailures": []}
    assert len(receiver.requests) == 1
    _path, headers, body = receiver.requests[0]
    # Signed with the secret provisioned from the template's generated signing secret, beside the
    # account's own (two signatures, space-separated).
    secret = boto3.client("secretsmanager", region_name=REGION).get_secret_value(
        SecretId=stack.environment("WebhookDeliveryFunction")["WEBHOOK_SECRET_ARN"]
    )["SecretString"]
    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(secret.encode()).verify(body, headers)
    webhook = next(d for d in get_sample_reminder(stack)["deliveries"] if d["channel_id"] == "webhook-0")
    assert headers["webhook-id"] == webhook["key"]
    assert webhook["state"] == "delivered"


def test_ses_send_event_sample_reconciles_the_email_delivery(stack: Provisioned) -> None:
    """SES's own send event, tagged with the delivery key, marks an unrecorded send delivered."""
    create_due_now(stack, "http://127.0.0.1:9/unused")
    response = invoke(stack, "SesEventsFunction", sample("ses-send-event.json"))
    # A send event carrying the delivery key to its destination proves the send whatever the
    # state (here `queued`: sent before a reschedule or a claim given back, issue 9): delivered.
    assert response == {"outcome": "reconciled"}
    email = next(d for d in get_sample_reminder(stack)["deliveries"] if d["channel_id"] == "email-0")
    assert email["state"] == "delivered"
    assert email["history"][-1]["event"] == "provider_event"


def test_receipts_stream_sample_merges_the_receivers_receipt_into_the_webhook_delivery(
    stack: Provisioned,
) -> None:
    """Issue 19: the stream record of a stored receipt (``processed``) for the sample webhook
    delivery: the standing receipt recorded. The sample delivery is queued and was never claimed,
    so the receipt proves no send (issue 24): it stays queued, only annotated."""
    create_due_now(stack, "http://127.0.0.1:9/unused")
    response = invoke(stack, "ReceiptsFunction", sample("receipts-stream-batch.json"))
    assert response == {"batchItemFailures": []}
    webhook = next(d for d in get_sample_reminder(stack)["deliveries"] if d["channel_id"] == "webhook-0")
    assert webhook["state"] == "queued"
    assert webhook["receiver_receipt"].startswith("p|2030-01-20T08:00:01")
    assert webhook["history"][-1]["event"] == "receipt"


def test_opevents_stream_sample_for_an_account_without_an_event_endpoint_writes_nothing(
    stack: Provisioned,
) -> None:
    """Issue 16: the sample's endpoint going from active to held is ``endpoint.held``; its account
    registered no event endpoint, so the record is processed (no failure) and nothing is written or
    queued. (The path with an event endpoint: tests/proof/test_matrix_opevents.py, on moto with KMS.)"""
    before = table_items(stack)
    response = invoke(stack, "OpEventsFunction", sample("opevents-stream-batch.json"))
    assert response == {"batchItemFailures": []}
    assert table_items(stack) == before
    assert receive_all(stack, "WebhookQueue") == []


def test_every_table_call_of_the_public_routes_is_one_their_role_allows(
    stack: Any, synthesized: Synthesized, logical_ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unsubscribe and a signed receipt for a delivered webhook, through the public function on moto
    provisioned from the template: each DynamoDB request it makes (operation, partition keys) is
    allowed by the template's statements for its role — so a route that starts reading another
    prefix fails here, not in AWS with an AccessDenied (a 5xx)."""
    from .test_infra_public_function import allows_call, leading_keys, record_dynamodb_calls
    from .test_infra_template import arn_of, policy_statements

    set_unsubscribe_key(stack)
    receipt = live_receipt_event(stack)  # after a delivered webhook, signed as its receiver would
    calls = record_dynamodb_calls(monkeypatch)
    unsubscribed = invoke(stack, "PublicFunction", sample("public-unsubscribe.json"))
    accepted = invoke(stack, "PublicFunction", receipt)
    assert unsubscribed["statusCode"] == 200, unsubscribed
    assert accepted["statusCode"] == 202, accepted
    statements = policy_statements(synthesized, logical_ids["PublicFunction"])
    table = arn_of(logical_ids["RemindersTable"])
    made = [(f"dynamodb:{op}", leading_keys(op, params)) for op, params in calls]
    assert {a for a, _ in made} >= {"dynamodb:PutItem"} and any("RCPT#" in str(k) for _, k in made)
    for action, keys in made:
        assert allows_call(statements, table, action, keys), (action, keys)
