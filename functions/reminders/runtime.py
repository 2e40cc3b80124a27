"""Settings (checked once per cold start) and the wiring of adapters into services.

Nothing here runs at import time; every factory is cached per function instance.
"""

from __future__ import annotations

import os
import uuid
import warnings
from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from pydantic import BaseModel, ConfigDict, Field

from .adapters.clients import client_config, make_client
from .adapters.clock import SystemClock
from .adapters.destinations import DestinationPolicy
from .adapters.dynamodb import DynamoReminderStore
from .adapters.receipts import DynamoReceiptLog, SharedReceiverSecrets
from .adapters.secrets import CachedSecret, secrets_manager, ssm_parameter
from .adapters.ses import SesEmailSender
from .adapters.sqs import SqsQueues
from .adapters.suppression import DynamoSuppressionList
from .adapters.telemetry import PowertoolsTelemetry
from .adapters.webhook import WebhookSender
from .domain.errors import ConfigurationError
from .domain.ports import Sender
from .domain.ratelimit import DestinationLimiter
from .domain.retry import RetryPolicy
from .domain.schedule import SQS_MAX_DELAY_SECONDS
from .domain.timing import SES_CONNECT_TIMEOUT_SECONDS
from .services.deliver import Deliverer
from .services.dispatch import Dispatcher
from .services.intents import ChannelSpec, Reminders
from .services.receipts import ReceiptInbox, ReceiptMerger
from .services.reconcile import Reconciler
from .services.unsubscribe import Unsubscribe


class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    table_name: str
    email_queue_url: str
    webhook_queue_url: str
    email_dlq_url: str
    webhook_dlq_url: str
    dispatch_queue_url: str | None = None
    due_shards: int = Field(16, ge=1, le=1000)
    max_receive_count: int = Field(20, ge=2)
    webhook_secret_arn: str | None = None
    webhook_secret_param: str | None = None
    webhook_signing_secret: str | None = None  # local development only
    ses_configuration_set: str | None = None
    email_from: str = "reminders@example.com"
    allow_destination_networks: str = ""
    delay_window_seconds: int = Field(SQS_MAX_DELAY_SECONDS, ge=1, le=SQS_MAX_DELAY_SECONDS)
    watch_lag_seconds: float = 900.0
    cursor_start_back_seconds: int = 3600
    destination_rate_per_second: float | None = None  # per destination, across all instances
    delivery_max_concurrency: int = Field(20, ge=1)
    #: One-click unsubscribe (issue 19): the public base URL of the API (the link in every email),
    #: the dedicated HMAC secret (Secrets Manager; a plain value for local development only) and
    #: an optional mailto address for List-Unsubscribe.
    unsubscribe_base_url: str | None = None
    unsubscribe_secret_arn: str | None = None
    unsubscribe_signing_secret: str | None = None
    unsubscribe_mailto: str | None = None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ) if env is None else env
        fields = {name: env[name.upper()] for name in cls.model_fields if name.upper() in env}
        return cls.model_validate(fields)


@cache
def settings() -> Settings:
    return Settings.from_env()


@cache
def logger() -> Logger:
    return Logger()


@cache
def metrics() -> Metrics:
    # An invocation that only acknowledges duplicates publishes no metric: that is fine, not a warning.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
    return Metrics()


@cache
def telemetry() -> PowertoolsTelemetry:
    return PowertoolsTelemetry(logger(), metrics())


@cache
def worker_id() -> str:
    # Short on purpose: it is stored in every attempt of the audit trail (item size = write units).
    return f"{os.environ.get('CHANNEL') or 'fn'}:{uuid.uuid4().hex[:12]}"


@cache
def _client(service: str) -> Any:
    if service == "sesv2":
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
    s = settings()
    resource = boto3.resource("dynamodb", config=client_config("dynamodb"))
    return DynamoReminderStore(
        resource.Table(s.table_name), cursor_start_back_seconds=s.cursor_start_back_seconds
    )


@cache
def suppressions() -> DynamoSuppressionList:
    """The per-account suppression list (same table, own key prefix, low-level client)."""
    return DynamoSuppressionList(_client("dynamodb"), settings().table_name)


@cache
def queues() -> SqsQueues:
    s = settings()
    return SqsQueues(
        _client("sqs"),
        queue_urls={"email": s.email_queue_url, "webhook": s.webhook_queue_url},
        dlq_urls={"email": s.email_dlq_url, "webhook": s.webhook_dlq_url},
        dispatch_url=s.dispatch_queue_url,
    )


@cache
def destination_policy() -> DestinationPolicy:
    return DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": settings().allow_destination_networks})


def check_destination(spec: ChannelSpec) -> None:
    from .adapters.destinations import InvalidDestinationError, valid_email

    if spec.type.value == "webhook":
        destination_policy().resolve(spec.destination, field="channels.url")
    elif not valid_email(spec.destination):
        raise InvalidDestinationError("channels.to", "not a valid email address")


@cache
def reminders_service() -> Reminders:
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
    )


def _webhook_secret() -> CachedSecret:
    s = settings()
    if s.webhook_secret_arn:
        return secrets_manager(_client("secretsmanager"), s.webhook_secret_arn)
    if s.webhook_secret_param:
        return ssm_parameter(_client("ssm"), s.webhook_secret_param)
    if s.webhook_signing_secret:
        value = s.webhook_signing_secret
        return CachedSecret(lambda: value)

    def missing() -> str:
        raise ConfigurationError("no webhook signing secret configured (WEBHOOK_SECRET_ARN)")

    return CachedSecret(missing)


def _unsubscribe_secret() -> CachedSecret:
    s = settings()
    if s.unsubscribe_secret_arn:
        return secrets_manager(_client("secretsmanager"), s.unsubscribe_secret_arn)
    if s.unsubscribe_signing_secret:
        value = s.unsubscribe_signing_secret
        return CachedSecret(lambda: value)

    def missing() -> str:
        raise ConfigurationError("no unsubscribe signing secret configured (UNSUBSCRIBE_SECRET_ARN)")

    return CachedSecret(missing)


@cache
def unsubscribe() -> Unsubscribe:
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


@cache
def deliverer() -> Deliverer:
    s = settings()
    policy = RetryPolicy.from_env()
    clock = SystemClock()
    senders: dict[str, Sender] = {
        "webhook": WebhookSender(
            policy=destination_policy(),
            secret=_webhook_secret(),
            clock=clock,
            timeout_seconds=policy.provider_timeout_seconds,
        ),
        "email": SesEmailSender(
            _client("sesv2"),
            from_address=s.email_from,
            configuration_set=s.ses_configuration_set,
            headers=unsubscribe().headers,
        ),
    }
    return Deliverer(
        store=store(),
        queues=queues(),
        senders=senders,
        clock=clock,
        policy=policy,
        telemetry=telemetry(),
        worker=worker_id(),
        max_receive_count=s.max_receive_count,
        limiter=(
            DestinationLimiter(s.destination_rate_per_second / s.delivery_max_concurrency)
            if s.destination_rate_per_second
            else None
        ),
        suppressions=suppressions(),
    )


@cache
def dispatcher() -> Dispatcher:
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
    return Reconciler(store=store(), clock=SystemClock(), telemetry=telemetry(), suppressions=suppressions())


@cache
def receipt_inbox() -> ReceiptInbox:
    """Receiver receipts, API side: verified against the endpoint's secrets (today the shared
    webhook signing secret, behind the ReceiverSecrets port), then one conditional put."""
    secret = _webhook_secret()
    return ReceiptInbox(
        store=store(),
        log=DynamoReceiptLog(_client("dynamodb"), settings().table_name),
        secrets=SharedReceiverSecrets(secret),
        clock=SystemClock(),
        telemetry=telemetry(),
    )


@cache
def receipt_merger() -> ReceiptMerger:
    return ReceiptMerger(store=store(), clock=SystemClock(), telemetry=telemetry())


def reset() -> None:
    """Forget every cached setting and client (tests, the local runtime)."""
    for f in (
        settings,
        logger,
        metrics,
        telemetry,
        worker_id,
        _client,
        store,
        suppressions,
        queues,
        destination_policy,
        reminders_service,
        deliverer,
        dispatcher,
        reconciler,
        unsubscribe,
        receipt_inbox,
        receipt_merger,
    ):
        f.cache_clear()
