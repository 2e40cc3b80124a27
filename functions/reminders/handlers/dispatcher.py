"""The dispatcher: a scheduled tick that fans out per index shard, and the shard worker."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Json

from .. import runtime
from . import coldstart


class ShardBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    shard: int


class ShardRecord(SqsRecordModel):
    body: Json[ShardBody]


@coldstart.reported
def tick_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        shards = runtime.dispatcher().tick()
        return {"shards": len(shards)}

    return run(event, context)


@coldstart.reported
def shard_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    def record_handler(record: ShardRecord) -> str:
        shard = record.body.shard
        dispatcher = runtime.dispatcher()
        span = dispatcher.shard_span()  # every shard ever used, not only today's count
        if not 0 <= shard < span:
            raise ValueError(f"shard {shard} outside 0..{span - 1}")
        report = dispatcher.run_shard(shard, lambda: context.get_remaining_time_in_millis() / 1000.0)
        if report.more:  # stopped inside the time budget with work left: continue at once
            runtime.queues().send_dispatch([shard])
        return json.dumps({"shard": shard, "dispatched": report.dispatched, "requeued": report.requeued})

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> Any:
        processor = BatchProcessor(
            event_type=EventType.SQS, model=ShardRecord, raise_on_entire_batch_failure=False
        )
        return process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )

    return run(event, context)
