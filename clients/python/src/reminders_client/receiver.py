"""A webhook receiver's helper: verify a delivery (Standard Webhooks, every secret of a rotation's
overlap), read its headers, answer with steering, and post a signed receipt.

The sender signs each webhook with every secret of its endpoint that signs now (during a rotation,
the old and the new one: ``webhook-signature`` holds both). A receiver that knows either verifies.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

#: Response header a receiver sets on a non-2xx answer to steer the sender (ignored on a 2xx).
STEERING_HEADER = "webhook-delivery"
#: Stop retrying this delivery (it ends as failed).
ABORT = {STEERING_HEADER: "abort"}
#: Stop sending to this endpoint (the account must enable it again).
DISABLE = {STEERING_HEADER: "disable"}


_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_TRACEPARENT = re.compile(r"^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")


def _traceparent(value: str | None) -> str | None:
    """A well-formed W3C traceparent (version 00's form), else None: the header is not signed."""
    return value if value is not None and _TRACEPARENT.match(value) else None


class InvalidSignature(Exception):
    """No secret verifies the webhook (or its timestamp is outside the 5 minute tolerance): answer 401."""


@dataclass(frozen=True)
class Delivery:
    """A verified webhook."""

    webhook_id: str  # the delivery key: the same for every retry of this delivery (deduplicate on it)
    timestamp: datetime
    payload: dict[str, Any]  # {"type": "reminder.due", "id", "key", "account_id", "kind", "data", ...}
    idempotency_key: str | None  # the signed webhook-id (the sender's Idempotency-Key is the same)
    # W3C trace context of the send, to join your trace to the sender's: well-formed or None, and
    # NOT signed (a replay may carry another): never a reason to trust or act.
    traceparent: str | None

    @property
    def reminder_id(self) -> str:
        return str(self.payload.get("id", ""))


class Receiver:
    """``Receiver(["whsec_new...", "whsec_old..."])``: the endpoint's secrets (one outside a rotation)."""

    def __init__(self, secrets: Sequence[str], *, api_url: str | None = None) -> None:
        if not secrets:
            raise ValueError("a receiver needs its endpoint's secret")
        self.secrets = list(secrets)
        self._verifiers = [Webhook(s) for s in self.secrets]
        self.api_url = api_url.rstrip("/") if api_url else None

    def verify(self, body: bytes | str, headers: Mapping[str, str]) -> Delivery:
        h = {k.lower(): v for k, v in headers.items()}
        timestamp = h.get("webhook-timestamp", "")
        if not _TIMESTAMP.match(timestamp):  # the library would read "<ts>.9" as the signed <ts>
            raise InvalidSignature("webhook-timestamp: not the integer seconds the sender signs")
        for verifier in self._verifiers:
            try:
                payload = verifier.verify(body, h)
            except (WebhookVerificationError, ValueError):  # malformed signature, body not UTF-8
                continue
            webhook_id = h["webhook-id"]
            return Delivery(
                webhook_id=webhook_id,
                timestamp=datetime.fromtimestamp(int(timestamp), UTC),
                payload=payload if isinstance(payload, dict) else {"value": payload},
                # The sender's idempotency-key is its webhook-id; the header is not signed, the id is.
                idempotency_key=webhook_id,
                traceparent=_traceparent(h.get("traceparent")),
            )
        raise InvalidSignature("no secret of this endpoint verifies the webhook")

    def receipt(
        self,
        delivery: Delivery,
        status: str = "processed",
        *,
        reason: str = "",
        event_id: str | None = None,
        timeout_seconds: float = 10.0,
    ) -> int:
        """Post a signed ``processed``/``rejected`` receipt to the API's public ``/inbound/receiver``
        (signed with every secret the receiver holds); answers the HTTP status (202 accepted, 409 a replayed event id)."""
        if self.api_url is None:
            raise ValueError("Receiver(api_url=...) is needed to post receipts")
        now = datetime.now(UTC)
        body = json.dumps(
            {
                "webhook_id": delivery.webhook_id,
                "reminder_id": delivery.reminder_id,
                "status": status,
                "reason": reason,
                "event_time": now.isoformat(),
                "event_id": event_id or f"evt_{uuid.uuid4().hex}",
            }
        )
        msg_id = f"msg_{uuid.uuid4().hex}"
        headers = {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            # Every secret, as the sender signs (a rotation's expired one is simply not checked).
            "webhook-signature": " ".join(v.sign(msg_id, now, body) for v in self._verifiers),
        }
        answer = httpx.post(
            f"{self.api_url}/inbound/receiver", content=body, headers=headers, timeout=timeout_seconds
        )
        return answer.status_code
