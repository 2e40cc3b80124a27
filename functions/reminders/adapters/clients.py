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

import json
import os
from enum import StrEnum
from typing import Any

from botocore.config import Config
from botocore.exceptions import DataNotFoundError
from botocore.loaders import JSONFileLoader, Loader, create_loader, instance_cache

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
    client = _session().client(service, config=client_config(service, **config))
    MADE.append(client)
    return client


def _session() -> Any:
    """boto3's default session (what ``boto3.client`` uses; the emulators' call counters hook its
    events), its botocore session given :func:`fast_loader` once."""
    import boto3

    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    session = boto3.DEFAULT_SESSION
    assert session is not None
    core = session._session  # boto3 keeps its botocore session there (no public accessor)
    if not getattr(core.get_component("data_loader"), "reminders_fast", False):
        core.register_component("data_loader", fast_loader(core.get_config_variable("data_path")))
    return session


class PlainJSONFileLoader(JSONFileLoader):
    """botocore's JSON file loader without ``object_pairs_hook=OrderedDict`` (plain dicts keep
    their order too, and parse ~3x faster: the 1.25 MB ``endpoints.json``, each service model)."""

    def _load_file(self, full_path: str, open_method: Any) -> Any:
        if not os.path.isfile(full_path):
            return None
        with open_method(full_path, "rb") as fp:
            return json.loads(fp.read().decode("utf-8"))


class FastLoader(Loader):
    """botocore's data loader, the same models found the same way (``AWS_DATA_PATH`` first), for
    less of a cold start (issue 14): plain-dict JSON, and a service's model looked for in its own
    directory. botocore lists every service directory (~450, two stat calls each) for each model
    type just to check the name (~15 ms per type); a name not found in its own directory still
    goes through botocore's own check (``UnknownServiceError`` naming the known ones)."""

    reminders_fast = True
    FILE_LOADER_CLASS = PlainJSONFileLoader

    @instance_cache
    def load_service_model(self, service_name: str, type_name: str, api_version: str | None = None) -> Any:
        try:
            versions = self.list_api_versions(service_name, type_name)
        except DataNotFoundError:
            return super().load_service_model(service_name, type_name, api_version=api_version)
        version = api_version or max(versions)
        model = self.load_data(os.path.join(service_name, version, type_name))
        extras = self._find_extras(service_name, type_name, version)  # type: ignore[attr-defined]
        self._extras_processor.process(model, extras)  # type: ignore[attr-defined]
        return model


def fast_loader(data_path: str | None = None) -> FastLoader:
    """A :class:`FastLoader` searching what ``create_loader(AWS_DATA_PATH)`` would."""
    if not data_path:
        return FastLoader()
    return FastLoader(
        extra_search_paths=create_loader(data_path).search_paths, include_default_search_paths=False
    )


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
