"""Endpoint secrets: derived from one sealed deployment key, or envelope-encrypted per endpoint.

Derived (an implicit endpoint's, issue 24): one 256-bit *deployment signing key*, generated once by
``GenerateDataKey`` (encryption context ``endpoint_id = DEPLOYMENT_KEY_CONTEXT``, which no endpoint
id can take) and stored wrapped; each instance unwraps it once (one ``Decrypt`` per instance, not
per endpoint or send). A key's secret is HKDF-SHA256 (RFC 5869) of it, with the key's stored random
salt and info = the account id and the endpoint id: another account's endpoint never derives it,
and the deployment key never leaves the service. A rotation draws a new salt.

Envelope (a registered endpoint's secret, shown once):

``GenerateDataKey`` (AES-256) under the stack's customer-managed key, with the endpoint id as the
encryption context, gives a plaintext data key (used, never stored) and its wrapped form (stored on
the endpoint item). Each secret is sealed with AES-GCM under that data key, the endpoint id as
associated data, so a sealed secret copied onto another endpoint does not open. Unwrapped data keys
are cached per function instance for a short while (one ``Decrypt`` per endpoint per cold start,
not one per send). Nothing here logs a key or a secret.

:class:`LocalKeyWrapper` wraps data keys with a key held in memory: the in-memory world of the unit
tests and the simulator (the integration tests and the local runtime use moto's KMS).
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from typing import Any, Protocol

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..domain.address_hash import hkdf_sha256
from ..domain.endpoints import SECRET_BYTES, SECRET_PREFIX
from ..domain.errors import ConfigurationError

#: The deployment signing key's encryption context value (not an ``ep_<32 hex>`` endpoint id).
DEPLOYMENT_KEY_CONTEXT = "deployment:endpoint-signing"
DERIVE_INFO = b"reminders/webhook-endpoint-secret/v1"
DATA_KEY_BYTES = 32
NONCE_BYTES = 12
DATA_KEY_CACHE_SECONDS = 300.0
DATA_KEY_CACHE_MAX = 10_000


class KeyWrapper(Protocol):
    def generate(self, endpoint_id: str) -> tuple[bytes, bytes]:
        """(plaintext data key, wrapped data key)."""
        ...

    def unwrap(self, endpoint_id: str, wrapped: bytes) -> bytes: ...


class KmsKeyWrapper:
    def __init__(self, client: Any, key_id: str) -> None:
        self.client = client
        self.key_id = key_id

    def generate(self, endpoint_id: str) -> tuple[bytes, bytes]:
        resp = self.client.generate_data_key(
            KeyId=self.key_id, KeySpec="AES_256", EncryptionContext={"endpoint_id": endpoint_id}
        )
        return bytes(resp["Plaintext"]), bytes(resp["CiphertextBlob"])

    def unwrap(self, endpoint_id: str, wrapped: bytes) -> bytes:
        resp = self.client.decrypt(
            KeyId=self.key_id, CiphertextBlob=wrapped, EncryptionContext={"endpoint_id": endpoint_id}
        )
        return bytes(resp["Plaintext"])


class LocalKeyWrapper:
    """A wrapping key in memory (tests, simulator): AES-GCM instead of KMS, same interface."""

    def __init__(self, key: bytes | None = None) -> None:
        self._aead = AESGCM(key or AESGCM.generate_key(bit_length=256))
        self.generated = 0
        self.unwrapped = 0

    def generate(self, endpoint_id: str) -> tuple[bytes, bytes]:
        self.generated += 1
        plain = os.urandom(DATA_KEY_BYTES)
        nonce = os.urandom(NONCE_BYTES)
        return plain, nonce + self._aead.encrypt(nonce, plain, endpoint_id.encode())

    def unwrap(self, endpoint_id: str, wrapped: bytes) -> bytes:
        self.unwrapped += 1
        return self._aead.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], endpoint_id.encode())


class SecretSealer:
    """Seals and opens endpoint secrets under the endpoint's data key (cached unwrapped)."""

    def __init__(self, wrapper: KeyWrapper, cache_seconds: float = DATA_KEY_CACHE_SECONDS) -> None:
        self.wrapper = wrapper
        self.cache_seconds = cache_seconds
        self._cache: dict[tuple[str, bytes], tuple[float, bytes]] = {}
        self._lock = threading.Lock()
        #: wrapped deployment key -> its plaintext, for the instance's life (it never changes)
        self._deployment: dict[bytes, bytes] = {}
        self._deployment_lock = threading.Lock()

    # -- derived secrets ---------------------------------------------------------------------------
    def new_deployment_key(self) -> bytes:
        """A fresh wrapped deployment signing key (``GenerateDataKey``; its plaintext is kept)."""
        try:
            plain, wrapped = self.wrapper.generate(DEPLOYMENT_KEY_CONTEXT)
        except Exception as exc:
            raise ConfigurationError(f"deployment signing key unavailable: {type(exc).__name__}") from None
        with self._deployment_lock:
            self._deployment[wrapped] = plain
        return wrapped

    def _deployment_key(self, wrapped: bytes) -> bytes:
        with self._deployment_lock:  # one Decrypt per instance, even under concurrent first sends
            plain = self._deployment.get(wrapped)
            if plain is None:
                try:
                    plain = self.wrapper.unwrap(DEPLOYMENT_KEY_CONTEXT, wrapped)
                except Exception as exc:
                    raise ConfigurationError(
                        f"deployment signing key unavailable: {type(exc).__name__}"
                    ) from None
                self._deployment[wrapped] = plain
        return plain

    def derive(self, deployment_key: bytes, account_id: str, endpoint_id: str, salt: str) -> str:
        """The secret of (account, endpoint, salt) under the wrapped ``deployment_key``."""
        info = b"\x00".join((DERIVE_INFO, _framed(account_id.encode()), _framed(endpoint_id.encode())))
        okm = hkdf_sha256(
            self._deployment_key(deployment_key), salt=bytes.fromhex(salt), info=info, length=SECRET_BYTES
        )
        return SECRET_PREFIX + base64.b64encode(okm).decode()

    def new_data_key(self, endpoint_id: str) -> bytes:
        """A fresh wrapped data key for a new endpoint (its plaintext is cached for sealing)."""
        try:
            plain, wrapped = self.wrapper.generate(endpoint_id)
        except Exception as exc:
            raise ConfigurationError(f"endpoint key unavailable: {type(exc).__name__}") from None
        self._remember(endpoint_id, wrapped, plain)
        return wrapped

    def _data_key(self, endpoint_id: str, wrapped: bytes) -> bytes:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get((endpoint_id, wrapped))
        if hit is not None and now - hit[0] <= self.cache_seconds:
            return hit[1]
        try:
            plain = self.wrapper.unwrap(endpoint_id, wrapped)
        except Exception as exc:
            raise ConfigurationError(f"endpoint key unavailable: {type(exc).__name__}") from None
        self._remember(endpoint_id, wrapped, plain)
        return plain

    def _remember(self, endpoint_id: str, wrapped: bytes, plain: bytes) -> None:
        with self._lock:
            if len(self._cache) >= DATA_KEY_CACHE_MAX:
                self._cache.pop(next(iter(self._cache)))
            self._cache[(endpoint_id, wrapped)] = (time.monotonic(), plain)

    def seal(self, endpoint_id: str, wrapped: bytes, secret: str) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        key = self._data_key(endpoint_id, wrapped)
        return nonce + AESGCM(key).encrypt(nonce, secret.encode(), endpoint_id.encode())

    def open(self, endpoint_id: str, wrapped: bytes, sealed: bytes) -> str:
        key = self._data_key(endpoint_id, wrapped)
        try:
            plain = AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], endpoint_id.encode())
        except Exception as exc:
            raise ConfigurationError(f"endpoint secret does not open: {type(exc).__name__}") from None
        return plain.decode()


def deployment_key_id(wrapped: bytes) -> str:
    """Which deployment key a derived secret comes from (a digest of its wrapped form, never of its
    plaintext): stored beside the salt, so a secret is refused, never re-derived under another key."""
    return hashlib.sha256(wrapped).hexdigest()[:16]


def _framed(value: bytes) -> bytes:
    """Length-prefixed, so no (account, endpoint) pair's info is another pair's."""
    return len(value).to_bytes(4, "big") + value
