"""Settings (checked once per cold start) and the wiring of adapters into services.

Nothing here runs at import time; every factory is cached per function instance.
"""

from __future__ import annotations

import os
import threading
import uuid
import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import MISSING, dataclass, fields
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics, Tracer

from .domain.schedule import SQS_MAX_DELAY_SECONDS

if TYPE_CHECKING:  # each function imports only the adapters and services its path uses (cold start)
    from .adapters.attention import DynamoAttentionIndex
    from .adapters.destinations import DestinationPolicy
    from .adapters.dynamodb import DynamoReminderStore
    from .adapters.endpoints_store import DynamoEndpointStore
    from .adapters.event_endpoints_store import DynamoEventEndpointStore
    from .adapters.grants_store import DynamoGrantStore
    from .adapters.secrets import CachedSecret
    from .adapters.sqs import SqsQueues
    from .adapters.suppression import DynamoSuppressionList
    from .adapters.telemetry import PowertoolsTelemetry
    from .adapters.tracing import SendTrace
    from .domain.ports import Clock, ReminderStore, Sender
    from .domain.ratelimit import SharedRateLimiter
    from .services.deliver import Deliverer
    from .services.dispatch import Dispatcher
    from .services.endpoints import Endpoints
    from .services.health import EndpointHealthGuard
    from .services.intents import ChannelSpec, Reminders
    from .services.opevents import OpEvents
    from .services.receipts import ReceiptInbox, ReceiptMerger
    from .services.reconcile import Reconciler
    from .services.templates import Templates
    from .services.tenancy import Tenancy
    from .services.unsubscribe import Unsubscribe


class SettingsError(ValueError):
    """A function's configuration (its environment) is missing or malformed: names the variable."""


#: Bounds checked by :meth:`Settings.from_env` (inclusive).
_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "due_shards": (1, 1000),
    "max_receive_count": (2, None),
    "delay_window_seconds": (1, SQS_MAX_DELAY_SECONDS),
    "delivery_max_concurrency": (1, None),
    "retention_days": (30, None),
    "email_rate_per_second": (0, None),
    "stack_signature_days": (0, 7),
}


@dataclass(frozen=True, slots=True)
class Settings:
    """The function's environment, read once. A dataclass, not a pydantic model: the delivery,
    dispatch and event functions never import pydantic (~150-250 ms of their cold start)."""

    table_name: str
    email_queue_url: str
    webhook_queue_url: str
    email_dlq_url: str
    webhook_dlq_url: str
    dispatch_queue_url: str | None = None
    due_shards: int = 16
    max_receive_count: int = 20
    webhook_secret_arn: str | None = None
    webhook_secret_param: str | None = None
    webhook_signing_secret: str | None = None  # local development only
    ses_configuration_set: str | None = None
    email_from: str = "reminders@example.com"
    allow_destination_networks: str = ""
    delay_window_seconds: int = SQS_MAX_DELAY_SECONDS
    watch_lag_seconds: float = 900.0
    cursor_start_back_seconds: int = 3600
    destination_rate_per_second: float | None = None  # per destination, across all instances
    delivery_max_concurrency: int = 20
    endpoint_key_id: str | None = None  # the KMS key wrapping each endpoint's data key
    bootstrap_principal: str | None = None  # an IAM principal ARN that may act for every account
    #: Terminal reminders expire this many days after their terminal state (CDK context
    #: ``reminders:retentionDays``); at least one key generation (domain/retention.py).
    retention_days: int = 90
    #: One-click unsubscribe (issue 19): the public base URL of the API (the link in every email),
    #: the dedicated HMAC secret (Secrets Manager; a plain value for local development only) and
    #: an optional mailto address for List-Unsubscribe.
    unsubscribe_base_url: str | None = None
    unsubscribe_secret_arn: str | None = None
    unsubscribe_signing_secret: str | None = None
    unsubscribe_mailto: str | None = None
    #: The key of the suppression list's address hashes (issue 19: HMAC, not a bare SHA-256):
    #: Secrets Manager, or a plain value for local development only. Unset: the unkeyed form of
    #: before (tests; a stack deployed before the key existed).
    address_hash_secret_arn: str | None = None
    address_hash_secret: str | None = None
    #: The email channel's rate across all consumers; unset: SES's own ``SendQuota.MaxSendRate``
    #: (GetAccount at cold start); 0: no limit of ours.
    email_rate_per_second: float | None = None
    #: Issue 24, the migration from the stack-wide webhook secret: the deploy's cut-over time (ISO
    #: 8601 with offset). For ``stack_signature_days`` after it (at most 7), webhooks through an
    #: implicit endpoint also carry the stack secret's signature; receipts never verify with it.
    #: Unset: no window (a deployment that never signed with the stack secret).
    signing_cutover_at: str | None = None
    stack_signature_days: float = 7.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ) if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            var = f.name.upper()
            if var not in env:
                if f.default is MISSING:
                    raise SettingsError(f"{var} is not set")
                continue
            values[f.name] = _parse(var, env[var], str(f.type), _BOUNDS.get(f.name))
        return cls(**values)


def _parse(var: str, raw: str, kind: str, bounds: tuple[float | None, float | None] | None) -> Any:
    """One environment value as its field's type (``str``, ``int``, ``float``, optional ones)."""
    if kind.startswith("str"):
        return raw
    if raw == "" and kind.endswith("None"):
        return None
    try:
        value: float = int(raw) if kind == "int" else float(raw)
    except ValueError:
        raise SettingsError(f"{var} must be a number, not {raw!r}") from None
    low, high = bounds or (None, None)
    if (low is not None and value < low) or (high is not None and value > high):
        raise SettingsError(f"{var} must be within [{low}, {high}], not {raw}")
    return value


@cache
def settings() -> Settings:
    return Settings.from_env()


@cache
def logger() -> Logger:
    from .adapters.telemetry import RecordFormatter

    return Logger(logger_formatter=RecordFormatter(json_deserializer=_message_as_logged))


def _message_as_logged(message: Any) -> Any:
    """Powertools tries to decode every log message as JSON (a failed ``json.loads`` and its
    exception on each line): our messages are action names, so only one that looks like JSON is
    decoded (an invalid one raises as before and is logged as the string it is)."""
    import json

    return json.loads(message) if isinstance(message, str) and message[:1] in ("{", "[") else message


@cache
def metrics() -> Metrics:
    # An invocation that only acknowledges duplicates publishes no metric: that is fine, not a warning.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
    return Metrics()


@cache
def tracing_enabled() -> bool:
    """Powertools' own rule (in Lambda, not SAM local or Chalice, POWERTOOLS_TRACE_DISABLED not
    set), decided without creating a Tracer: a disabled Tracer still imports the X-Ray SDK's core,
    whose recorder outside Lambda loads the X-Ray service model (~300 ms CPU) for nothing."""
    from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

    if resolve_truthy_env_var_choice(env=os.environ.get("POWERTOOLS_TRACE_DISABLED", "false")):
        return False
    if os.environ.get("AWS_SAM_LOCAL") or os.environ.get("AWS_CHALICE_CLI_MODE"):
        return False
    return bool(os.environ.get("LAMBDA_TASK_ROOT"))


@cache
def tracer() -> Tracer:
    """Powertools Tracer (X-Ray; active tracing in the template); created only when
    :func:`tracing_enabled`. Patches botocore only (AWS calls as subsegments: their service,
    operation and latency, no payload): never http.client, which would record each receiver's URL
    and send X-Ray headers to it (the webhook carries a W3C traceparent instead). Responses and
    errors are not captured (handlers/tracing.py; POWERTOOLS_TRACER_CAPTURE_*=false in the template
    too), and no exception message leaves in a segment (adapters/tracing.py ``IdsOnlyEmitter``): nothing
    personal in a trace."""
    from .adapters.tracing import IdsOnlyEmitter

    traced = Tracer(patch_modules=("botocore",))
    traced.provider.configure(emitter=IdsOnlyEmitter())  # type: ignore[attr-defined]
    return traced


def send_trace(name: str | None = None) -> SendTrace:
    """Each send's subsegment (the webhook's, or ``name``: the email's) and traceparent
    (adapters/tracing.py)."""
    from .adapters.tracing import SEND_SUBSEGMENT, XRaySendTrace, untraced

    return XRaySendTrace(tracer(), name or SEND_SUBSEGMENT) if tracing_enabled() else untraced


def traced_ids(name: str, **ids: str) -> AbstractContextManager[Any]:
    """A subsegment ``name`` annotated with ``ids`` (a receipt merged, a stream record processed);
    nothing without tracing."""
    if not tracing_enabled():
        return nullcontext()
    from .adapters.tracing import ids_only

    return ids_only(tracer(), name, **ids)


@cache
def telemetry() -> PowertoolsTelemetry:
    from .adapters.telemetry import PowertoolsTelemetry

    return PowertoolsTelemetry(logger(), metrics())


@cache
def worker_id() -> str:
    # Short on purpose: it is stored in every attempt of the audit trail (item size = write units).
    return f"{os.environ.get('CHANNEL') or 'fn'}:{uuid.uuid4().hex[:12]}"


@cache
def _client(service: str) -> Any:
    from .adapters.clients import make_client

    if service == "sesv2":
        from .domain.retry import RetryPolicy
        from .domain.timing import SES_CONNECT_TIMEOUT_SECONDS

        # One attempt, and its read timeout inside the attempt's total deadline.
        timeout = RetryPolicy.from_env().provider_timeout_seconds
        client = make_client(
            service, send_read_timeout_seconds=max(1.0, timeout - SES_CONNECT_TIMEOUT_SECONDS)
        )
    else:
        client = make_client(service)
    # Its real retry and timeout settings are logged once per cold start, with every other client's,
    # by handlers/coldstart.py (action ``client_settings``).
    return client


@cache
def store() -> DynamoReminderStore:
    from .adapters.dynamodb import DynamoReminderStore

    s = settings()
    # The low-level client (thread-safe; a boto3 resource is not): records of a batch run in threads.
    return DynamoReminderStore(
        _client("dynamodb"), table_name=s.table_name, cursor_start_back_seconds=s.cursor_start_back_seconds
    )


@cache
def attention_index() -> DynamoAttentionIndex:
    """The support desk's listing (low-level client; the sparse ``attention`` GSI)."""
    from .adapters.attention import DynamoAttentionIndex

    return DynamoAttentionIndex(_client("dynamodb"), settings().table_name)


@cache
def suppressions() -> DynamoSuppressionList:
    """The per-account suppression list (same table, own key prefix, low-level client)."""
    from .adapters.suppression import DynamoSuppressionList
    from .domain.address_hash import AddressHasher

    s = settings()
    hasher = AddressHasher()
    if s.address_hash_secret_arn or s.address_hash_secret:
        secret = _configured_secret(
            s.address_hash_secret_arn,
            None,
            s.address_hash_secret,
            "no address hash secret configured (ADDRESS_HASH_SECRET_ARN)",
        )
        hasher = AddressHasher(lambda: secret().encode())
    return DynamoSuppressionList(_client("dynamodb"), s.table_name, hasher)


@cache
def queues() -> SqsQueues:
    from .adapters.sqs import SqsQueues

    s = settings()
    return SqsQueues(
        _client("sqs"),
        queue_urls={"email": s.email_queue_url, "webhook": s.webhook_queue_url},
        dlq_urls={"email": s.email_dlq_url, "webhook": s.webhook_dlq_url},
        dispatch_url=s.dispatch_queue_url,
    )


@cache
def destination_policy() -> DestinationPolicy:
    from .adapters.destinations import DestinationPolicy

    return DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": settings().allow_destination_networks})


def check_destination(spec: ChannelSpec) -> None:
    from .adapters.destinations import InvalidDestinationError, valid_email
    from .domain.endpoints import is_endpoint_id

    if spec.type.value == "webhook" and is_endpoint_id(spec.destination):
        return  # a registered endpoint: its URL was checked when it was set (and at every send)
    if spec.type.value == "webhook":
        destination_policy().resolve(spec.destination, field="channels.url")
    elif not valid_email(spec.destination):
        raise InvalidDestinationError("channels.to", "not a valid email address")


@cache
def reminders_service() -> Reminders:
    from .adapters.clock import SystemClock
    from .domain.retry import RetryPolicy
    from .services.intents import Reminders

    s = settings()
    return Reminders(
        store=store(),
        queues=queues(),
        clock=SystemClock(),
        telemetry=telemetry(),
        shards=s.due_shards,
        window_seconds=s.delay_window_seconds,
        check_destination=check_destination,
        max_age_seconds=RetryPolicy.from_env().max_age_seconds,
        retention_days=s.retention_days,
        # A correction naming an endpoint: the ownership check of a create (built on first use).
        use_endpoint=lambda *args, **kwargs: endpoints_service().use(*args, **kwargs),
        # Issue 30: the template version a create or correction names, checked (built on first use).
        check_template=lambda *args, **kwargs: templates_service().check_reminder(*args, **kwargs),
    )


class _NoEndpointKey:
    """No KMS key configured: endpoints cannot be created, nor their secrets opened (a hold)."""

    def generate(self, endpoint_id: str) -> tuple[bytes, bytes]:
        from .domain.errors import ConfigurationError

        raise ConfigurationError("no endpoint key configured (ENDPOINT_KEY_ID)")

    def unwrap(self, endpoint_id: str, wrapped: bytes) -> bytes:
        from .domain.errors import ConfigurationError

        raise ConfigurationError("no endpoint key configured (ENDPOINT_KEY_ID)")


@cache
def endpoint_store() -> DynamoEndpointStore:
    from .adapters.endpoints_store import DynamoEndpointStore
    from .adapters.envelope import KmsKeyWrapper, SecretSealer

    s = settings()
    wrapper = KmsKeyWrapper(_client("kms"), s.endpoint_key_id) if s.endpoint_key_id else _NoEndpointKey()
    return DynamoEndpointStore(_client("dynamodb"), s.table_name, SecretSealer(wrapper))


@cache
def endpoints_service() -> Endpoints:
    from .adapters.clock import SystemClock
    from .services.endpoints import Endpoints

    return Endpoints(
        store=endpoint_store(),
        reminders=store(),
        clock=SystemClock(),
        telemetry=telemetry(),
        check_url=_check_endpoint_url,
        health=endpoint_health().store,  # the health item's owner is fixed at the endpoint's creation
    )


@cache
def grant_store() -> DynamoGrantStore:
    from .adapters.grants_store import DynamoGrantStore

    return DynamoGrantStore(_client("dynamodb"), settings().table_name)


@cache
def tenancy() -> Tenancy:
    from .services.tenancy import Tenancy

    return Tenancy(accounts_of=grant_store().accounts, bootstrap_principal=settings().bootstrap_principal)


def _check_endpoint_url(url: str) -> None:
    """The SSRF guard at an endpoint's creation and change (422 naming ``url``)."""
    destination_policy().resolve(url, field="url")


def _configured_secret(arn: str | None, param: str | None, plain: str | None, missing: str) -> CachedSecret:
    """A secret from Secrets Manager (``arn``), else an SSM parameter, else a plain value (local
    development only); none configured: every read raises ConfigurationError(``missing``)."""
    from .adapters.secrets import CachedSecret, secrets_manager, ssm_parameter
    from .domain.errors import ConfigurationError

    if arn:
        return secrets_manager(_client("secretsmanager"), arn)
    if param:
        return ssm_parameter(_client("ssm"), param)
    if plain:
        return CachedSecret(lambda: plain)

    def unconfigured() -> str:
        raise ConfigurationError(missing)

    return CachedSecret(unconfigured)


def stack_signature_until() -> datetime | None:
    """The end of the migration window (issue 24): cut-over + ``STACK_SIGNATURE_DAYS``; None: none."""
    s = settings()
    if not s.signing_cutover_at:
        return None
    try:
        cutover = datetime.fromisoformat(s.signing_cutover_at.replace("Z", "+00:00"))
    except ValueError:
        raise SettingsError(
            f"SIGNING_CUTOVER_AT must be an ISO 8601 time, not {s.signing_cutover_at!r}"
        ) from None
    if cutover.tzinfo is None:
        raise SettingsError("SIGNING_CUTOVER_AT must carry its UTC offset")
    return cutover + timedelta(days=s.stack_signature_days)


def _webhook_secret() -> CachedSecret:
    s = settings()
    return _configured_secret(
        s.webhook_secret_arn,
        s.webhook_secret_param,
        s.webhook_signing_secret,
        "no webhook signing secret configured (WEBHOOK_SECRET_ARN)",
    )


class LazySenders(dict[str, "Sender"]):
    """A channel's sender, built on first use (thread-safe: one build per channel)."""

    def __init__(self, factories: dict[str, Any]) -> None:
        super().__init__()
        self._factories = factories
        self._lock = threading.Lock()

    def __missing__(self, key: str) -> Sender:
        with self._lock:
            if not dict.__contains__(self, key):
                self[key] = self._factories[key]()
            return dict.__getitem__(self, key)

    # Iterating (wrappers, tests) sees every channel: building them all then is fine.
    def __iter__(self) -> Any:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def __contains__(self, key: object) -> bool:
        return key in self._factories

    def keys(self) -> Any:
        return self._factories.keys()

    def items(self) -> Any:
        return [(k, self[k]) for k in self._factories]

    def values(self) -> Any:
        return [self[k] for k in self._factories]


def _unsubscribe_secret() -> CachedSecret:
    s = settings()
    return _configured_secret(
        s.unsubscribe_secret_arn,
        None,
        s.unsubscribe_signing_secret,
        "no unsubscribe signing secret configured (UNSUBSCRIBE_SECRET_ARN)",
    )


@cache
def unsubscribe() -> Unsubscribe:
    from .adapters.clock import SystemClock
    from .services.unsubscribe import Unsubscribe

    s = settings()
    secret = _unsubscribe_secret()
    return Unsubscribe(
        suppressions=suppressions(),
        secret=lambda: secret().encode(),
        clock=SystemClock(),
        telemetry=telemetry(),
        base_url=s.unsubscribe_base_url,
        mailto=s.unsubscribe_mailto,
    )


def consumer_clock(clock: Clock, reference: ReminderStore) -> Clock:
    """The delivery consumer's clock: the one its claims compare due times with, its not-yet-due
    hand-backs and its redrive's watch entry are computed from. Raised to a lower bound of the
    store's when slow (issue 25 item 7), held to an upper bound when fast (issue 26): see
    ``services/skew.StoreFloorClock``.

    A cold consumer's first store call would be its first claim, judged on the uncorrected clock
    (a slow one hands the record back by the whole skew): one read of the operator controls first
    gives it the store's time, as a create does. Best effort: unread, the local clock serves until
    the first response."""
    from .services.skew import StoreFloorClock

    if reference.reference_now() is None:
        try:
            reference.get_controls()
        except Exception:  # a failed priming read only leaves the local clock in use
            logger().warning("clock_reference_unread")
    return StoreFloorClock(clock, reference)


@cache
def deliverer() -> Deliverer:
    from .adapters.clock import SystemClock
    from .domain.retry import RetryPolicy
    from .services.deliver import Deliverer
    from .services.render import TemplateRenderer

    s = settings()
    policy = RetryPolicy.from_env()
    clock = consumer_clock(SystemClock(), store())

    def webhook() -> Sender:
        from .adapters.webhook import WebhookSender

        return WebhookSender(
            policy=destination_policy(),
            secret=_webhook_secret(),
            clock=clock,
            timeout_seconds=policy.provider_timeout_seconds,
            endpoints=endpoints_service().signing_endpoint,
            stack_signature_until=stack_signature_until(),
            trace=send_trace(),
        )

    def email() -> Sender:
        from .adapters.ses import SesEmailSender
        from .adapters.tracing import EMAIL_SEND_SUBSEGMENT

        return SesEmailSender(
            _client("sesv2"),
            from_address=s.email_from,
            configuration_set=s.ses_configuration_set,
            headers=unsubscribe().headers,
            trace=send_trace(EMAIL_SEND_SUBSEGMENT),
        )

    # Each sender (its module, its client) is built on the first message of its channel: the webhook
    # consumer never imports the SES adapter nor creates an SES client.
    senders = LazySenders({"webhook": webhook, "email": email})
    return Deliverer(
        store=store(),
        queues=queues(),
        senders=senders,
        clock=clock,
        policy=policy,
        telemetry=telemetry(),
        worker=worker_id(),
        max_receive_count=s.max_receive_count,
        limiter=rate_limiter(),
        suppressions=suppressions(),
        health=endpoint_health(),
        # Whether a webhook delivery's endpoint is its account's (the sender's cached lookup).
        endpoints=lambda account_id, destination: endpoints_service().for_send(account_id, destination),
        renderer=TemplateRenderer(templates_service()),  # issue 30: the account's template versions
    )


@cache
def endpoint_health() -> EndpointHealthGuard:
    """Endpoint health (issue 16): the ``E#<id>/H`` items, one consumer-wide cache (thread-safe)."""
    from .adapters.health_store import DynamoHealthStore
    from .domain.health import HealthPolicy
    from .domain.retry import RetryPolicy
    from .services.health import EndpointHealthGuard

    policy = HealthPolicy.from_env(max_age_seconds=RetryPolicy.from_env().max_age_seconds)
    return EndpointHealthGuard(
        store=DynamoHealthStore(_client("dynamodb"), settings().table_name, policy),
        policy=policy,
        telemetry=telemetry(),
    )


@cache
def email_rate() -> float | None:
    """The email channel's rate: the setting, else SES's sending quota read once (None: unknown)."""
    s = settings()
    if s.email_rate_per_second is not None:
        return s.email_rate_per_second or None
    try:
        quota = _client("sesv2").get_account().get("SendQuota") or {}
        rate = float(quota.get("MaxSendRate") or 0)
    except Exception as exc:  # no quota to read (permissions, emulator): no limit of ours; SES throttles
        telemetry().log("email_rate_unknown", error=type(exc).__name__)
        return None
    return rate or None


def rate_of(bucket: str) -> float | None:
    """The rate of a limiter bucket: an endpoint's own (else the stack's default destination rate),
    or SES's quota for email."""
    if bucket == "email":
        return email_rate()
    from .domain.endpoints import is_endpoint_id

    default = settings().destination_rate_per_second or None
    if is_endpoint_id(bucket):
        return endpoints_service().rate_of(bucket) or default
    return default


@cache
def rate_limiter() -> SharedRateLimiter:
    """One rate per endpoint shared by every consumer instance (a DynamoDB record per endpoint)."""
    from .adapters.ratelimit_store import DynamoRateSlots
    from .domain.ratelimit import SharedRateLimiter

    return SharedRateLimiter(DynamoRateSlots(_client("dynamodb"), settings().table_name), rate_of)


@cache
def dispatcher() -> Dispatcher:
    from .adapters.clock import SystemClock
    from .services.dispatch import Dispatcher

    s = settings()
    return Dispatcher(
        store=store(),
        queues=queues(),
        clock=SystemClock(),
        telemetry=telemetry(),
        shards=s.due_shards,
        window_seconds=s.delay_window_seconds,
        watch_lag_seconds=s.watch_lag_seconds,
        worker=worker_id(),
    )


@cache
def reconciler() -> Reconciler:
    from .adapters.clock import SystemClock
    from .services.reconcile import Reconciler

    return Reconciler(store=store(), clock=SystemClock(), telemetry=telemetry(), suppressions=suppressions())


@cache
def receipt_inbox() -> ReceiptInbox:
    """Receiver receipts, API side: verified against the secrets of the endpoint the delivery was
    sent through (its overlapping ones during a rotation; a bare URL's: its account's implicit
    endpoint of that origin), never the stack's channel secret (issue 24), then one conditional put."""
    from .adapters.clock import SystemClock
    from .adapters.receipts import DynamoReceiptLog, EndpointReceiverSecrets
    from .services.receipts import ReceiptInbox

    clock = SystemClock()
    return ReceiptInbox(
        store=store(),
        log=DynamoReceiptLog(_client("dynamodb"), settings().table_name),
        secrets=EndpointReceiverSecrets(endpoints_service().for_send, clock.now),
        clock=clock,
        telemetry=telemetry(),
    )


@cache
def receipt_merger() -> ReceiptMerger:
    from .adapters.clock import SystemClock
    from .services.receipts import ReceiptMerger

    return ReceiptMerger(store=store(), clock=SystemClock(), telemetry=telemetry())


@cache
def event_endpoint_store() -> DynamoEventEndpointStore:
    """Each account's event endpoint (issue 16; same table, own key prefix, low-level client)."""
    from .adapters.event_endpoints_store import DynamoEventEndpointStore

    return DynamoEventEndpointStore(_client("dynamodb"), settings().table_name)


@cache
def opevents_service() -> OpEvents:
    from .adapters.clock import SystemClock
    from .services.opevents import OpEvents

    return OpEvents(
        registrations=event_endpoint_store(),
        endpoints=endpoints_service(),
        reminders=reminders_service(),
        clock=SystemClock(),
        telemetry=telemetry(),
    )


@cache
def templates_service() -> Templates:
    """An account's template versions (issue 30; same table, own key prefix ``TPL#``), with this
    instance's cache of the versions it read (immutable)."""
    from .adapters.clock import SystemClock
    from .adapters.templates_store import DynamoTemplateStore
    from .services.templates import Templates

    return Templates(
        store=DynamoTemplateStore(_client("dynamodb"), settings().table_name), clock=SystemClock()
    )


def reset() -> None:
    """Forget every cached setting and client (tests, the local runtime)."""
    from .adapters.clients import MADE

    MADE.clear()
    for f in (
        settings,
        logger,
        metrics,
        tracing_enabled,
        tracer,
        telemetry,
        worker_id,
        _client,
        attention_index,
        store,
        suppressions,
        queues,
        destination_policy,
        endpoint_store,
        endpoints_service,
        grant_store,
        tenancy,
        email_rate,
        rate_limiter,
        endpoint_health,
        reminders_service,
        deliverer,
        dispatcher,
        reconciler,
        unsubscribe,
        receipt_inbox,
        receipt_merger,
        event_endpoint_store,
        opevents_service,
        templates_service,
    ):
        f.cache_clear()
