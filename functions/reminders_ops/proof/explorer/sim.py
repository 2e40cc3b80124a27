"""The explorer's world: the real API handler (the Powertools resolver, API Gateway v2 events) and the
real services on the one in-memory world (``reminders_ops.world``) and the in-memory twins of every
store, on one virtual clock; the network (a receiver per host, deduplicating or not) and SES as
recording models. ``installed()`` puts the world behind ``reminders.runtime`` for the run and takes
it away after (every factory restored).

Determinism: the clock is virtual; endpoint ids, secrets and SQS message ids come from the seed (the
modules' ``secrets`` / ``uuid`` are replaced for the run), so one seed and one action list replay.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

from aws_lambda_powertools.utilities.typing import LambdaContext
from reminders import runtime
from reminders.adapters.clock import FixedClock
from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.endpoints_store import MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.event_endpoints_store import MemoryEventEndpointStore
from reminders.adapters.grants_store import MemoryGrantStore
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_attention import MemoryAttentionIndex
from reminders.adapters.receipts import EndpointReceiverSecrets, MemoryReceiptLog
from reminders.adapters.ses import SesEmailSender
from reminders.adapters.suppression import MemorySuppressionList
from reminders.adapters.templates_store import MemoryTemplateStore
from reminders.adapters.webhook import WebhookSender
from reminders.domain.ports import NullTelemetry
from reminders.domain.retry import RetryPolicy
from reminders.services.endpoints import Endpoints
from reminders.services.opevents import OpEvents
from reminders.services.receipts import ReceiptInbox, ReceiptMerger
from reminders.services.reconcile import Reconciler
from reminders.services.render import TemplateRenderer
from reminders.services.templates import Templates, VersionCache
from reminders.services.tenancy import Tenancy
from reminders.services.unsubscribe import Unsubscribe

from reminders_ops.world import InMemoryWorld

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
PUBLIC_IP = "93.184.216.34"  # a public address (the SSRF guard refuses documentation ranges)
STACK_SECRET = "whsec_" + "c3RhY2stc2VjcmV0LWZvci10aGUtZXhwbG9yZXI="  # the stack's former channel secret
UNSUBSCRIBE_SECRET = "explorer-unsubscribe-secret"
VISIBILITY_TIMEOUT = 180
MAX_RECEIVE_COUNT = 20
SHARDS = 4
MAX_ATTEMPTS = 3  # env MAX_ATTEMPTS (8): a failing host exhausts it before it is held (cycles.py)
#: Receiver kinds by host: ``dedupe`` answers 409 to a webhook-id it accepted, ``plain`` accepts every
#: POST (no deduplication), ``gone`` answers 410, ``flaky`` answers 503.
RECEIVER_KINDS = ("dedupe", "plain", "gone", "flaky")


def principal_of(account: str) -> str:
    return f"arn:aws:iam::111111111111:role/{account}"


def url_of(account: str, kind: str, n: int = 0) -> str:
    return f"https://{account}-{kind}-{n}.example.com/hook"


def _restore_env(var: str, old: str | None) -> None:
    if old is None:
        os.environ.pop(var, None)
    else:
        os.environ[var] = old


class Crash(BaseException):
    """A process died here: not an exception any batch processor or handler catches."""


# -- the network ----------------------------------------------------------------------------------
@dataclass
class Post:
    """One webhook POST as its receiver saw it."""

    at: float
    host: str
    key: str
    body: bytes
    headers: dict[str, str]
    status: int
    accepted: bool  # the receiver took this body (2xx): it acted on it
    timeout: bool = False


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    timeout: bool = False


class _Response:
    def __init__(self, reply: Reply) -> None:
        self.status = reply.status
        self._headers = {k.lower(): v for k, v in reply.headers.items()}

    def read(self, amt: int | None = None) -> bytes:
        return b"{}"

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self._headers.get(name.lower(), default)


class SimConnection:
    """The sender's pinned HTTP(S) connection: the simulation's network (``sim`` set for the run)."""

    sim: Sim | None = None

    def __init__(self, target: Any, timeout: float, connect_timeout: float, context: Any = None) -> None:
        self.target = target
        self._reply: Reply | None = None

    def connect(self) -> None:
        return None

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> None:
        assert self.sim is not None
        self._reply = self.sim.receive_post(self.target.host, body or b"", headers or {})

    def getresponse(self) -> _Response:
        assert self._reply is not None
        if self._reply.timeout:
            raise TimeoutError("read timed out")
        return _Response(self._reply)

    def close(self) -> None:
        return None


@dataclass
class Email:
    at: float
    key: str
    reminder_id: str
    to: str
    raw: bytes
    message_id: str


class SesModel:
    """The ``sesv2`` client: honours no idempotency key; every call that reaches it is an email."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim

    def send_email(self, **kwargs: Any) -> dict[str, Any]:
        return self.sim.receive_email(kwargs)


# -- telemetry ------------------------------------------------------------------------------------------
class CountingTelemetry(NullTelemetry):
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + int(value)


@dataclass
class OffsetClock:
    """A consumer host's clock: the virtual clock off by ``offset`` seconds (skew)."""

    base: FixedClock
    offset: float = 0.0

    def now(self) -> datetime:
        return self.base.now() + timedelta(seconds=self.offset)

    def sleep(self, seconds: float) -> None:
        self.base.sleep(seconds)


@dataclass
class Context:
    function_name: str = "explorer"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:111111111111:function:explorer"
    aws_request_id: str = "explorer"
    log_group_name: str = "/aws/lambda/explorer"
    log_stream_name: str = "explorer"
    function_version: str = "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def context() -> LambdaContext:
    return cast(LambdaContext, Context())


# -- the world ----------------------------------------------------------------------------------------
@dataclass
class Sim:
    seed: int
    accounts: tuple[str, ...] = ("acct-a", "acct-b", "acct-x")
    adversary: str = "acct-x"
    start: datetime = T0  # the virtual clock's start (a profile may start near a DST change)
    rng: random.Random = field(init=False)
    posts: list[Post] = field(default_factory=list)
    emails: list[Email] = field(default_factory=list)
    stream: list[dict[str, str]] = field(default_factory=list)  # receipt items the stream has not applied
    #: secret -> the account whose endpoint held it (every key ever seen in the endpoint store)
    key_owner: dict[str, str] = field(default_factory=dict)
    #: the answer the receiver gives to its next POSTs (a fault action arms it): status or "timeout_after"
    receiver_next: list[str] = field(default_factory=list)
    ses_next: list[str] = field(default_factory=list)
    #: delivery key -> SES's answers to each send of it (``accepted``, ``throttle``, ``timeout_after``)
    ses_trace: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.ids = random.Random(self.seed * 7919 + 1)  # ids and secrets: apart from the actions
        self.clock = FixedClock(self.start)
        self.telemetry = CountingTelemetry()
        self.store = MemoryReminderStore(clock=self.clock)
        self.world = InMemoryWorld.build(
            clock=self.clock,
            telemetry=self.telemetry,
            store=self.store,
            shards=SHARDS,
            visibility_timeout=VISIBILITY_TIMEOUT,
            max_receive_count=MAX_RECEIVE_COUNT,
            policy=RetryPolicy(max_attempts=MAX_ATTEMPTS),
        )
        self.sqs, self.queues = self.world.sqs, self.world.queues
        self.destinations = DestinationPolicy(resolver=lambda host, port: [PUBLIC_IP])
        self.endpoint_store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
        self.grants = MemoryGrantStore()
        for a in self.accounts:
            self.grants.grant(principal_of(a), a)
        self.suppressions = MemorySuppressionList()
        self.health = self.world.health_guard()
        # Issue 30, as the runtime: one template store; the API's instance checks a create's or a
        # correction's version, the consumers' instance (its own cache) renders the sends.
        self.template_store = MemoryTemplateStore()
        self.templates_api = self._templates()
        self.templates_send = self._templates()
        self.endpoints_api = self._endpoints()
        self.endpoints_send = self._endpoints()  # the consumers' instance: its own lookup cache
        self.unsubscribe = Unsubscribe(
            suppressions=self.suppressions,
            secret=lambda: UNSUBSCRIBE_SECRET.encode(),
            clock=self.clock,
            telemetry=self.telemetry,
            base_url="https://api.example.com",
            mailto=None,
        )
        self.shards = SHARDS
        self.reminders = self._reminders()
        self.receipt_log = MemoryReceiptLog(on_put=self.stream.append)
        self.receipt_inbox = ReceiptInbox(
            store=self.store,
            log=self.receipt_log,
            secrets=EndpointReceiverSecrets(self.endpoints_api.for_send, self.clock.now),
            clock=self.clock,
            telemetry=self.telemetry,
        )
        self.receipt_merger = ReceiptMerger(store=self.store, clock=self.clock, telemetry=self.telemetry)
        self.event_endpoints = MemoryEventEndpointStore()
        self.opevents = OpEvents(
            registrations=self.event_endpoints,
            endpoints=self.endpoints_api,
            reminders=self.reminders,
            clock=self.clock,
            telemetry=self.telemetry,
        )
        self.tenancy = Tenancy(accounts_of=self.grants.accounts)
        self.attention = MemoryAttentionIndex(self.store)
        webhook = WebhookSender(
            policy=self.destinations,
            secret=lambda: STACK_SECRET,
            clock=self.clock,
            timeout_seconds=self.world.policy.provider_timeout_seconds,
            endpoints=self.endpoints_send.signing_endpoint,
        )
        email = SesEmailSender(
            SesModel(self),
            from_address="reminders@example.com",
            configuration_set="reminders",
            headers=self.unsubscribe.headers,
        )
        self.senders = {"webhook": webhook, "email": email}
        self.skews: dict[str, float] = {"w1": 0.0, "w2": 0.0}
        self.dispatch_skew = 0.0
        self.generation = 0

    # -- wiring ------------------------------------------------------------------------------------
    def _endpoints(self) -> Endpoints:
        return Endpoints(
            store=self.endpoint_store,
            reminders=self.store,
            clock=self.clock,
            telemetry=self.telemetry,
            check_url=self._check_url,
            health=self.health.store,
        )

    def _templates(self) -> Templates:
        return Templates(
            store=self.template_store, clock=self.clock, cache=VersionCache(monotonic=self.now_ts)
        )

    def renderer(self) -> TemplateRenderer:
        return TemplateRenderer(self.templates_send)

    def _check_url(self, url: str) -> None:
        self.destinations.resolve(url, field="url")

    def _check_destination(self, spec: Any) -> None:
        from reminders.adapters.destinations import InvalidDestinationError, valid_email
        from reminders.domain.endpoints import is_endpoint_id

        if spec.type.value == "webhook" and is_endpoint_id(spec.destination):
            return
        if spec.type.value == "webhook":
            self.destinations.resolve(spec.destination, field="channels.url")
        elif not valid_email(spec.destination):
            raise InvalidDestinationError("channels.to", "not a valid email address")

    def _reminders(self) -> Any:
        return self.world.reminders(
            check_destination=self._check_destination,
            use_endpoint=lambda *a, **k: self.endpoints_api.use(*a, **k),
            check_template=lambda *a, **k: self.templates_api.check_reminder(*a, **k),
            shards=self.shards,
        )

    def change_shards(self, shards: int) -> None:
        """A redeploy with another ``due_shards``: new API instances, the dispatcher told."""
        self.shards = shards
        self.reminders = self._reminders()
        self.opevents.reminders = self.reminders

    def deliverer(self, worker: str, store: Any = None) -> Any:
        self.generation += 1
        return self.world.deliverer(
            worker=f"{worker}-{self.generation}",
            senders=self.senders,
            rng=random.Random(self.seed * 100_003 + self.generation),
            # as the runtime: the host's clock corrected by a lower bound of the store's (issue 25.7)
            clock=runtime.consumer_clock(OffsetClock(self.clock, self.skews.get(worker, 0.0)), self.store),
            store=store,
            suppressions=self.suppressions,
            endpoints=self.endpoints_send.for_send,
            renderer=self.renderer(),
        )

    def dispatcher(self, store: Any = None) -> Any:
        self.generation += 1
        return self.world.dispatcher(
            worker=f"dispatch-{self.generation}",
            clock=OffsetClock(self.clock, self.dispatch_skew),
            store=store,
            shards=self.shards,
        )

    def now_ts(self) -> float:
        return self.clock.now().timestamp()

    # -- the receiver model --------------------------------------------------------------------------
    def receive_post(self, host: str, body: bytes, headers: dict[str, str]) -> Reply:
        h = {k.lower(): v for k, v in headers.items()}
        key = h.get("webhook-id", "")
        kind = host.split(".", 1)[0].split("-")[-2] if host.count("-") >= 2 else "dedupe"
        armed = self.receiver_next.pop(0) if self.receiver_next else None
        timeout = False
        if kind == "gone":
            status = 410
        elif kind == "flaky":
            status = 503
        elif armed in ("500", "503", "429", "400"):
            status = int(armed)
        else:
            status = 200
            if armed == "timeout_after":
                timeout = True  # the receiver took it; the answer never came back
            elif armed == "timeout_before":
                status, timeout = 0, True
        accepted = status == 200
        if accepted and kind == "dedupe" and any(p.key == key and p.accepted for p in self.posts):
            status, accepted = 409, False
        self.posts.append(Post(self.now_ts(), host, key, body, h, status, accepted, timeout))
        return Reply(status, {}, timeout=timeout)

    def receive_email(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        from botocore.exceptions import ClientError, ReadTimeoutError

        armed = self.ses_next.pop(0) if self.ses_next else None
        tags = {t["Name"]: t["Value"] for t in kwargs.get("EmailTags", [])}
        self.ses_trace.setdefault(tags.get("delivery_key", ""), []).append(armed or "accepted")
        if armed == "throttle":
            raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "x"}}, "SendEmail")
        message_id = "ses-" + hashlib.sha256(f"{len(self.emails)}:{self.seed}".encode()).hexdigest()[:16]
        self.emails.append(
            Email(
                self.now_ts(),
                tags.get("delivery_key", ""),
                tags.get("reminder_id", ""),
                kwargs["Destination"]["ToAddresses"][0],
                kwargs["Content"]["Raw"]["Data"],
                message_id,
            )
        )
        if armed == "timeout_after":
            raise ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com")
        return {"MessageId": message_id, "ResponseMetadata": {"HTTPStatusCode": 200}}

    def learn_keys(self) -> None:
        """Every signing secret in the endpoint store, by its account (kept after it retires)."""
        from reminders.adapters.endpoints_store import endpoint_from_item

        for raw in list(self.endpoint_store.items.values()):
            endpoint = endpoint_from_item(raw, self.endpoint_store.sealer, self.endpoint_store.deployment_key)
            for k in endpoint.keys:
                self.key_owner.setdefault(k.secret, endpoint.account_id)

    # -- the runtime -----------------------------------------------------------------------------------
    def settings(self) -> runtime.Settings:
        return runtime.Settings(
            table_name="explorer",
            email_queue_url="email",
            webhook_queue_url="webhook",
            email_dlq_url="email-dlq",
            webhook_dlq_url="webhook-dlq",
            dispatch_queue_url="dispatch",
            due_shards=self.shards,
            unsubscribe_base_url="https://api.example.com",
            unsubscribe_signing_secret=UNSUBSCRIBE_SECRET,
        )

    @contextmanager
    def installed(self) -> Iterator[Sim]:
        """This world behind ``reminders.runtime`` (and the network, virtual time, seeded ids)."""
        from aws_lambda_powertools import Logger, Metrics
        from reminders.adapters import memory_sqs
        from reminders.adapters import webhook as webhook_adapter
        from reminders.domain import endpoints as endpoints_domain
        from reminders.services import endpoints as endpoints_service
        from reminders.services import tenancy as tenancy_service

        quiet_logger = Logger(service="explorer", level="ERROR")
        quiet_metrics = Metrics(namespace="explorer")
        factories: dict[str, Any] = {
            "settings": self.settings,
            "logger": lambda: quiet_logger,
            "metrics": lambda: quiet_metrics,
            "telemetry": lambda: self.telemetry,
            "store": lambda: self.store,
            "attention_index": lambda: self.attention,
            "suppressions": lambda: self.suppressions,
            "queues": lambda: self.queues,
            "reminders_service": lambda: self.reminders,
            "endpoint_store": lambda: self.endpoint_store,
            "endpoints_service": lambda: self.endpoints_api,
            "grant_store": lambda: self.grants,
            "tenancy": lambda: self.tenancy,
            "unsubscribe": lambda: self.unsubscribe,
            "endpoint_health": lambda: self.health,
            "receipt_inbox": lambda: self.receipt_inbox,
            "receipt_merger": lambda: self.receipt_merger,
            # as the runtime: SES's bounces and complaints feed the account's suppression list
            "reconciler": lambda: Reconciler(
                store=self.store, clock=self.clock, telemetry=self.telemetry, suppressions=self.suppressions
            ),
            "event_endpoint_store": lambda: self.event_endpoints,
            "opevents_service": lambda: self.opevents,
            "templates_service": lambda: self.templates_api,
        }
        ids = self.ids
        seeded_secrets = SimpleNamespace(
            token_hex=lambda n=32: ids.getrandbits(8 * n).to_bytes(n, "big").hex(),
            token_bytes=lambda n=32: ids.getrandbits(8 * n).to_bytes(n, "big"),
        )
        seeded_uuid = SimpleNamespace(uuid4=lambda: uuid.UUID(int=ids.getrandbits(128), version=4))
        clock = self.clock

        class VirtualDatetime(datetime):
            @classmethod
            def now(cls, tz: Any = None) -> Any:
                return clock.now().astimezone(tz)

        virtual_time = SimpleNamespace(
            time=self.now_ts, monotonic=self.now_ts, perf_counter=self.now_ts, sleep=lambda s: None
        )
        with ExitStack() as stack:

            def patch(target: Any, name: str, value: Any) -> None:
                old = getattr(target, name)
                setattr(target, name, value)
                stack.callback(setattr, target, name, old)

            for name, factory in factories.items():
                patch(runtime, name, factory)
            for var, value in (("POWERTOOLS_METRICS_DISABLED", "true"), ("POWERTOOLS_LOG_LEVEL", "ERROR")):
                stack.callback(_restore_env, var, os.environ.get(var))
                os.environ[var] = value
            patch(webhook_adapter, "_PinnedHTTPConnection", SimConnection)
            patch(webhook_adapter, "_PinnedHTTPSConnection", SimConnection)
            patch(endpoints_domain, "secrets", seeded_secrets)
            patch(memory_sqs, "uuid", seeded_uuid)
            patch(endpoints_service, "time", virtual_time)
            patch(tenancy_service, "time", virtual_time)
            import standardwebhooks.webhooks

            patch(standardwebhooks.webhooks, "datetime", VirtualDatetime)
            # The handlers (one module or routers per resource; imported first): their wall clock is virtual.
            from reminders.handlers import api, opevents, public  # noqa: F401

            api.composition.include_routes(None)  # every router (each imported on its first request)
            for mod_name, mod in list(sys.modules.items()):
                if mod is None or not mod_name.startswith("reminders.handlers"):
                    continue
                if getattr(mod, "datetime", None) is datetime:
                    patch(mod, "datetime", VirtualDatetime)
                if getattr(mod, "time", None) is not None and hasattr(mod.time, "monotonic"):
                    patch(mod, "time", virtual_time)
            # The document is a pure function of the routes: built once per run, not per request
            # (the API builds it on every GET /openapi.json: ~1 s here, most of a short run).
            patch(api.app, "get_openapi_json_schema", functools.cache(api.app.get_openapi_json_schema))
            SimConnection.sim = self
            stack.callback(setattr, SimConnection, "sim", None)
            yield self

    # -- the API, as API Gateway calls it -----------------------------------------------------------
    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        principal: str | None,
        query: dict[str, str] | None = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        public: bool = False,
        route_key: str | None = None,
    ) -> tuple[int, Any]:
        from urllib.parse import urlencode

        from reminders.handlers import api
        from reminders.handlers import public as public_handler

        event: dict[str, Any] = {
            "version": "2.0",
            "routeKey": route_key or "$default",
            "rawPath": path,
            "rawQueryString": urlencode(query or {}),
            "queryStringParameters": query or None,
            "headers": {"content-type": "application/json", "host": "localhost", **(headers or {})},
            "requestContext": {
                "accountId": "111111111111",
                "apiId": "local",
                "domainName": "localhost",
                "http": {
                    "method": method,
                    "path": path,
                    "protocol": "HTTP/1.1",
                    "sourceIp": "127.0.0.1",
                    "userAgent": "explorer",
                },
                "requestId": "explorer",
                "routeKey": route_key or "$default",
                "stage": "$default",
                "time": "29/Nov/2026:00:00:00 +0000",
                "timeEpoch": 0,
            },
            "body": raw.decode() if raw is not None else (json.dumps(body) if body is not None else None),
            "isBase64Encoded": False,
        }
        if principal is not None:
            event["requestContext"]["authorizer"] = {
                "iam": {"userArn": principal, "callerId": "AROA:explorer"}
            }
        handler = public_handler.handler if public else api.handler
        resp = handler(event, context())
        payload = resp.get("body")
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload
        return int(resp["statusCode"]), parsed
