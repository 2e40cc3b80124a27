"""What arrives from outside without IAM: one-click unsubscribe (RFC 8058) and receiver receipts
(Standard Webhooks). PublicFunction serves these two (handlers/public.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import StringConstraints

from ... import runtime
from .shared import ApiModel, as_json, responses

router = Router()


# -- one-click unsubscribe (issue 19; RFC 8058) -------------------------------------------------------
UnsubscribeToken = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{1,480}\.[A-Za-z0-9_\-]{1,30}$")]


class UnsubscribedView(ApiModel):
    """The same answer for every valid token, first click or repeat: nothing about the address."""

    status: Literal["unsubscribed"]


_UNSUBSCRIBE_DOC = responses(
    {
        200: "unsubscribed (idempotent)",
        400: "not an unsubscribe token",
        410: "the link has expired",
        422: "malformed token",
        503: "the signing secret is unavailable",
    },
    ok=UnsubscribedView,
)


@router.post("/unsubscribe/<token>", responses=_UNSUBSCRIBE_DOC)
def one_click_unsubscribe(token: Annotated[UnsubscribeToken, Path()]) -> Response[Any]:
    """Public (no login): mail clients POST ``List-Unsubscribe=One-Click`` here; the body is ignored."""
    return as_json(200, UnsubscribedView(status=runtime.unsubscribe().unsubscribe(token)))  # type: ignore[arg-type]


# -- receiver receipts (issue 19; MISSION §5) ---------------------------------------------------------
class ReceiptAccepted(ApiModel):
    status: Literal["accepted"]


_RECEIPT_DOC = responses(
    {
        202: "stored; merged asynchronously",
        400: "a verified body that is malformed, naming the field",
        401: "unsigned, badly signed, stale, or naming no webhook sent: one answer (Standard Webhooks)",
        409: "this event id was already received: nothing new written",
        413: "body over 256 KiB",
        422: "a body that is not UTF-8",
        503: "the signing secret is unavailable",
    },
    ok=ReceiptAccepted,
)


@router.post("/inbound/receiver", responses=_RECEIPT_DOC)
def inbound_receipt() -> Response[Any]:
    """Public (no IAM): a receiver's signed ``processed``/``rejected`` receipt for a ``webhook-id``."""
    event = router.current_event
    body = event.decoded_body or ""
    raw = body.encode("utf-8", "surrogateescape") if isinstance(body, str) else bytes(body)
    runtime.receipt_inbox().accept(raw, dict(event.headers or {}))
    return as_json(202, ReceiptAccepted(status="accepted"))
