"""SES send events (EventBridge, source aws.ses) → reconcile the ledger by the delivery key tag."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict

from .. import runtime
from . import coldstart, tracing


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
    if detail.eventType == "Bounce":
        b = detail.bounce or SesBounce()
        return runtime.reconciler().provider_feedback(
            rid,
            cid,
            key,
            "bounced",
            mail.messageId,
            b.timestamp or mail.timestamp,
            recipients=[r.emailAddress for r in b.bouncedRecipients] or mail.destination,
            suppress=b.bounceType == "Permanent",
            source=f"ses:bounce:{b.feedbackId or mail.messageId}",
            detail=f"{b.bounceType}/{b.bounceSubType}"[:64],
        )
    if detail.eventType == "Complaint":
        c = detail.complaint or SesComplaint()
        return runtime.reconciler().provider_feedback(
            rid,
            cid,
            key,
            "complained",
            mail.messageId,
            c.timestamp or mail.timestamp,
            recipients=[r.emailAddress for r in c.complainedRecipients] or mail.destination,
            suppress=True,
            source=f"ses:complaint:{c.feedbackId or mail.messageId}",
            detail=c.complaintFeedbackType[:64],
        )
    r = detail.reject or SesReject()
    return runtime.reconciler().provider_feedback(
        rid,
        cid,
        key,
        "rejected",
        mail.messageId,
        mail.timestamp,
        recipients=mail.destination,
        suppress=False,
        source=f"ses:reject:{mail.messageId}",
        detail=r.reason[:64],
    )


@coldstart.reported
@tracing.traced
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return _handle(event, context)

    return run(event, context)
