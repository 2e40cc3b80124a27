"""The dispatcher: a scheduled tick that fans out per index shard, and the shard worker.

Cold start (issue 14): the tick's path uses neither the batch utilities nor pydantic, so the module
imports neither; the shard worker imports the batch utilities on its first call and reads each
record with Powertools' SQS data class and its body with :func:`parse_shard_body` (one field), not a
pydantic parser model (~100 ms of imports and schema building for a dict lookup).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from .. import runtime
from .entry import entry_point

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def parse_shard_body(body: str | None) -> int:
    """The shard of a dispatch message ``{"shard": <int>}``; anything else raises ValueError (the
    record fails and comes back, then goes to the DLQ as before)."""
    try:
        data = json.loads(body or "")
    except ValueError:
        raise ValueError("body is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"shard"}:
        raise ValueError("body must be an object with exactly the field 'shard'")
    shard = data["shard"]
    if type(shard) is not int:
        raise ValueError("shard must be an integer")
    return shard


@entry_point
def tick_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    shards = runtime.dispatcher().tick()
    return {"shards": len(shards)}


@entry_point
def shard_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

    def record_handler(record: SQSRecord) -> str:
        shard = parse_shard_body(record.body)
        dispatcher = runtime.dispatcher()
        span = dispatcher.shard_span()  # every shard ever used, not only today's count
        if not 0 <= shard < span:
            raise ValueError(f"shard {shard} outside 0..{span - 1}")
        report = dispatcher.run_shard(shard, lambda: context.get_remaining_time_in_millis() / 1000.0)
        if report.more:  # stopped inside the time budget with work left: continue at once
            runtime.queues().send_dispatch([shard])
        return json.dumps({"shard": shard, "dispatched": report.dispatched, "requeued": report.requeued})

    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return dict(
        process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    )
