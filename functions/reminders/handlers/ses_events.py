"""SES send events (EventBridge, source aws.ses) → reconcile the ledger by the delivery key tag."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict

from .. import runtime
from .entry import entry_point


class SesMail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    messageId: str
    timestamp: datetime | None = None
    tags: dict[str, list[str]] = {}
    destination: list[str] = []


class SesRecipient(BaseModel):
    model_config = ConfigDict(extra="ignore")
    emailAddress: str


class SesBounce(BaseModel):
    model_config = ConfigDict(extra="ignore")
    bounceType: str = "Undetermined"  # Permanent | Transient | Undetermined
    bounceSubType: str = ""
    bouncedRecipients: list[SesRecipient] = []
    timestamp: datetime | None = None
    feedbackId: str = ""


class SesComplaint(BaseModel):
    model_config = ConfigDict(extra="ignore")
    complainedRecipients: list[SesRecipient] = []
    complaintFeedbackType: str = ""
    timestamp: datetime | None = None
    feedbackId: str = ""


class SesReject(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reason: str = ""


class SesEventDetail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    eventType: str
    mail: SesMail
    bounce: SesBounce | None = None
    complaint: SesComplaint | None = None
    reject: SesReject | None = None


class SesEvent(EventBridgeModel):
    detail: SesEventDetail


def _tag(mail: SesMail, name: str) -> str | None:
    values = mail.tags.get(name) or []
    return values[0] if values else None


@event_parser(model=SesEvent)
def _handle(event: SesEvent, context: LambdaContext) -> dict[str, Any]:
    mail = event.detail.mail
    rid, cid, key = _tag(mail, "reminder_id"), _tag(mail, "channel_id"), _tag(mail, "delivery_key")
    if not (rid and cid and key):
        return {"outcome": "ignored"}
    kind = event.detail.eventType
    if kind in ("Bounce", "Complaint", "Reject"):
        return {"outcome": _feedback(event.detail, rid, cid, key)}
    if kind not in ("Send", "Delivery"):
        return {"outcome": "ignored"}
    outcome = runtime.reconciler().provider_accepted(
        rid, cid, key, mail.messageId, mail.timestamp, destination=mail.destination or None
    )
    return {"outcome": outcome}


def _feedback(detail: SesEventDetail, rid: str, cid: str, key: str) -> str:
    """Bounce (a permanent one suppresses), Complaint (suppresses), Reject (annotates only)."""
    mail = detail.mail
    at, recipients = mail.timestamp, mail.destination
    if detail.eventType == "Bounce":
        b = detail.bounce or SesBounce()
        outcome, suppress, why = "bounced", b.bounceType == "Permanent", f"{b.bounceType}/{b.bounceSubType}"
        at, recipients = b.timestamp or at, [r.emailAddress for r in b.bouncedRecipients] or recipients
        source = f"ses:bounce:{b.feedbackId or mail.messageId}"
    elif detail.eventType == "Complaint":
        c = detail.complaint or SesComplaint()
        outcome, suppress, why = "complained", True, c.complaintFeedbackType
        at, recipients = c.timestamp or at, [r.emailAddress for r in c.complainedRecipients] or recipients
        source = f"ses:complaint:{c.feedbackId or mail.messageId}"
    else:
        outcome, suppress, why = "rejected", False, (detail.reject or SesReject()).reason
        source = f"ses:reject:{mail.messageId}"
    return runtime.reconciler().provider_feedback(
        rid,
        cid,
        key,
        outcome,
        mail.messageId,
        at,
        recipients=recipients,
        suppress=suppress,
        source=source,
        detail=why[:64],
    )


@entry_point
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _handle(event, context)
