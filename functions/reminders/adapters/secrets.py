"""Signing secrets from Secrets Manager or SSM Parameter Store, cached per function instance."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..domain.errors import ConfigurationError
from ..domain.signing import signing_key as signing_key  # re-exported: pure, in the domain

#: The documented development secret used by the local runtime only (never in AWS).
DEV_WEBHOOK_SECRET = "whsec_cmVtaW5kZXJzLWxvY2FsLWRldi1zaWduaW5nLXNlY3JldA=="
CACHE_SECONDS = 300.0


class CachedSecret:
    def __init__(self, fetch: Callable[[], str], ttl_seconds: float = CACHE_SECONDS) -> None:
        self.fetch = fetch
        self.ttl = ttl_seconds
        self._value: tuple[float, str] | None = None

    def __call__(self) -> str:
        now = time.monotonic()
        if self._value is None or now - self._value[0] > self.ttl:
            try:
                value = self.fetch()
            except ConfigurationError:
                raise
            except Exception as exc:  # the provider's error class names what broke, not the secret
                raise ConfigurationError(f"signing secret unavailable: {type(exc).__name__}") from None
            if not value:
                raise ConfigurationError("signing secret is empty")
            self._value = (now, value)
        return self._value[1]


def secrets_manager(client: Any, secret_id: str) -> CachedSecret:
    return CachedSecret(lambda: client.get_secret_value(SecretId=secret_id)["SecretString"])


def ssm_parameter(client: Any, name: str) -> CachedSecret:
    return CachedSecret(lambda: client.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"])
