"""Delivery consumers (one function per channel): SQS event source with ReportBatchItemFailures.

A record that must come back later gets its visibility set to the retry delay and is reported as a
batch item failure; the worker never sleeps. A record whose claim, send and record would not fit the
function's remaining time is handed back at once (visibility 0) without being claimed. An
unparseable record fails until maxReceiveCount moves it to the DLQ, without holding up the rest of
its batch.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Json

from .. import runtime
from ..services.deliver import DeliveryMessage, MessageContext
from . import coldstart


class DeliveryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reminder_id: str
    channel_id: str
    version: int


class DeliveryRecord(SqsRecordModel):
    body: Json[DeliveryBody]


class RetryLaterError(Exception):
    """The record comes back after its new visibility timeout (reported as a batch item failure)."""


def _record_handler(channel: str, record: DeliveryRecord, context: LambdaContext, invoked_at: float) -> str:
    attrs = {k: v.stringValue or "" for k, v in (record.messageAttributes or {}).items()}
    ctx = MessageContext(
        message_id=record.messageId,
        receipt_handle=record.receiptHandle,
        receive_count=int(record.attributes.ApproximateReceiveCount),
        attributes=attrs,
        remaining_seconds=lambda: context.get_remaining_time_in_millis() / 1000.0,
        seconds_since_invoked=lambda: time.monotonic() - invoked_at,
    )
    body = record.body
    result = runtime.deliverer().process(
        DeliveryMessage(body.reminder_id, body.channel_id, body.version), ctx
    )
    if not result.ack:
        runtime.queues().change_visibility(channel, record.receiptHandle, result.visibility_seconds)
        raise RetryLaterError(f"{result.outcome}: back in {result.visibility_seconds}s")
    return result.outcome


def _handle(channel: str, event: dict[str, Any], context: LambdaContext) -> Any:
    invoked_at = time.monotonic()
    processor = BatchProcessor(
        event_type=EventType.SQS, model=DeliveryRecord, raise_on_entire_batch_failure=False
    )
    return process_partial_response(
        event=event,
        record_handler=lambda record: _record_handler(channel, record, context, invoked_at),
        processor=processor,
        context=context,
    )


@coldstart.reported
def email_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _instrumented("email", event, context)


@coldstart.reported
def webhook_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _instrumented("webhook", event, context)


def _instrumented(channel: str, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        logger.append_keys(channel=channel)
        return _handle(channel, event, context)

    return run(event, context)
