"""Delivery consumers (one function per channel): SQS event source with ReportBatchItemFailures.

A record that must come back later gets its visibility set to the retry delay and is reported as a
batch item failure; the worker never sleeps. A record whose claim, send and record would not fit the
function's remaining time is handed back at once (visibility 0) without being claimed. An
unparseable record fails until maxReceiveCount moves it to the DLQ, without holding up the rest of
its batch.

The records of a batch run concurrently (:class:`ConcurrentBatchProcessor`: Powertools'
``BatchProcessor`` with its record loop on a bounded thread pool), each still claimed, sent and
recorded on its own; the partial batch response reports exactly the records that must come back.
What the records share is thread-safe: the low-level botocore clients (the store does not use a
boto3 resource), the Deliverer's lease nonce, rate limiter and random generator (one lock), and the
telemetry's metric set (one lock).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from .. import runtime
from ..domain.errors import MalformedMessageError
from ..domain.schedule import DUE_ATTRIBUTE
from ..services.deliver import DeliveryMessage, MessageContext, batch_behind_seconds
from . import coldstart, tracing

# The record is read with Powertools' SQS data class and the body with ``DeliveryMessage.parse``
# (three fields), not with a pydantic parser model: the parser and its SQS models cost a cold start
# ~100 ms of imports and schema building for what a dict lookup does. An unparseable body raises
# MalformedMessageError: the record fails until maxReceiveCount moves it to the DLQ.


def parse_body(body: str | None) -> DeliveryMessage:
    try:
        data = json.loads(body or "")
    except ValueError:
        raise MalformedMessageError("body is not JSON") from None
    if isinstance(data, dict) and set(data) - {"reminder_id", "channel_id", "version"}:
        raise MalformedMessageError("unknown fields in body")
    return DeliveryMessage.parse(data)


class RetryLaterError(Exception):
    """The record comes back after its new visibility timeout (reported as a batch item failure)."""


#: Records of one batch in flight at once (the event source's batch size is 10).
DEFAULT_RECORD_CONCURRENCY = 10
_pools = threading.local()


def record_concurrency() -> int:
    try:
        return max(1, int(os.environ.get("DELIVERY_RECORD_CONCURRENCY", DEFAULT_RECORD_CONCURRENCY)))
    except ValueError:
        return DEFAULT_RECORD_CONCURRENCY


def _executor(workers: int) -> ThreadPoolExecutor:
    """The invoking thread's pool, created on first use and kept (its threads idle while the
    environment is frozen). Per invoking thread: Lambda invokes an environment from one thread at a
    time, but the local runtime and tests invoke several "environments" in one process, and a pool
    shared by them would let one invocation's records queue behind another's."""
    pools: dict[int, ThreadPoolExecutor] | None = getattr(_pools, "by_size", None)
    if pools is None:
        pools = _pools.by_size = {}
    pool = pools.get(workers)
    if pool is None:
        pool = pools[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record")
    return pool


class ConcurrentBatchProcessor(BatchProcessor):
    """``BatchProcessor`` whose records run on a bounded thread pool instead of one after another.

    Each record goes through the processor's own ``_process_record`` (parsing, the record handler,
    success/failure bookkeeping: list appends, atomic in CPython), so the partial batch response is
    built exactly as Powertools builds it; the failures are put back in the batch's order."""

    def __init__(self, *args: Any, max_workers: int = DEFAULT_RECORD_CONCURRENCY, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_workers = max_workers

    def process(self) -> list[tuple]:
        records = list(self.records)
        if self.max_workers <= 1 or len(records) <= 1:
            return [self._process_record(record) for record in records]
        results = list(_executor(self.max_workers).map(self._process_record, records))
        order = {r.get("messageId") if isinstance(r, dict) else None: i for i, r in enumerate(records)}
        self.fail_messages.sort(key=lambda m: order.get(_message_id(m), len(order)))
        return results


def _message_id(record: Any) -> Any:
    if isinstance(record, dict):
        return record.get("messageId")
    return getattr(record, "messageId", None) or getattr(record, "message_id", None)


def _record_handler(
    channel: str, record: SQSRecord, context: LambdaContext, invoked_at: float, behind: float = 0.0
) -> str:
    msg = parse_body(record.body)
    raw_attrs = record.raw_event.get("messageAttributes") or {}
    attrs = {k: (v or {}).get("stringValue") or "" for k, v in raw_attrs.items()}
    ctx = MessageContext(
        message_id=record.message_id,
        receipt_handle=record.receipt_handle,
        receive_count=int(record["attributes"]["ApproximateReceiveCount"]),  # no attributes data class
        attributes=attrs,
        remaining_seconds=lambda: context.get_remaining_time_in_millis() / 1000.0,
        seconds_since_invoked=lambda: time.monotonic() - invoked_at,
        batch_behind_seconds=behind,
    )
    result = runtime.deliverer().process(msg, ctx)
    if not result.ack:
        runtime.queues().change_visibility(channel, record.receipt_handle, result.visibility_seconds)
        raise RetryLaterError(f"{result.outcome}: back in {result.visibility_seconds}s")
    return result.outcome


def _handle(channel: str, event: dict[str, Any], context: LambdaContext) -> Any:
    invoked_at = time.monotonic()
    # Build the instance's services (cached) before the records' threads ask for them at once: one
    # worker id, one store, one set of clients.
    deliverer = runtime.deliverer()
    runtime.queues()
    # How late the batch's most overdue record is: a batch behind does not wait for a not-yet-due one
    records = event.get("Records") or []
    dues = [
        ((r.get("messageAttributes") or {}).get(DUE_ATTRIBUTE) or {}).get("stringValue")
        for r in records
        if isinstance(r, dict)
    ]
    behind = batch_behind_seconds(dues, deliverer.clock.now())
    processor = ConcurrentBatchProcessor(
        event_type=EventType.SQS,
        raise_on_entire_batch_failure=False,
        max_workers=record_concurrency(),
    )
    # The records' metrics are added once, when the batch ends: one EMF document per invocation.
    batch = getattr(getattr(deliverer, "telemetry", None), "batch", contextlib.nullcontext)
    with batch():
        return process_partial_response(
            event=event,
            record_handler=lambda record: _record_handler(channel, record, context, invoked_at, behind),
            processor=processor,
            # No context for Powertools to inject: the record handler closes over it. Given one, the
            # processor inspects the handler's signature on every invocation (issue 32 item 3).
            context=None,
        )


@coldstart.reported
@tracing.traced
def email_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _instrumented("email", event, context)


@coldstart.reported
@tracing.traced
def webhook_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _instrumented("webhook", event, context)


def _instrumented(channel: str, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return _handle(channel, event, context)

    # Each record's line carries the invocation's request id and the channel, not the whole Lambda
    # context (function name, ARN, memory, cold start: the log group and the cold-start line say
    # them once): a line a record writes stays short (issue 32 item 3).
    logger.clear_state()
    logger.append_keys(function_request_id=context.aws_request_id, channel=channel)
    return run(event, context)
