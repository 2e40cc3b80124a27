"""SES send events (EventBridge, source aws.ses) → reconcile the ledger by the delivery key tag."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict

from .. import runtime
from . import coldstart


class SesMail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    messageId: str
    timestamp: datetime | None = None
    tags: dict[str, list[str]] = {}
    destination: list[str] = []


class SesEventDetail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    eventType: str
    mail: SesMail


class SesEvent(EventBridgeModel):
    detail: SesEventDetail


def _tag(mail: SesMail, name: str) -> str | None:
    values = mail.tags.get(name) or []
    return values[0] if values else None


@event_parser(model=SesEvent)
def _handle(event: SesEvent, context: LambdaContext) -> dict[str, Any]:
    mail = event.detail.mail
    rid, cid, key = _tag(mail, "reminder_id"), _tag(mail, "channel_id"), _tag(mail, "delivery_key")
    if event.detail.eventType not in ("Send", "Delivery") or not (rid and cid and key):
        return {"outcome": "ignored"}
    outcome = runtime.reconciler().provider_accepted(
        rid, cid, key, mail.messageId, mail.timestamp, destination=mail.destination or None
    )
    return {"outcome": outcome}


@coldstart.reported
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return _handle(event, context)

    return run(event, context)
