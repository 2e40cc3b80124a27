"""Receiver receipts (MISSION §5): a webhook receiver reports, signed per Standard Webhooks, that it
``processed`` or ``rejected`` a delivery (by its ``webhook-id``).

Receipts arrive in any order, duplicated and late. What stands is decided by one pure,
order-insensitive merge: the receipt with the latest event time wins; on a tie, the higher rank
(processed over rejected), then the larger event id. The merge is commutative, associative and
idempotent, so every arrival order of the same receipts ends in the same standing receipt. A receipt
never moves a delivery backwards: ``delivered`` stays ``delivered`` whatever arrives after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

#: The largest receipt request accepted (body bytes).
MAX_RECEIPT_BYTES = 256 * 1024


class ReceiptStatus(StrEnum):
    PROCESSED = "processed"
    REJECTED = "rejected"


RANK = {ReceiptStatus.REJECTED: 1, ReceiptStatus.PROCESSED: 2}
_CODE = {ReceiptStatus.PROCESSED: "p", ReceiptStatus.REJECTED: "r"}
_STATUS = {v: k for k, v in _CODE.items()}


@dataclass(frozen=True, slots=True)
class Receipt:
    event_id: str
    status: ReceiptStatus
    event_time: str  # ISO UTC, "2026-11-29T12:00:00.000000Z" (sorts as time)
    reason: str = ""

    def order_key(self) -> tuple[str, int, str]:
        return (self.event_time, RANK[self.status], self.event_id)


def merge(current: Receipt | None, incoming: Receipt) -> Receipt:
    """The receipt that stands after ``incoming`` meets ``current`` (order-insensitive)."""
    if current is None:
        return incoming
    return max(current, incoming, key=Receipt.order_key)


def encode(r: Receipt) -> str:
    """The compact stored form of the standing receipt (the reason lives in the history line)."""
    return f"{_CODE[r.status]}|{r.event_time}|{r.event_id}"


def decode(text: str | None) -> Receipt | None:
    if not text:
        return None
    code, at, event_id = text.split("|", 2)
    return Receipt(event_id=event_id, status=_STATUS[code], event_time=at)


class ReceiverSecrets(Protocol):
    """The signing secrets a receiver's receipts may be signed with (several during a rotation).

    The secrets of the endpoint an account's delivery to ``destination`` was sent through (the one
    it names, or the account's implicit endpoint of a bare URL's origin): its current and
    overlapping secrets, never a secret other accounts hold (issue 24). An empty list: no such
    endpoint of this account."""

    def secrets_for(self, account_id: str, destination: str) -> list[str]: ...


class ReceiptLog(Protocol):
    """The durable first step: one conditional put per (delivery, event id)."""

    def put_new(self, webhook_id: str, event_id: str, item: dict[str, str]) -> bool:
        """Store the receipt unless (webhook_id, event_id) is stored; False when it was."""
        ...

    def get(self, webhook_id: str, event_id: str) -> dict[str, str] | None:
        """The stored receipt's attributes (a consistent read), or None."""
        ...


class ReceiptRejectedError(Exception):
    """Base of a receipt request refused before anything is written (``status``: the HTTP answer)."""

    status = 400
    code = "invalid_receipt"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ReceiptUnsignedError(ReceiptRejectedError):
    """Missing, malformed, stale or non-matching Standard Webhooks signature headers."""

    status = 401
    code = "unauthorized"


class ReceiptTooLargeError(ReceiptRejectedError):
    status = 413
    code = "too_large"


class ReceiptUnknownError(ReceiptRejectedError):
    """No such endpoint or delivery."""

    status = 404
    code = "not_found"


class ReceiptReplayedError(ReceiptRejectedError):
    """This event id was received before for this delivery: already stored, nothing new written."""

    status = 409
    code = "already_received"
