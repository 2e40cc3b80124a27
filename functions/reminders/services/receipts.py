"""Use cases of receiver receipts: ``ReceiptInbox.accept`` (the API: verify, then persist before
acknowledging) and ``ReceiptMerger.apply`` (the stream's function: the order-insensitive merge).

Accept: size cap → signature headers present → the delivery the body names, claimed for its
destination → that endpoint's secrets (ReceiverSecrets port; never a stack-wide secret) → Standard
Webhooks verification (constant-time compare, 5 min timestamp tolerance) → the body's schema → one
conditional put by (delivery, event id). Any failure raises a ReceiptRejectedError before anything
is written; no delivery, no claim, no endpoint and a bad signature are one and the same 401; a
replayed event id is a 409.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..domain.models import Attempt, Delivery, add_history, destination_tag
from ..domain.ports import Clock, ReminderStore, Telemetry
from ..domain.receipts import (
    MAX_RECEIPT_BYTES,
    Receipt,
    ReceiptLog,
    ReceiptRejectedError,
    ReceiptReplayedError,
    ReceiptStatus,
    ReceiptTooLargeError,
    ReceiptUnsignedError,
    ReceiverSecrets,
    decode,
    encode,
    merge,
)
from ..domain.schedule import iso
from ..domain.states import DeliveryState
from .deliver import has_acceptance, may_have_been_accepted

RETRIES = 3
RETENTION_SECONDS = 30 * 24 * 3600
#: An event time more than this ahead of our clock is refused (a receiver's clock may run ahead).
MAX_EVENT_AHEAD = timedelta(minutes=5)
_ID = re.compile(r"^[A-Za-z0-9_:.\-]{1,128}$")
_DELIVERY_KEY = re.compile(r"^dlv_[0-9a-f]{32}$")
_REMINDER_ID = re.compile(r"^rem_[0-9a-f]{32}$")
_REASON = re.compile(r"^[A-Za-z0-9_:.\- ]{0,64}$")
#: The one answer to a receipt that does not verify, whatever the reason (item 3 of issue 24).
_REFUSED = "webhook-signature: no valid signature of a webhook sent (or webhook-timestamp out of tolerance)"
#: Verified against when the delivery has no secrets, so a refusal costs the same either way.
_DECOY_SECRET = "whsec_" + "A" * 32
#: The host of the decoy look-up: a reserved name (RFC 2606), no account's destination.
_DECOY_HOST = "receipt-decoy.invalid"
_FIELDS = {"webhook_id", "reminder_id", "status", "reason", "event_time", "event_id"}
#: States a receiver's receipt (it has the webhook) moves to ``delivered``: like an SES send event.
_PROVEN = (
    DeliveryState.SCHEDULED,
    DeliveryState.QUEUED,
    DeliveryState.SENDING,
    DeliveryState.RETRYABLE,
    DeliveryState.DEAD_LETTER,
)


def claimed(d: Delivery) -> bool:
    """A claim of this webhook id to the delivery's current destination was written: one whose
    outcome is not recorded yet (its lease is on the row: a receipt may come before the attempt's
    outcome line, or the claim was in flight when the reminder was cancelled), or a line scoped to
    this destination records a send that may have reached it or its acceptance. A delivery never
    attempted there (queued, scheduled, failed before sending) has none."""
    if d.lease_owner or any(
        a.event == "cancel" and a.detail == DeliveryState.SENDING.value for a in d.history
    ):
        return True
    return has_acceptance(d) or may_have_been_accepted(d)


def _verify(body: bytes, headers: dict[str, str], secrets: list[str]) -> None:
    from standardwebhooks.webhooks import Webhook

    from ..domain.signing import signing_key

    for secret in secrets:
        try:
            Webhook(signing_key(secret)).verify(body, headers, json_parse=False)
            return
        except Exception:
            continue
    raise ReceiptUnsignedError(_REFUSED)


def parse_receipt(doc: Any, now: datetime) -> tuple[str, str, Receipt]:
    """(webhook id, reminder id, receipt) of a verified body, or ReceiptRejectedError naming the field."""
    if not isinstance(doc, dict):
        raise ReceiptRejectedError("body: must be a JSON object", "body")
    unknown = sorted(set(doc) - _FIELDS)
    if unknown:
        raise ReceiptRejectedError(f"{unknown[0]}: unknown field", str(unknown[0])[:64])
    for name, pattern in (
        ("webhook_id", _DELIVERY_KEY),
        ("reminder_id", _REMINDER_ID),
        ("event_id", _ID),
    ):
        v = doc.get(name)
        if not isinstance(v, str) or not pattern.match(v):
            raise ReceiptRejectedError(f"{name}: missing or malformed", name)
    try:
        status = ReceiptStatus(str(doc.get("status")))
    except ValueError:
        raise ReceiptRejectedError("status: must be 'processed' or 'rejected'", "status") from None
    reason = doc.get("reason", "")
    if not isinstance(reason, str) or not _REASON.match(reason):
        raise ReceiptRejectedError("reason: at most 64 letters, digits, spaces or _:.-", "reason")
    raw_time = doc.get("event_time")
    try:
        assert isinstance(raw_time, str) and len(raw_time) <= 40
        at = datetime.fromisoformat(raw_time.replace("Z", "+00:00"))
        assert at.tzinfo is not None
        at = at.astimezone(UTC)
    except (AssertionError, ValueError, OverflowError):
        raise ReceiptRejectedError("event_time: an ISO-8601 time with offset", "event_time") from None
    if at > now + MAX_EVENT_AHEAD or at.year < 2000:
        raise ReceiptRejectedError("event_time: outside 2000-01-01 .. now + 5 min", "event_time")
    return doc["webhook_id"], doc["reminder_id"], Receipt(doc["event_id"], status, iso(at), reason)


class ReceiptInbox:
    def __init__(
        self,
        *,
        store: ReminderStore,
        log: ReceiptLog,
        secrets: ReceiverSecrets,
        clock: Clock,
        telemetry: Telemetry,
    ) -> None:
        self.store = store
        self.log = log
        self.secrets = secrets
        self.clock = clock
        self.telemetry = telemetry

    def accept(self, body: bytes, headers: dict[str, str]) -> str:
        try:
            return self._accept(body, headers)
        except ReceiptRejectedError as exc:
            self.telemetry.count("receipt_refused", reason=exc.code)
            raise

    def _accept(self, body: bytes, headers: dict[str, str]) -> str:
        if len(body) > MAX_RECEIPT_BYTES:
            raise ReceiptTooLargeError(f"body: {len(body)} bytes; the limit is {MAX_RECEIPT_BYTES}", "body")
        h = {str(k).lower(): str(v) for k, v in headers.items()}
        missing = [n for n in ("webhook-id", "webhook-timestamp", "webhook-signature") if not h.get(n)]
        if missing:
            raise ReceiptUnsignedError(
                f"{missing[0]}: header missing (receipts are signed per Standard Webhooks)"
            )
        try:
            text = body.decode("utf-8")
            doc = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):  # nested too deep: unread (review 29)
            doc = None
        # The body is untrusted until verified: it only names the delivery whose endpoint's secrets
        # verify it. Whatever is missing — the reminder, the delivery, a claim of it to its
        # destination, the endpoint — or wrong, the answer is the one of a bad signature, and a
        # signature is checked either way (a decoy secret when there is none): no existence oracle.
        webhook_id = doc.get("webhook_id") if isinstance(doc, dict) else None
        reminder_ref = doc.get("reminder_id") if isinstance(doc, dict) else None
        delivery: Delivery | None = None
        secrets: list[str] = []
        if (
            isinstance(webhook_id, str)
            and _DELIVERY_KEY.match(webhook_id)
            and isinstance(reminder_ref, str)
            and _REMINDER_ID.match(reminder_ref)
        ):
            reminder = self.store.get(reminder_ref)
            delivery = next(
                (
                    d
                    for d in (reminder.deliveries.values() if reminder else ())
                    if d.key == webhook_id and d.type.value == "webhook"
                ),
                None,
            )
            if reminder is not None and delivery is not None and claimed(delivery):
                secrets = self.secrets.secrets_for(reminder.account_id, delivery.destination)
            else:
                # The same look-up (an endpoint read in the runtime) for what does not exist: the
                # work before the answer must not tell either (a decoy, of no account, per id).
                self.secrets.secrets_for("", f"https://{webhook_id[4:]}.{_DECOY_HOST}/")
        else:
            self.secrets.secrets_for("", f"https://{_DECOY_HOST}/")
        _verify(body, h, secrets or [_DECOY_SECRET])
        if not secrets or delivery is None:
            raise ReceiptUnsignedError(_REFUSED)
        now = self.clock.now()
        webhook_id, reminder_id, receipt = parse_receipt(doc, now)
        item = {
            "rid": reminder_id,
            "cid": delivery.channel_id,
            "st": receipt.status.value,
            "et": receipt.event_time,
            "rs": receipt.reason,
            # Where the receipt was verified: it proves the webhook sent there, nowhere else.
            "dt": destination_tag(delivery.destination),
            "at": iso(now),
            "expires_at": str(int(now.timestamp()) + RETENTION_SECONDS),
        }
        if not self.log.put_new(webhook_id, receipt.event_id, item) and not self._ours(
            webhook_id, receipt.event_id, item
        ):
            raise ReceiptReplayedError("event_id: already received for this webhook_id", "event_id")
        self.telemetry.count("receipt_accepted", status=receipt.status.value)
        return "accepted"

    def _ours(self, webhook_id: str, event_id: str, item: dict[str, str]) -> bool:
        """The put answered "stored already": this request's own write, its answer lost (botocore's
        retry met it; issue 26) — the stored item is this one to its time of receipt — or a replay."""
        stored = self.log.get(webhook_id, event_id)
        return stored is not None and all(stored.get(k) == v for k, v in item.items())


class ReceiptMerger:
    """The stream's side: fold one stored receipt into its delivery, never regressing it."""

    def __init__(self, *, store: ReminderStore, clock: Clock, telemetry: Telemetry) -> None:
        self.store = store
        self.clock = clock
        self.telemetry = telemetry

    def apply_item(self, item: dict[str, Any]) -> str:
        webhook_id = str(item["pk"]).removeprefix("RCPT#")
        receipt = Receipt(
            event_id=str(item["sk"]).removeprefix("E#"),
            status=ReceiptStatus(item["st"]),
            event_time=str(item["et"]),
            reason=str(item.get("rs", "")),
        )
        dest = item.get("dt")  # absent on receipts stored before it: the current destination's
        return self.apply(
            str(item["rid"]), str(item["cid"]), webhook_id, receipt, dest_tag=str(dest) if dest else None
        )

    def apply(
        self,
        reminder_id: str,
        channel_id: str,
        webhook_id: str,
        receipt: Receipt,
        *,
        dest_tag: str | None = None,
    ) -> str:
        """``dest_tag``: the destination the receipt was verified for (``destination_tag``); a
        delivery since corrected elsewhere is only annotated, whatever is in flight there."""
        for _ in range(RETRIES):
            reminder = self.store.get(reminder_id)
            d = reminder.deliveries.get(channel_id) if reminder else None
            if reminder is None or d is None or d.key != webhook_id:
                self.telemetry.count("receipt_unmatched")
                return "unmatched"
            if any(a.event == "receipt" and a.receipt == receipt.event_id for a in d.history):
                return "duplicate"
            standing = decode(d.receiver_receipt)
            merged = merge(standing, receipt)
            stale = merged != receipt
            line = Attempt(
                at=iso(self.clock.now()),
                event="receipt",
                outcome=receipt.status.value,
                receipt=receipt.event_id,
                decision="stale" if stale else "noted",
                detail=(f"{receipt.event_time} {receipt.reason}").strip()[:96],
            )
            here = dest_tag is None or dest_tag == destination_tag(d.destination)
            if d.state in _PROVEN and here and claimed(d):
                # The receiver has the webhook: evidence of acceptance, exactly as a 2xx would be.
                # Only of a webhook sent there: a delivery with no claim to its destination (its
                # claim given back unsent since the receipt was accepted) keeps its own course.
                accepted = Attempt(
                    at=line.at,
                    event="provider_event",
                    outcome="accepted",
                    decision="delivered",
                    receipt=receipt.event_id,
                    dest=destination_tag(d.destination),
                )
                step = replace(d, **add_history(d, accepted))
                updated = replace(
                    step,
                    state=DeliveryState.DELIVERED,
                    delivered_at=d.delivered_at or iso(self.clock.now()),
                    next_attempt_at=None,
                    lease_owner=None,
                    lease_until=None,
                    dlq_pending=False,
                    receiver_receipt=encode(merged),
                    **add_history(step, line),
                )
                outcome = "reconciled"
            else:  # delivered stays delivered, canceled stays canceled, unclaimed stays: annotation only
                updated = replace(d, receiver_receipt=encode(merged), **add_history(d, line))
                outcome = "stale" if stale else "noted"
            if self.store.save_delivery(reminder_id, updated, d.rev):
                self.telemetry.count("receipt_merged", outcome=outcome)
                self.telemetry.log(
                    "receipt", reminder_id=reminder_id, delivery_key=webhook_id, outcome=outcome
                )
                return outcome
        raise RuntimeError("receipt merge lost the row three times")  # the stream retries the record
