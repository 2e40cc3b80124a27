"""Webhook endpoints as a resource: each with its own signing secret(s), rate and enabled flag.

An endpoint is named ``ep_<32 hex>``. A reminder channel names it (``{"type": "webhook",
"endpoint_id": "ep_…"}``; the delivery's destination is then the endpoint id, so the URL lives in
one place). A bare ``url`` channel maps to its account's *implicit* endpoint for that URL's origin
(:func:`implicit_endpoint_id`, deterministic): registering an endpoint with ``bare_urls`` takes that
id, and from then on bare-URL reminders to that origin sign with its secret and share its rate. If
the account has not registered one, the first bare-URL send to that origin makes it (``implicit``,
its own secret): no secret shared between accounts ever signs a webhook (issue 24).

Secrets are Standard Webhooks ``whsec_<base64>`` keys. During a rotation the old key keeps signing
until its expiry, beside the new one (both signatures, space-separated, in ``webhook-signature``).
Pure: no I/O; randomness comes from :mod:`secrets`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Protocol
from urllib.parse import urlsplit

from .errors import ConflictError
from .schedule import iso, parse_iso

ENDPOINT_PREFIX = "ep_"
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24  # 192-bit HMAC keys (Standard Webhooks: 24 to 64 bytes)
DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600
MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600
MAX_SIGNING_KEYS = 3  # the current key and at most two still overlapping
SALT_BYTES = 16


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One signing secret (plaintext in memory only). The store keeps it envelope-encrypted, or, for a
    key with a ``salt`` (an implicit endpoint's), keeps only the salt: the secret is derived from the
    deployment's sealed key, the account, the endpoint and the salt (issue 24: no KMS request per send)."""

    secret: str  # whsec_…
    created_at: str  # ISO UTC
    expires_at: str | None = None  # None: the current key
    salt: str | None = None  # hex; None: a secret of its own, sealed under the endpoint's data key

    def active(self, now: datetime) -> bool:
        return self.expires_at is None or parse_iso(self.expires_at) > now


@dataclass(slots=True)
class Endpoint:
    id: str
    account_id: str
    url: str
    created_at: str
    rate_per_second: float | None = None  # None: the stack's default destination rate
    description: str = ""
    enabled: bool = True
    keys: list[SigningKey] = field(default_factory=list)
    rev: int = 0
    seq: int = 0  # bumped by each new use (a delete checks no use came in after it counted)
    #: Made by the service for a bare URL's origin (issue 24: no stack-wide secret signs an
    #: account's webhooks). Its secret was never shown: ``POST /endpoints`` with ``bare_urls``
    #: takes it over (a rotation: a new secret, shown once), or ``rotate-secret`` shows a new one.
    implicit: bool = False

    def signing_secrets(self, now: datetime) -> list[str]:
        """Every secret that signs now: the current one first, then those still overlapping."""
        active = [k for k in self.keys if k.active(now)]
        active.sort(key=lambda k: (k.expires_at is not None, k.created_at), reverse=False)
        return [k.secret for k in active]


def new_endpoint_id() -> str:
    return ENDPOINT_PREFIX + secrets.token_hex(16)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` in lower case (the default port left out)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    if port is None or (scheme, port) in (("https", 443), ("http", 80)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


#: Distinct (account, URL) pairs whose implicit endpoint id an instance keeps (issue 32 item 3: the
#: id is asked for on every webhook send, a URL parse and a SHA-256 each time). A pure function of
#: its key, which carries the account: nothing in it goes stale or crosses accounts.
IMPLICIT_ID_CACHE_SIZE = 4096


@lru_cache(maxsize=IMPLICIT_ID_CACHE_SIZE)
def implicit_endpoint_id(account_id: str, url: str) -> str:
    """The endpoint a bare ``url`` channel of ``account_id`` belongs to: one per account and origin."""
    digest = hashlib.sha256(f"{account_id}\x1f{origin_of(url)}".encode()).hexdigest()
    return ENDPOINT_PREFIX + digest[:32]


def is_endpoint_id(value: str) -> bool:
    return value.startswith(ENDPOINT_PREFIX) and len(value) == len(ENDPOINT_PREFIX) + 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def new_salt() -> str:
    """A derived key's random salt (its generation: a rotation draws a new one)."""
    return secrets.token_hex(SALT_BYTES)


class RotationLimitError(ConflictError):
    """A rotation would retire a key before the expiry its own rotation promised (409)."""


def rotate(
    endpoint: Endpoint,
    now: datetime,
    overlap_seconds: float,
    fresh: SigningKey | None = None,
) -> tuple[Endpoint, str]:
    """A new current key (``fresh``: a derived key of a new salt; default a new random secret); the
    previous current key signs until ``now + overlap``. Keys already expired are dropped. At most
    MAX_SIGNING_KEYS sign at once: a rotation that would need one more is refused
    (RotationLimitError, naming when the oldest overlap ends) rather than cutting a promised overlap
    short — a receiver still on that key would refuse every webhook."""
    active = [k for k in endpoint.keys if k.active(now)]
    if len(active) >= MAX_SIGNING_KEYS:
        ends = min(k.expires_at for k in active if k.expires_at is not None)
        raise RotationLimitError(
            f"{MAX_SIGNING_KEYS} secrets already sign for this endpoint; the oldest overlap ends at"
            f" {ends}: rotate again after that"
        )
    key = fresh if fresh is not None else SigningKey(new_secret(), iso(now))
    until = iso(now + timedelta(seconds=overlap_seconds))
    kept = [replace(k, expires_at=until) if k.expires_at is None else k for k in active]
    kept.sort(key=lambda k: k.expires_at or "")
    keys = [key, *kept]
    return replace(endpoint, keys=keys), key.secret


class EndpointStore(Protocol):
    def put_new(self, endpoint: Endpoint) -> bool:
        """Conditional put (the id must be free)."""
        ...

    def get(self, endpoint_id: str, consistent: bool = True) -> Endpoint | None:
        """``consistent=False``: an eventually consistent read (half the read units), for the sender's
        lookup, which a cache of ``LOOKUP_CACHE_SECONDS`` makes as stale anyway."""
        ...

    def derived_key(self, account_id: str, endpoint_id: str, created_at: str) -> SigningKey:
        """A new key of the endpoint derived from the deployment's sealed key (a fresh salt): what an
        implicit endpoint signs with. Its secret is a function of the account and the endpoint, so no
        other account's endpoint ever has it; only the salt is stored."""
        ...

    def owner_of(self, endpoint_id: str) -> str | None:
        """The endpoint's account (None: no such endpoint), read without opening its secrets (an
        eventually consistent read of one attribute: for readers that hold no key to them)."""
        ...

    def save(self, endpoint: Endpoint, expected_rev: int) -> bool:
        """Write (``rev`` + 1) if the stored revision is still ``expected_rev``."""
        ...

    def delete(self, endpoint_id: str, expected_seq: int) -> bool:
        """Delete if no use was added since ``expected_seq`` was read."""
        ...

    def add_use(self, endpoint_id: str, reminder_id: str, channel_id: str, at: str) -> bool:
        """Record a use (written at ``at``), only while the endpoint exists (False: it does not).
        A write that kept conflicting with concurrent ones raises StoreConflictError (transient:
        retry), never False."""
        ...

    def uses(self, endpoint_id: str) -> list[tuple[str, str, str]]:
        """(reminder id, channel id, written at) of every recorded use."""
        ...

    def drop_uses(self, endpoint_id: str, uses: Sequence[tuple[str, str]]) -> None: ...
