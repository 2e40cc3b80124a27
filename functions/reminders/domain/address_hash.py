"""Keys of email addresses in the suppression list (issue 19): HMAC-SHA256 of the address under a
per-deployment secret, so the stored key says nothing about the address to anyone without that
secret (a bare SHA-256, the form before, is reversed by hashing a dictionary of addresses).

``k_<32 hex>`` (128 bits) is the keyed form; ``a_<32 hex>`` the unkeyed form entries were written
with before (``suppression.address_hash``). During the transition a lookup tries both (one batch
read), and an old entry that matches is rewritten under the keyed form: its address is known then,
and only then. Case and surrounding space are ignored. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable

from .suppression import address_hash as unkeyed_hash

KEYED_PREFIX = "k_"
UNKEYED_PREFIX = "a_"


def _normalized(address: str) -> bytes:
    return ("email\x1f" + address.strip().lower()).encode()


def keyed_hash(address: str, key: bytes) -> str:
    return KEYED_PREFIX + hmac.new(key, _normalized(address), hashlib.sha256).hexdigest()[:32]


class AddressHasher:
    """``key()``: the deployment's secret (read when needed: a secret store may rotate its cache).
    None: no key configured (tests and stacks before the keyed form): the unkeyed form only."""

    def __init__(self, key: Callable[[], bytes] | None = None) -> None:
        self.key = key

    def hash(self, address: str) -> str:
        """The key new entries are written under."""
        return keyed_hash(address, self.key()) if self.key is not None else unkeyed_hash(address)

    def candidates(self, address: str) -> list[str]:
        """Every key an entry for ``address`` may be stored under: the keyed form first."""
        if self.key is None:
            return [unkeyed_hash(address)]
        return [keyed_hash(address, self.key()), unkeyed_hash(address)]
