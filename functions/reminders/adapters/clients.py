"""Every boto3 client of the functions, with an explicit botocore configuration built in one place.

botocore's defaults retry a failed call by itself (legacy mode: up to 5 attempts; 60 s read timeout
per attempt). For a non-idempotent send (SES ``SendEmail``) that is a second email nobody asked for:
sends get exactly one attempt (``total_max_attempts`` counts the first one; ``max_attempts``
counts retries only) and our retry policy decides what happens next. Idempotent calls (DynamoDB
reads and conditional writes, SQS) get a bounded number of attempts with timeouts that fit the
function's time budget (``domain/timing.py``); a conditional write that landed but whose answer was
lost is recognised by the service on the retry's conflict.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from botocore.config import Config

from ..domain.timing import (
    AWS_CONNECT_TIMEOUT_SECONDS,
    AWS_IDEMPOTENT_MAX_ATTEMPTS,
    AWS_READ_TIMEOUT_SECONDS,
    AWS_SEND_MAX_ATTEMPTS,
    SES_CONNECT_TIMEOUT_SECONDS,
)

#: What botocore does when nothing is configured (attempts including the first).
BOTOCORE_DEFAULT_ATTEMPTS = {"legacy": 5, "standard": 3, "adaptive": 3}


class CallKind(StrEnum):
    IDEMPOTENT = "idempotent"  # safe to repeat: bounded retries
    SEND = "send"  # a provider send without an idempotency key: exactly one attempt


#: Which kind of calls each service's client makes for the functions.
SERVICE_KIND: dict[str, CallKind] = {
    "dynamodb": CallKind.IDEMPOTENT,
    "sqs": CallKind.IDEMPOTENT,
    "secretsmanager": CallKind.IDEMPOTENT,
    "ssm": CallKind.IDEMPOTENT,
    "kms": CallKind.IDEMPOTENT,  # GenerateDataKey/Decrypt: a repeat yields another key, never harm
    "sesv2": CallKind.SEND,
}


def client_config(service: str, *, send_read_timeout_seconds: float = 8.0) -> Config:
    """The botocore ``Config`` of ``service``'s client (unknown services count as sends: the safe side)."""
    kind = SERVICE_KIND.get(service, CallKind.SEND)
    if kind is CallKind.SEND:
        return Config(
            retries={"mode": "standard", "total_max_attempts": AWS_SEND_MAX_ATTEMPTS},
            connect_timeout=SES_CONNECT_TIMEOUT_SECONDS,
            read_timeout=send_read_timeout_seconds,
            tcp_keepalive=True,
        )
    return Config(
        retries={"mode": "standard", "total_max_attempts": AWS_IDEMPOTENT_MAX_ATTEMPTS},
        connect_timeout=AWS_CONNECT_TIMEOUT_SECONDS,
        read_timeout=AWS_READ_TIMEOUT_SECONDS,
        tcp_keepalive=True,
    )


#: Every client made here, for the cold-start log (handlers/coldstart.py): a list, not a scan of
#: the garbage collector's objects (that walk cost tens of ms of every cold start).
MADE: list[Any] = []


def make_client(service: str, **config: Any) -> Any:
    import boto3

    client = boto3.client(service, config=client_config(service, **config))  # type: ignore[call-overload]
    MADE.append(client)
    return client


def describe(client: Any) -> dict[str, Any]:
    """What a client will really do (read back from the client, not from our intent): logged once
    per cold start (handlers/coldstart.py), asserted by the tests and the ``sam local invoke`` runs."""
    cfg = client.meta.config
    retries = dict(cfg.retries or {})
    mode = retries.get("mode", "legacy")
    if "total_max_attempts" in retries:
        attempts = int(retries["total_max_attempts"])
    elif "max_attempts" in retries:
        attempts = int(retries["max_attempts"]) + 1
    else:
        attempts = BOTOCORE_DEFAULT_ATTEMPTS.get(mode, 3)
    return {
        "service": client.meta.service_model.service_name,
        "retry_mode": mode,
        "max_attempts": attempts,  # attempts in all, the first included
        "connect_timeout": cfg.connect_timeout,  # seconds
        "read_timeout": cfg.read_timeout,  # seconds
    }
