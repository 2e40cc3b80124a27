"""Keys of email addresses in the suppression list: HMAC-SHA256 of the address under a key of the
list's account, derived (HKDF-SHA256, RFC 5869) from the deployment's secret with the account id as
its info. The stored key says nothing about the address to anyone without the secret (issue 19),
and one address has unrelated keys in two accounts' lists, so nobody — a tenant, an operator, a
copy of the table — can link one account's entries to another's (issue 24).

``t_<32 hex>`` (128 bits) is the per-account form. Entries were written before under ``k_<32 hex>``
(HMAC under the deployment's secret itself, the same in every account) and ``a_<32 hex>`` (unkeyed,
``suppression.address_hash``). A lookup tries all of them (one batch read), and an old entry that
matches is rewritten under the per-account form: its address is known then, and only then. Case
and surrounding space are ignored. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable

from .suppression import address_hash as unkeyed_hash

ACCOUNT_KEYED_PREFIX = "t_"
KEYED_PREFIX = "k_"
UNKEYED_PREFIX = "a_"
#: HKDF's salt: fixed, it separates this use of the deployment's secret from any other
HKDF_SALT = b"reminders/suppression/address-hash/v1"
KEY_BYTES = 32


def hkdf_sha256(ikm: bytes, *, salt: bytes, info: bytes, length: int = KEY_BYTES) -> bytes:
    """HKDF-SHA256 (RFC 5869): extract, then expand to ``length`` bytes."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def account_key(key: bytes, account_id: str) -> bytes:
    """The account's own address-hash key, derived from the deployment's secret."""
    return hkdf_sha256(key, salt=HKDF_SALT, info=b"address-hash\x1f" + account_id.encode())


def _normalized(address: str) -> bytes:
    return ("email\x1f" + address.strip().lower()).encode()


def keyed_hash(address: str, key: bytes) -> str:
    """The deployment-wide form (before issue 24): the same in every account; read, never written."""
    return KEYED_PREFIX + hmac.new(key, _normalized(address), hashlib.sha256).hexdigest()[:32]


def account_keyed_hash(address: str, key: bytes, account_id: str) -> str:
    digest = hmac.new(account_key(key, account_id), _normalized(address), hashlib.sha256).hexdigest()
    return ACCOUNT_KEYED_PREFIX + digest[:32]


class AddressHasher:
    """``key()``: the deployment's secret (read when needed: a secret store may rotate its cache).
    None: no key configured (tests and stacks before the keyed form): the unkeyed form only."""

    def __init__(self, key: Callable[[], bytes] | None = None) -> None:
        self.key = key

    def hash(self, account_id: str, address: str) -> str:
        """The key new entries of ``account_id`` are written under."""
        if self.key is None:
            return unkeyed_hash(address)
        return account_keyed_hash(address, self.key(), account_id)

    def candidates(self, account_id: str, address: str) -> list[str]:
        """Every key an entry of ``account_id`` for ``address`` may be stored under: the current
        form first, then the forms written before it."""
        if self.key is None:
            return [unkeyed_hash(address)]
        key = self.key()
        return [account_keyed_hash(address, key, account_id), keyed_hash(address, key), unkeyed_hash(address)]
