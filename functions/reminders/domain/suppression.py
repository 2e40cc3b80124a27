"""The per-account suppression list: addresses an account must not mail again.

An entry is keyed by (account, hashed address, scope): scope ``*`` (every reminder kind: a permanent
bounce or a complaint) or one reminder kind (a one-click unsubscribe from that kind's emails). The
address itself is never stored: only its hash, so the list reveals nothing by itself. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

#: The scope of an entry that suppresses every reminder kind of the account.
ALL_KINDS = "*"


class SuppressionReason(StrEnum):
    """Why an address is suppressed (the same words in the table, the API, the CLI and metrics)."""

    BOUNCE = "bounce_permanent"  # SES: a permanent (hard) bounce
    COMPLAINT = "complaint"  # SES: the recipient marked the email as spam
    UNSUBSCRIBE = "unsubscribe"  # the recipient's one-click List-Unsubscribe
    OPERATOR = "operator"  # added by a person


def address_hash(address: str) -> str:
    """The unkeyed form of an address's key (case and surrounding space ignored): what entries were
    written with before the keyed form (address_hash.AddressHasher); still read during the
    transition. A dictionary of addresses reverses it: new entries use the keyed form."""
    return "a_" + hashlib.sha256(("email\x1f" + address.strip().lower()).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class SuppressionEntry:
    account_id: str
    address_hash: str
    reason: SuppressionReason
    source: str  # what added it: "ses:<feedback id>", "unsubscribe:<delivery key>", "operator"
    at: str  # ISO UTC
    scope: str = ALL_KINDS  # ALL_KINDS or one reminder kind


class SuppressionList(Protocol):
    """Entries per account (DynamoDB, same table as the reminders, its own key prefix)."""

    def add(self, entry: SuppressionEntry) -> bool:
        """Put the entry unless one for (account, hash, scope) exists; True when this call added it."""
        ...

    def find(self, account_id: str, address: str, kind: str) -> SuppressionEntry | None:
        """The entry that suppresses ``address`` for ``kind`` (an all-kinds entry first), or None."""
        ...

    def hash_of(self, account_id: str, address: str) -> str:
        """The key a new entry of the account for ``address`` is written under (domain/address_hash.py)."""
        ...

    def list(self, account_id: str, limit: int = 100) -> list[SuppressionEntry]: ...

    def remove(self, account_id: str, address_hash: str, scope: str | None = None) -> int:
        """Delete the entries of (account, hash): of one scope, or every scope (None). How many went."""
        ...
