"""OpEventsFunction: the table's stream (NEW_AND_OLD_IMAGES, filtered to reminder items and endpoint
health items) → the operational events each change records (domain/opevents.py) → one event reminder
per event, for accounts that registered an event endpoint. Batch item failures; after the mapping's
retries a record goes to the events DLQ (alarmed)."""

from __future__ import annotations

import functools
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from .. import runtime
from ..adapters.codec import reminder_from_item
from ..adapters.dynamodb import ExactDeserializer
from ..adapters.tracing import STREAM_RECORD_SUBSEGMENT
from ..domain.opevents import OpEvent, health_events, is_health_item, reminder_events
from ..services.opevents import Lookups
from . import tracing
from .entry import entry_point

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
_de = ExactDeserializer()  # a number DynamoDB answers with > 38 digits (issue 25.13)


def _image(record: DynamoDBRecord, which: str) -> dict[str, Any] | None:
    raw = record.raw_event.get("dynamodb", {}).get(which)
    return {k: _de.deserialize(v) for k, v in raw.items()} if raw else None


def events_of(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[OpEvent]:
    """The events one stream record's images carry (none for anything else the filter let by)."""
    if new is None:
        return []  # a removal (TTL expiry, a delete) is no outcome
    if is_health_item(new):
        return health_events(old, new)
    if str(new.get("pk", "")).startswith("R#") and new.get("sk") == "R":
        try:
            before = reminder_from_item(old) if old and old.get("sk") == "R" else None
            after = reminder_from_item(new)
        except (KeyError, TypeError, ValueError):
            runtime.telemetry().count("opevent_unreadable_item")
            return []  # an item this code cannot read carries no event it could send
        return reminder_events(before, after)
    return []


def record_handler(record: DynamoDBRecord, lookup: Lookups) -> int:
    new = _image(record, "NewImage")
    annotations = tracing.ids(reminder_id=(new or {}).get("rid"))
    with runtime.traced_ids(STREAM_RECORD_SUBSEGMENT, **annotations):  # ids only: never an image
        events = events_of(_image(record, "OldImage"), new)
        if not events:
            return 0
        return runtime.opevents_service().emit(events, lookup)


@entry_point
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # The registrations are read once per account per invocation (a batch of up to BATCH_SIZE).
    lookup = runtime.opevents_service().lookups()
    return dict(
        process_partial_response(
            event=event,
            record_handler=functools.partial(record_handler, lookup=lookup),
            processor=processor,
            context=context,
        )
    )
