"""DynamoDB stream event source mappings, run as Lambda runs them: a poller reads the emulator's
table stream (moto's DynamoDB Streams API), keeps the records that match the mapping's filter
criteria (EventBridge-style patterns: ``eventName``, ``dynamodb.Keys``...), invokes the function
with a real DynamoDB stream event, retries the records a function reports in ``batchItemFailures``
(or all of them on a function error) up to ``MaximumRetryAttempts``, then sends each record's
metadata to the on-failure destination (an SQS queue), as Lambda does.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .eventbus import matches
from .lambdas import LocalFunction

log = logging.getLogger("reminders_ops.local")

POLL_SECONDS = 0.2
DEFAULT_MAX_RETRIES = 10
RETRY_DELAY_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class StreamMappingSpec:
    logical_id: str
    function_id: str
    table_name: str
    batch_size: int = 100
    filters: tuple[dict[str, Any], ...] = ()
    max_retries: int = DEFAULT_MAX_RETRIES
    on_failure_queue_url: str | None = None
    report_batch_item_failures: bool = False
    enabled: bool = True


@dataclass
class StreamStats:
    records: int = 0
    filtered_out: int = 0
    batches: int = 0
    retried: int = 0
    sent_to_dlq: int = 0
    errors: int = 0


def lambda_event(records: Iterable[dict[str, Any]], stream_arn: str) -> dict[str, Any]:
    return {"Records": [{**r, "eventSourceARN": stream_arn} for r in records]}


def keep(filters: tuple[dict[str, Any], ...], record: dict[str, Any]) -> bool:
    """Lambda filter criteria: a record passes when any pattern matches (no filters: all pass)."""
    return not filters or any(matches(f, record) for f in filters)


@dataclass
class DynamoStreamMapping:
    spec: StreamMappingSpec
    function: LocalFunction
    dynamodb: Any
    streams: Any
    sqs: Any
    stats: StreamStats = field(default_factory=StreamStats)
    paused: Callable[[], bool] = lambda: False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _iterators: dict[str, str] = field(default_factory=dict)
    stream_arn: str = ""

    def start(self) -> DynamoStreamMapping:
        desc = self.dynamodb.describe_table(TableName=self.spec.table_name)["Table"]
        self.stream_arn = desc.get("LatestStreamArn", "")
        if not self.stream_arn:
            raise RuntimeError(f"table {self.spec.table_name} has no stream")
        self._thread = threading.Thread(target=self._run, name=f"stream-{self.spec.logical_id}", daemon=True)
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _shards(self) -> list[str]:
        shards = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        return [s["ShardId"] for s in shards]

    def poll_once(self) -> int:
        """One read of every shard; the matching records handed to the function. How many records."""
        n = 0
        for shard in self._shards():
            it = (
                self._iterators.get(shard)
                or self.streams.get_shard_iterator(
                    StreamArn=self.stream_arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            )
            resp = self.streams.get_records(ShardIterator=it, Limit=1000)
            self._iterators[shard] = resp.get("NextShardIterator") or it
            records = resp.get("Records", [])
            n += len(records)
            self.stats.records += len(records)
            kept = [r for r in records if keep(self.spec.filters, r)]
            self.stats.filtered_out += len(records) - len(kept)
            for i in range(0, len(kept), self.spec.batch_size):
                self._deliver(kept[i : i + self.spec.batch_size])
        return n

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        pending = batch
        for attempt in range(self.spec.max_retries + 1):
            if not pending or self._stop.is_set():
                return
            self.stats.batches += 1
            try:
                result = self.function.invoke(lambda_event(pending, self.stream_arn)) or {}
                failed_ids = {f.get("itemIdentifier") for f in result.get("batchItemFailures", [])}
                if not self.spec.report_batch_item_failures and failed_ids:
                    failed_ids = {r["dynamodb"].get("SequenceNumber") for r in pending}
            except Exception as exc:  # a function error: the whole batch again
                self.stats.errors += 1
                log.warning("%s failed: %s", self.function.name, type(exc).__name__)
                failed_ids = {r["dynamodb"].get("SequenceNumber") for r in pending}
            # Lambda retries from the first failed record on (checkpointing before it).
            first = next(
                (i for i, r in enumerate(pending) if r["dynamodb"].get("SequenceNumber") in failed_ids), None
            )
            pending = [] if first is None else pending[first:]
            if pending and attempt < self.spec.max_retries:
                self.stats.retried += len(pending)
                time.sleep(RETRY_DELAY_SECONDS)
        if pending:
            self._to_dlq(pending)

    def _to_dlq(self, records: list[dict[str, Any]]) -> None:
        if not self.spec.on_failure_queue_url:
            return
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        body = {
            "requestContext": {"condition": "RetryAttemptsExhausted", "functionArn": self.function.name},
            "DDBStreamBatchInfo": {
                "streamArn": self.stream_arn,
                "startSequenceNumber": first.get("SequenceNumber"),
                "endSequenceNumber": last.get("SequenceNumber"),
                "batchSize": len(records),
            },
        }
        self.sqs.send_message(QueueUrl=self.spec.on_failure_queue_url, MessageBody=json.dumps(body))
        self.stats.sent_to_dlq += len(records)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.paused() and self.spec.enabled:
                    self.poll_once()
            except Exception as exc:
                self.stats.errors += 1
                log.warning("stream poll of %s failed: %s", self.spec.table_name, exc)
            self._stop.wait(POLL_SECONDS)
