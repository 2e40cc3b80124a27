"""One-click unsubscribe tokens (RFC 8058): signed, expiring, and a pure function of the delivery.

A token names (account, reminder kind, hashed address, delivery key) and an expiry derived from the
reminder's due time — never from ``now`` — so every retry of an email carries the same token and
the MIME stays byte-identical. It is signed with HMAC-SHA256 under a dedicated secret; the address
itself is not in it (only its hash, the suppression list's key). Pure: no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta

from .errors import ReminderError

#: How long after its reminder's due time a link keeps working (mail sits in inboxes for weeks).
TOKEN_VALID_AFTER_DUE = timedelta(days=60)
TOKEN_VERSION = "u1"
SIGNATURE_BYTES = 16  # HMAC-SHA256 truncated to 128 bits
MAX_TOKEN_LENGTH = 512
_SEP = "\x1f"


class InvalidTokenError(ReminderError):
    """Not a token this service signed (malformed, or the signature does not verify)."""


class ExpiredTokenError(ReminderError):
    """A genuine token past its expiry."""


@dataclass(frozen=True, slots=True)
class UnsubscribeClaim:
    account_id: str
    kind: str
    address_hash: str
    delivery_key: str
    expires_at: int  # epoch seconds


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, b"unsubscribe" + _SEP.encode() + payload, hashlib.sha256).digest()[:SIGNATURE_BYTES]


def make_token(
    key: bytes, *, account_id: str, kind: str, address_hash: str, delivery_key: str, due_at: datetime
) -> str:
    expires = int((due_at + TOKEN_VALID_AFTER_DUE).timestamp())
    payload = _SEP.join([TOKEN_VERSION, account_id, kind, address_hash, delivery_key, str(expires)]).encode()
    return f"{_b64(payload)}.{_b64(_sign(key, payload))}"


def read_token(keys: list[bytes], token: str, now: datetime) -> UnsubscribeClaim:
    """The claim of a token signed with one of ``keys`` (constant-time compare), or raise."""
    if not token or len(token) > MAX_TOKEN_LENGTH or token.count(".") != 1:
        raise InvalidTokenError("token: not an unsubscribe token")
    body, sig = token.split(".")
    try:
        payload, signature = _unb64(body), _unb64(sig)
    except (ValueError, TypeError):
        raise InvalidTokenError("token: not an unsubscribe token") from None
    if not any(hmac.compare_digest(_sign(k, payload), signature) for k in keys):
        raise InvalidTokenError("token: not an unsubscribe token")
    try:
        version, account_id, kind, hashed, dkey, expires = payload.decode().split(_SEP)
        expires_at = int(expires)
    except ValueError:
        raise InvalidTokenError("token: not an unsubscribe token") from None
    if version != TOKEN_VERSION:
        raise InvalidTokenError("token: not an unsubscribe token")
    if now.timestamp() > expires_at:
        raise ExpiredTokenError("token: the unsubscribe link has expired")
    return UnsubscribeClaim(account_id, kind, hashed, dkey, expires_at)
