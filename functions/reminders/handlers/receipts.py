"""ReceiptsFunction: the table's stream (filtered to new ``RCPT#`` items) → the order-insensitive
merge of each receiver receipt into its delivery. Batch item failures; after the mapping's retries a
record goes to the receipts DLQ (alarmed)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from boto3.dynamodb.types import TypeDeserializer

from .. import runtime
from ..adapters.tracing import RECEIPT_SUBSEGMENT
from . import tracing
from .entry import entry_point

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
_de = TypeDeserializer()


def _image(record: DynamoDBRecord) -> dict[str, Any]:
    raw = record.raw_event.get("dynamodb", {}).get("NewImage") or {}
    return {k: _de.deserialize(v) for k, v in raw.items()}


def record_handler(record: DynamoDBRecord) -> str:
    item = _image(record)
    if not str(item.get("pk", "")).startswith("RCPT#"):
        return "ignored"  # the mapping's filter passes only receipts; anything else is not ours
    annotations = tracing.ids(reminder_id=item.get("rid"), delivery_key=str(item["pk"]).removeprefix("RCPT#"))
    with runtime.traced_ids(RECEIPT_SUBSEGMENT, **annotations):  # ids only: never the receipt's reason
        return runtime.receipt_merger().apply_item(item)


@entry_point
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(
        process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    )
