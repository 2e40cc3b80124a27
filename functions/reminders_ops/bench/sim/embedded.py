"""The real handlers on moto, for the figures the simulator must not model: schedule-to-send lateness
in real time (moto in server mode, a local receiver, a small poller) and AWS API calls counted at
the botocore level (in-process moto, ``before-call``/``after-call`` hooks, units from item sizes).

Never touches real AWS: fake credentials and a local endpoint or moto's mock are set first, and the
environment is restored afterwards.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import threading
import time
import uuid
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import boto3
from boto3.dynamodb.types import TypeDeserializer

from reminders_ops.local.events import sqs_event
from reminders_ops.local.receiver import WebhookReceiver

from .model import item_size, read_units, write_units

ACCOUNT = "111111111111"
REGION = "us-east-1"
DEV_SECRET = "whsec_cmVtaW5kZXJzLWxvY2FsLWRldi1zaWduaW5nLXNlY3JldA=="  # the documented local secret
FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "MOTO_ACCOUNT_ID": ACCOUNT,
    "POWERTOOLS_SERVICE_NAME": "reminders",
    "POWERTOOLS_METRICS_NAMESPACE": "Reminders",
    "POWERTOOLS_DEV": "false",
}
_DESER = TypeDeserializer()
_TYPES = frozenset({"S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"})


def _plain(v: Any) -> Any:
    """A value as the resource layer returns it, whether or not boto3 has already decoded it."""
    if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in _TYPES:
        return _DESER.deserialize(v)  # type: ignore[arg-type]
    return v


@contextlib.contextmanager
def fake_aws_env(extra: dict[str, str] | None = None) -> Iterator[None]:
    """Fake credentials and the given variables; everything restored (and the runtime reset) after."""
    from reminders import runtime

    saved = dict(os.environ)
    for k in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        os.environ.pop(k, None)
    os.environ.update(FAKE_ENV)
    os.environ.update(extra or {})
    boto3.setup_default_session()
    runtime.reset()
    try:
        with warnings.catch_warnings():
            # Powertools warns when an invocation published no metric (an empty poll, a skip)
            warnings.filterwarnings("ignore", message="No application metrics to publish")
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        boto3.DEFAULT_SESSION = None
        runtime.reset()


def create_stack_resources(
    max_receive_count: int = 20, visibility_timeout: int = 180, dispatch_visibility_timeout: int = 360
) -> dict[str, str]:
    """The table (with its ``due`` and ``attention`` GSIs), the queues and their DLQs as the stack
    defines them; returns the environment the template gives each function."""
    ddb = boto3.client("dynamodb")
    ddb.create_table(
        TableName="reminders",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "gpk", "gsk", "nx", "nxs")
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "due",
                "KeySchema": [
                    {"AttributeName": "gpk", "KeyType": "HASH"},
                    {"AttributeName": "gsk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["rid", "v", "chs", "w"]},
            },
            {
                "IndexName": "attention",  # sparse: only reminders a person should look at
                "KeySchema": [
                    {"AttributeName": "nx", "KeyType": "HASH"},
                    {"AttributeName": "nxs", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    )
    # AWS and dynalite keep a new table CREATING: poll every 0.1 s (botocore sleeps a float; its
    # stubs type Delay as int).
    ddb.get_waiter("table_exists").wait(
        TableName="reminders",
        WaiterConfig={"Delay": 0.1, "MaxAttempts": 1200},  # type: ignore[typeddict-item]
    )
    sqs = boto3.client("sqs")
    env = {"TABLE_NAME": "reminders"}
    for name in ("email", "webhook", "dispatch"):
        dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        q = sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(
                    visibility_timeout if name != "dispatch" else dispatch_visibility_timeout
                ),
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": arn, "maxReceiveCount": str(max_receive_count)}
                ),
            },
        )["QueueUrl"]
        env[f"{name.upper()}_QUEUE_URL"] = q
        env[f"{name.upper()}_DLQ_URL"] = dlq
    env.update(
        {
            "DUE_SHARDS": "16",
            "MAX_RECEIVE_COUNT": str(max_receive_count),
            "WEBHOOK_SIGNING_SECRET": DEV_SECRET,
            "ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8",
            "BOOTSTRAP_PRINCIPAL": OPERATOR_PRINCIPAL,
            # SES's own quota is not the subject of these runs: no email rate limit of ours.
            "EMAIL_RATE_PER_SECOND": "0",
            "EMAIL_FROM": "reminders@example.com",
            # Issue 24: bare URLs sign with their account's implicit endpoint (envelope-sealed under
            # this key in moto's KMS); the run is a cut-over, so the migration window is open (its
            # receivers verify with the development secret).
            "ENDPOINT_KEY_ID": boto3.client("kms").create_key(Description="endpoint secrets")["KeyMetadata"][
                "Arn"
            ],
            "SIGNING_CUTOVER_AT": datetime.now(UTC).isoformat(),
        }
    )
    return env


# -- invoking handlers like Lambda does ------------------------------------------------------------


#: The benchmarks' API caller: the bootstrap principal (every account).
OPERATOR_PRINCIPAL = "arn:aws:iam::111111111111:role/reminders-operator"


def lambda_context(function_name: str = "bench") -> Any:
    """A LambdaContext stand-in (typed Any: handlers annotate Powertools' LambdaContext)."""
    from reminders_ops.invoke import lambda_context as make

    return make(function_name)


def http_event(
    method: str, path: str, body: Any = None, query: dict[str, str] | None = None
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) event."""
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": urlencode(query or {}),
        "queryStringParameters": query or None,
        "headers": {"content-type": "application/json", "host": "localhost"},
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "local",
            "domainName": "localhost",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "bench",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Dec/2026:09:00:00 +0000",
            "timeEpoch": 0,
            "authorizer": {"iam": {"userArn": OPERATOR_PRINCIPAL, "callerId": "bench"}},
        },
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


def scheduled_event() -> dict[str, Any]:
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT,
        "time": "2026-12-01T09:00:00Z",
        "region": REGION,
        "resources": [f"arn:aws:events:{REGION}:{ACCOUNT}:rule/tick"],
        "detail": {},
    }


class Poller:
    """A minimal SQS event source mapping: receive a batch, invoke, delete what did not fail."""

    def __init__(self, sqs: Any, url: str, handler: Callable[[dict[str, Any], Any], Any]) -> None:
        self.sqs = sqs
        self.url = url
        self.handler = handler
        self.arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        self.invocations = 0
        self.errors = 0
        #: reminder id -> (when its message was received, its SentTimestamp in s), when set
        self.received: dict[str, tuple[float, float]] | None = None

    def poll_once(self) -> int:
        msgs = self.sqs.receive_message(
            QueueUrl=self.url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=1,  # a long poll, as the event source mapping's (answers when one is visible)
        ).get("Messages", [])
        if not msgs:
            return 0
        if self.received is not None:
            at = time.time()
            for m in msgs:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    rid = json.loads(m["Body"])["reminder_id"]
                    self.received.setdefault(rid, (at, int(m["Attributes"]["SentTimestamp"]) / 1000))
        self.invocations += 1
        try:
            result = self.handler(sqs_event(msgs, self.arn), lambda_context())
        except Exception:  # a crashed invocation: every record comes back after its visibility
            self.errors += 1
            return len(msgs)
        failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
        done = [m for m in msgs if m["MessageId"] not in failed]
        if done:
            self.sqs.delete_message_batch(
                QueueUrl=self.url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
            )
        return len(msgs)


class TimedReceiver(WebhookReceiver):
    """The local receiver, also noting when each ``webhook-id`` first arrived."""

    def __init__(self, secret: str) -> None:
        super().__init__(secret)
        self.first_seen: dict[str, float] = {}

    def handle(self, raw: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], float]:
        t = time.time()
        key = headers.get("webhook-id", "")
        with self.lock:
            self.first_seen.setdefault(key, t)
        return super().handle(raw, headers)


def api_create(i: int, due: float, url: str) -> dict[str, Any]:
    from datetime import UTC, datetime

    from reminders.handlers.api import handler

    acct = f"acct-{i % 100:05d}"
    body = {
        "account_id": acct,
        "key": f"renewal-reminder:{acct}:2026-12-20:webhook:{i:07d}",
        "kind": "renewal",
        "due_at": datetime.fromtimestamp(due, UTC).isoformat(),
        "channels": [{"type": "webhook", "url": f"{url}/hooks/{acct}"}],
        "template": {"id": "renewal", "version": 1},
        "data": {"renewal_date": "2026-12-20", "plan": "pro", "subscription_id": f"sub_{i:010d}"},
    }
    resp = handler(http_event("POST", "/reminders", body), lambda_context("api"))
    if resp["statusCode"] not in (200, 201):
        raise RuntimeError(f"create failed: {resp['statusCode']} {resp.get('body')}")
    created: dict[str, Any] = json.loads(resp["body"])
    return created


# -- 3. lateness on the embedded runtime ------------------------------------------------------------


class ScalingPollers:
    """The event source's concurrency as Lambda scales it for a standard queue (the simulator's
    model, bench/LATENCY_MODEL.md): ``start`` pollers (each a batch in flight), once a second up to
    ``per_second`` more while a message waits visible and unreceived, at most ``cap`` (the
    template's ``MaximumConcurrency``). ``fixed`` pollers instead: no scaling."""

    def __init__(
        self,
        sqs: Any,
        url: str,
        handler: Callable[[dict[str, Any], Any], Any],
        *,
        cap: int,
        start: int,
        per_second: int,
    ) -> None:
        self.sqs, self.url, self.handler = sqs, url, handler
        self.cap, self.start, self.per_second = cap, min(start, cap), per_second
        self.polls: list[Poller] = []
        self.received: dict[str, tuple[float, float]] = {}
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def _add(self, k: int) -> None:
        for _ in range(max(0, min(k, self.cap - len(self.polls)))):
            p = Poller(self.sqs, self.url, self.handler)
            p.received = self.received
            t = threading.Thread(target=self._loop, args=(p,), daemon=True)
            self.polls.append(p)
            self._threads.append(t)
            t.start()

    def _loop(self, p: Poller) -> None:
        while not self._stop.is_set():
            p.poll_once()

    def waiting(self) -> int:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.url, AttributeNames=["ApproximateNumberOfMessages"]
        )
        return int(attrs["Attributes"]["ApproximateNumberOfMessages"])

    def __enter__(self) -> ScalingPollers:
        self._add(self.start)
        self._scaler = threading.Thread(target=self._scale, daemon=True)
        self._scaler.start()
        return self

    def _scale(self) -> None:
        while not self._stop.wait(1.0):
            if len(self.polls) < self.cap and self.waiting() > 0:
                self._add(self.per_second)

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for t in [self._scaler, *self._threads]:
            t.join(timeout=10)


def embedded_lateness(
    n: int = 200, *, lead: tuple[float, float] = (20.0, 50.0), pollers: int | None = None
) -> dict[str, Any]:
    """``n`` reminders created through the API, due at whole seconds spread over ``lead`` (seconds
    after the run starts; all are created before the first falls due), delivered by the real
    webhook handler polled like an event source (``pollers`` fixed, or by default scaled as Lambda
    scales an SQS event source up to the template's MaximumConcurrency); moto runs in its own
    process, as AWS is not in the function's; lateness measured at the receiver (arrival - due)."""
    from reminders.handlers.delivery import webhook_handler

    from reminders_ops.local.faithful import start_moto_server

    from .engine import SCALE_PER_SECOND, START_BATCHES
    from .model import Deployment

    cap = pollers or Deployment.from_template().delivery_max_concurrency
    server, port = start_moto_server(60.0, "--quick")  # faithful (and without its own overhead)
    rng = random.Random(17)
    try:
        with (
            fake_aws_env({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "POWERTOOLS_LOG_LEVEL": "WARNING"}),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            os.environ.update(create_stack_resources())
            sqs = boto3.client("sqs")
            rx = TimedReceiver(DEV_SECRET)
            with rx:
                due_of: dict[str, tuple[float, float]] = {}
                rid_of: dict[str, str] = {}  # delivery key -> reminder id
                t0 = time.time()
                for i in range(n):
                    due = float(math.ceil(t0 + rng.uniform(*lead)))
                    now = time.time()
                    created = api_create(i, due, rx.url)
                    # the sub-second rest SQS's whole seconds (rounded down) leave the consumer to wait
                    due_of[created["deliveries"][0]["key"]] = (due, (due - now) - math.floor(due - now))
                    rid_of[created["deliveries"][0]["key"]] = created["id"]
                creating = time.time() - t0
                esm = ScalingPollers(
                    sqs,
                    os.environ["WEBHOOK_QUEUE_URL"],
                    webhook_handler,
                    cap=cap,
                    start=pollers or START_BATCHES,
                    per_second=int(SCALE_PER_SECOND),
                )
                with esm:
                    deadline = max(d for d, _ in due_of.values()) + 30
                    while time.time() < deadline and len(rx.first_seen) < n:
                        time.sleep(0.2)
                polls = esm.polls
                snap = rx.snapshot()
    finally:
        server.terminate()
        server.wait(timeout=10)
    late = [rx.first_seen[k] - d for k, (d, _) in due_of.items() if k in rx.first_seen]
    # where the time goes: visible (sent + whole seconds rounded down) -> received -> at the receiver
    to_receive, to_send = [], []
    for k, (d, _) in due_of.items():
        got = esm.received.get(rid_of[k])
        if got is not None and k in rx.first_seen:
            to_receive.append(got[0] - (got[1] + math.floor(d - got[1])))
            to_send.append(rx.first_seen[k] - max(got[0], d))
    rounding = [r for _, r in due_of.values()]
    from .scenarios import pct

    return {
        "n": n,
        "arrived": len(late),
        "lost": n - len(late),
        "duplicates_accepted": snap["duplicates_accepted"],
        "p50_seconds": pct(late, 0.5),
        "p99_seconds": pct(late, 0.99),
        "max_seconds": max(late) if late else float("nan"),
        "early_sends": sum(1 for x in late if x < 0),
        "subsecond_wait_p50_seconds": pct(rounding, 0.5),
        "subsecond_wait_p99_seconds": pct(rounding, 0.99),
        "visible_to_received_p50_seconds": pct(to_receive, 0.5),
        "visible_to_received_p99_seconds": pct(to_receive, 0.99),
        "due_or_received_to_send_p50_seconds": pct(to_send, 0.5),
        "due_or_received_to_send_p99_seconds": pct(to_send, 0.99),
        "pollers": len(polls),
        "pollers_cap": cap,
        "poller_errors": sum(p.errors for p in polls),
        "creation_seconds": creating,
        "created_before_first_due": t0 + creating <= min(d for d, _ in due_of.values()),
        "goal_p99_seconds": 0.5,
        "goal_p50_seconds": 0.2,
    }


# -- 4. AWS API calls counted on moto -----------------------------------------------------------------


class CallCounter:
    """botocore ``before-call``/``after-call`` hooks: every API call per (step, service, operation),
    DynamoDB write units from the item's size before and after (read from moto's backend, which
    costs no API call), read units from the items returned, GSI writes from the key change."""

    def __init__(self) -> None:
        self.step = "setup"
        self.calls: Counter[tuple[str, str, str]] = Counter()
        self.units: defaultdict[tuple[str, str], float] = defaultdict(float)
        self._pending: dict[int, tuple[str, int, tuple[Any, ...] | None]] = {}

    def install(self, session: Any) -> None:
        session.events.register("before-call", self._before)
        session.events.register("after-call", self._after)

    def _step_for(self, service: str, op: str, params: dict[str, Any]) -> str:
        step = self.step
        if step == "consume" and service == "dynamodb":
            if op == "UpdateItem":
                update = params.get("UpdateExpression", "")
                return "claim" if ":sending" in update or "dl.#c.lo = :w" in update else "record"
            return "record"
        if step == "consume" and service == "sqs" and op.startswith("SendMessage"):
            return "record"
        return step

    @staticmethod
    def _backend_item(params: dict[str, Any]) -> dict[str, Any] | None:
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.models.dynamo_type import DynamoType

        key = params.get("Key") or {k: params["Item"][k] for k in ("pk", "sk") if k in params.get("Item", {})}
        if "pk" not in key:
            return None
        table = dynamodb_backends[ACCOUNT][REGION].get_table(params["TableName"])
        item = table.get_item(DynamoType(key["pk"]), DynamoType(key["sk"]))
        if item is None:
            return None
        return {k: _plain(v) for k, v in item.to_json()["Attributes"].items()}

    @staticmethod
    def _gsi(item: dict[str, Any] | None) -> tuple[Any, ...] | None:
        if not item or "gpk" not in item:
            return None
        return (item["gpk"], item["gsk"], item.get("v"), item.get("w"), tuple(item.get("chs", ())))

    def _before(self, model: Any, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        service, op = model.service_model.service_name, model.name
        body = params.get("body")  # the serialized request: JSON for DynamoDB and SQS
        try:
            params = json.loads(body) if body else {}
        except (TypeError, ValueError):
            params = {}
        step = self._step_for(service, op, params)
        self.calls[(step, service, op)] += 1
        context["bench_step"] = step
        if service == "dynamodb" and op in ("PutItem", "UpdateItem", "DeleteItem"):
            before = self._backend_item(params)
            context["bench_write"] = (step, item_size(before) if before else 0, self._gsi(before), params)
        elif service == "dynamodb":
            context["bench_read"] = (step, params)

    def _after(self, model: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if model.name == "ReceiveMessage" and not parsed.get("Messages"):
            step = context.get("bench_step", self.step)  # an empty poll: the written model prices those
            self.calls[(step, "sqs", "ReceiveMessage")] -= 1
            self.calls[(step, "sqs", "ReceiveMessage(empty)")] += 1
        if "bench_write" in context:
            step, before, gsi_before, params = context.pop("bench_write")
            after = self._backend_item(params)
            self.units[("WRU", step)] += write_units(max(before, item_size(after) if after else 0))
            gsi_after = self._gsi(after)
            if gsi_after is not None and gsi_after != gsi_before:
                writes = 1 if gsi_before is None or gsi_before[:2] == gsi_after[:2] else 2
                self.units[("GSI_WRU", "index" if step == "create" else step)] += writes
        elif "bench_read" in context:
            step, params = context.pop("bench_read")
            op = model.name

            def size(item: dict[str, Any]) -> int:
                return item_size({k: _plain(v) for k, v in item.items()})

            if op == "GetItem":
                item = parsed.get("Item")
                self.units[("RRU", step)] += read_units(
                    size(item) if item else 0, consistent=bool(params.get("ConsistentRead"))
                )
            elif op == "BatchGetItem":
                for items in parsed.get("Responses", {}).values():
                    self.units[("RRU", step)] += sum(read_units(size(i), consistent=False) for i in items)
            elif op == "Query":
                total = sum(size(i) for i in parsed.get("Items", []))
                self.units[("RRU", step)] += read_units(total, consistent=False)


def moto_cost(
    n: int = 200,
    *,
    beyond_fraction: float = 0.9,
    empty_ticks: int = 5,
    far: tuple[float, float] = (12.0, 25.0),
    near: tuple[float, float] = (2.0, 8.0),
    watch_lag: int = 12,
    shards: int = 16,
) -> dict[str, Any]:
    """Count every AWS API call of a small run on in-process moto: ``n`` single-channel reminders,
    ``beyond_fraction`` of them due beyond the delay window. To finish in seconds, the window is
    scaled down to 10 s (DELAY_WINDOW_SECONDS), the watchdog lag to 12 s and the rule to 1 s: the
    same code paths and calls per reminder, faster. ``empty_ticks`` ticks before any reminder
    exists measure the per-tick (fixed) calls, reported apart."""
    from moto import mock_aws
    from reminders.handlers.delivery import webhook_handler
    from reminders.handlers.dispatcher import shard_handler, tick_handler
    from reminders.services.dispatch import Dispatcher

    counter = CallCounter()
    rng = random.Random(23)
    far_range = far
    original_watch = Dispatcher._watch

    def labelled_watch(self: Dispatcher, *args: Any, **kwargs: Any) -> Any:
        previous, counter.step = counter.step, "watchdog"
        try:
            return original_watch(self, *args, **kwargs)
        finally:
            counter.step = previous

    extra = {
        # the worker id written into every attempt record is "<function name>:<12 hex>": use a
        # deployed-length name so item sizes (and so write units) are those of AWS
        "AWS_LAMBDA_FUNCTION_NAME": "RemindersStack-DeliveryWebhookDeliveryFunctionAE20B3-Xk7P2mQ9rT4v",
        "DELAY_WINDOW_SECONDS": "10",
        "WATCH_LAG_SECONDS": str(watch_lag),
        "CURSOR_START_BACK_SECONDS": "60",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    invocations: Counter[str] = Counter()
    from reminders_ops.local.faithful import faithful_moto

    faithful_moto()
    with fake_aws_env(extra), mock_aws(), contextlib.redirect_stdout(io.StringIO()):
        os.environ.update(create_stack_resources())
        os.environ["DUE_SHARDS"] = str(shards)
        assert boto3.DEFAULT_SESSION is not None
        counter.install(boto3.DEFAULT_SESSION)  # before any client the handlers or pollers use
        sqs = boto3.client("sqs")
        Dispatcher._watch = labelled_watch  # type: ignore[method-assign]
        try:
            dispatch = Poller(sqs, os.environ["DISPATCH_QUEUE_URL"], shard_handler)
            webhook = Poller(sqs, os.environ["WEBHOOK_QUEUE_URL"], webhook_handler)

            def tick() -> None:
                counter.step = "dispatch"
                tick_handler(scheduled_event(), lambda_context("tick"))
                invocations["tick"] += 1
                while dispatch.poll_once():
                    pass

            with WebhookReceiver(DEV_SECRET) as rx:
                for _ in range(empty_ticks):
                    tick()
                fixed_calls = Counter(counter.calls)
                fixed_units = dict(counter.units)
                counter.step = "create"
                dues: list[float] = []
                beyond = 0
                for i in range(n):
                    now = time.time()
                    far_one = rng.random() < beyond_fraction
                    beyond += far_one
                    ahead = rng.uniform(*far_range) if far_one else rng.uniform(*near)
                    due = float(math.ceil(now + ahead))
                    dues.append(due)
                    api_create(i, due, rx.url)
                invocations["api"] += n
                ticks_loaded = 0
                end = max(dues) + watch_lag + 2
                last_tick = 0.0
                while time.time() < end + 30:
                    if time.time() - last_tick >= 1.0:
                        last_tick = time.time()
                        tick()
                        ticks_loaded += 1
                    counter.step = "consume"
                    while webhook.poll_once():
                        pass
                    if time.time() > end and len(rx.snapshot()["accepted"]) >= n:
                        break
                    time.sleep(0.05)
                accepted = rx.snapshot()
        finally:
            Dispatcher._watch = original_watch  # type: ignore[method-assign]
    invocations["shard"] = dispatch.invocations
    invocations["webhook"] = webhook.invocations
    per_tick_calls = {k: v / empty_ticks for k, v in fixed_calls.items()}
    per_tick_units = {k: v / empty_ticks for k, v in fixed_units.items()}
    variable_calls: dict[str, float] = {}
    for (step, service, op), c in counter.calls.items():
        c2 = c - per_tick_calls.get((step, service, op), 0.0) * (empty_ticks + ticks_loaded)
        if c2 > 1e-9:
            variable_calls[f"{step} {service}:{op}"] = c2 / n
    variable_units: dict[str, float] = {}
    for (kind, step), u in counter.units.items():
        u2 = u - per_tick_units.get((kind, step), 0.0) * (empty_ticks + ticks_loaded)
        if u2 > 1e-9:
            variable_units[f"{step} {kind}"] = u2 / n
    return {
        "n": n,
        "beyond_window": beyond,
        "delivered": len(accepted["accepted"]),
        "duplicates_accepted": accepted["duplicates_accepted"],
        "ticks": empty_ticks + ticks_loaded,
        "calls_total": {f"{s} {sv}:{op}": c for (s, sv, op), c in sorted(counter.calls.items())},
        "calls_per_tick": {f"{s} {sv}:{op}": c for (s, sv, op), c in sorted(per_tick_calls.items())},
        "calls_per_reminder": dict(sorted(variable_calls.items())),
        "units_per_reminder": dict(sorted(variable_units.items())),
        "lambda_invocations": dict(invocations),
    }
