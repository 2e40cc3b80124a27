"""An in-memory SQS (standard queue) with the semantics the product relies on: DelaySeconds,
visibility timeout, ChangeMessageVisibility, ApproximateReceiveCount, a new receipt handle per
receive, maxReceiveCount moving a message to its DLQ on the receive that exceeds it, message
attributes, SQS's limits (DelaySeconds 0-900, visibility 0-43,200 s and at most 12 h from the
receive, at most ten message attributes, at most ten entries a batch, each entry of a batch failing
on its own in ``Failed``), and best-effort send order among visible messages, a delayed message
counting as sent
when its delay ends (a message whose visibility ended keeps its place; it does not queue up behind
everything sent after it; a message that turned visible just now does not overtake one visible for
a minute because it was sent earlier with a longer delay). O(log n) per operation on
a virtual clock, so the simulator scales where moto cannot. Proven equivalent to moto's SQS by the
queue contract tests. Also the Queues port over it."""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..domain.ports import OutMessage
from .sqs import SqsSendError

MAX_DELAY = 900  # DelaySeconds
MAX_VISIBILITY = 43_200  # VisibilityTimeout, and the most a message stays hidden counted from its receive
MAX_ATTRIBUTES = 10  # message attributes per message
MAX_BATCH = 10  # entries per batch request

Now = Callable[[], float]  # epoch seconds (virtual or real)


@dataclass
class _Message:
    id: str
    body: str
    attributes: dict[str, str]
    sent_at: float
    visible_at: float
    receive_count: int = 0
    receipt: str | None = None
    first_receive_at: float | None = None
    received_at: float | None = None  # the latest receive: the 12 h visibility cap counts from it
    source_queue: str | None = None  # set when moved into a DLQ by maxReceiveCount
    #: (send time + delay, send sequence): visible messages are received lowest first (best effort)
    order: tuple[float, int] = (0.0, 0)
    gen: int = 0  # bumped whenever visible_at changes: older heap entries are stale


@dataclass
class Received:
    message_id: str
    receipt_handle: str
    body: str
    receive_count: int
    attributes: dict[str, str]
    sent_at: float


@dataclass
class QueueConfig:
    visibility_timeout: int = 30
    delay_seconds: int = 0
    dead_letter_queue: str | None = None
    max_receive_count: int | None = None


@dataclass
class _Queue:
    name: str
    config: QueueConfig
    messages: dict[str, _Message] = field(default_factory=dict)
    heap: list[tuple[float, int, str, int]] = field(
        default_factory=list
    )  # timers: (visible_at, seq, id, gen)
    ready: list[tuple[tuple[float, int], str, int]] = field(default_factory=list)  # (order, id, gen)
    by_receipt: dict[str, str] = field(default_factory=dict)


@dataclass
class BatchResult:
    """A batch request's answer as SQS gives it: entry id (its position) -> message id for the
    entries that succeeded, entry id -> error code for those that failed (each on its own)."""

    successful: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


class InvalidReceiptError(Exception):
    """The receipt handle is not the message's latest (or the message is gone)."""


def _check_range(name: str, value: int, high: int) -> None:
    if not 0 <= value <= high:
        raise ValueError(f"{name} must be between 0 and {high}")


def _well_formed(receipt: str) -> bool:
    """A handle this twin could have issued (SQS refuses a malformed one: ReceiptHandleIsInvalid;
    a well-formed one of a deleted message is accepted)."""
    return len(receipt) == 32 and all(c in "0123456789abcdef" for c in receipt)


class MemorySqs:
    def __init__(self, now: Now) -> None:
        self.now = now
        self.queues: dict[str, _Queue] = {}
        self.lock = threading.RLock()
        self._seq = itertools.count()
        self.calls: dict[str, int] = {}

    def _count(self, op: str) -> None:
        self.calls[op] = self.calls.get(op, 0) + 1

    def create_queue(self, name: str, config: QueueConfig | None = None) -> str:
        config = config or QueueConfig()
        _check_range("VisibilityTimeout", config.visibility_timeout, MAX_VISIBILITY)
        _check_range("DelaySeconds", config.delay_seconds, MAX_DELAY)
        with self.lock:
            self.queues.setdefault(name, _Queue(name, config))
            return name

    def _push(self, q: _Queue, m: _Message) -> None:
        """(Re)arm the message's visibility timer at ``m.visible_at``; older entries become stale."""
        m.gen += 1
        heapq.heappush(q.heap, (m.visible_at, next(self._seq), m.id, m.gen))

    def _ripen(self, q: _Queue, now: float) -> None:
        """Move messages whose visibility time has come from the timer heap to the ready heap."""
        while q.heap and q.heap[0][0] <= now:
            _, _, mid, gen = heapq.heappop(q.heap)
            m = q.messages.get(mid)
            if m is not None and m.gen == gen:
                heapq.heappush(q.ready, (m.order, mid, gen))

    def _next_ready(self, q: _Queue) -> _Message | None:
        while q.ready:
            _, mid, gen = q.ready[0]
            m = q.messages.get(mid)
            if m is not None and m.gen == gen:
                return m
            heapq.heappop(q.ready)  # deleted or re-timed since it became visible
        return None

    def send(
        self,
        queue: str,
        body: str,
        *,
        delay_seconds: int | None = None,
        attributes: dict[str, str] | None = None,
    ) -> str:
        with self.lock:
            self._count("SendMessage")
            return self._send(queue, body, delay_seconds, attributes)

    def send_batch(
        self, queue: str, entries: Sequence[tuple[str, int | None, dict[str, str]]]
    ) -> BatchResult:
        """Entries are (body, delay, attributes), their ids their positions; an entry SQS would
        refuse fails alone (``InvalidParameterValue``), the others are sent."""
        if not 1 <= len(entries) <= MAX_BATCH:
            raise ValueError(f"SendMessageBatch takes 1 to {MAX_BATCH} entries")
        with self.lock:
            self._count("SendMessageBatch")
            out = BatchResult()
            for i, (b, d, a) in enumerate(entries):
                try:
                    out.successful[str(i)] = self._send(queue, b, d, a)
                except ValueError:
                    out.failed[str(i)] = "InvalidParameterValue"
            return out

    def _send(self, queue: str, body: str, delay: int | None, attributes: dict[str, str] | None) -> str:
        q = self.queues[queue]
        now = self.now()
        d = q.config.delay_seconds if delay is None else delay
        _check_range("DelaySeconds", d, MAX_DELAY)
        if len(attributes or {}) > MAX_ATTRIBUTES:
            raise ValueError(f"at most {MAX_ATTRIBUTES} message attributes")
        m = _Message(
            uuid.uuid4().hex, body, dict(attributes or {}), now, now + d, order=(now + d, next(self._seq))
        )
        q.messages[m.id] = m
        self._push(q, m)
        return m.id

    def receive(
        self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None
    ) -> list[Received]:
        if visibility_timeout is not None:
            _check_range("VisibilityTimeout", visibility_timeout, MAX_VISIBILITY)
        with self.lock:
            self._count("ReceiveMessage")
            q = self.queues[queue]
            now = self.now()
            out: list[Received] = []
            self._ripen(q, now)
            while len(out) < max_messages:
                m = self._next_ready(q)
                if m is None:
                    break
                heapq.heappop(q.ready)
                cfg = q.config
                if (
                    cfg.max_receive_count is not None
                    and m.receive_count >= cfg.max_receive_count
                    and cfg.dead_letter_queue
                ):
                    self._move_to_dlq(q, m)
                    continue
                m.receive_count += 1
                m.first_receive_at = m.first_receive_at or now
                m.received_at = now
                if m.receipt:
                    q.by_receipt.pop(m.receipt, None)
                m.receipt = uuid.uuid4().hex
                q.by_receipt[m.receipt] = m.id
                m.visible_at = now + (
                    cfg.visibility_timeout if visibility_timeout is None else visibility_timeout
                )
                self._push(q, m)
                out.append(Received(m.id, m.receipt, m.body, m.receive_count, dict(m.attributes), m.sent_at))
            return out

    def _move_to_dlq(self, q: _Queue, m: _Message) -> None:
        del q.messages[m.id]
        if m.receipt:
            q.by_receipt.pop(m.receipt, None)
        assert q.config.dead_letter_queue is not None
        dlq = self.queues[q.config.dead_letter_queue]
        moved = _Message(
            m.id,
            m.body,
            m.attributes,
            m.sent_at,
            self.now(),
            m.receive_count,
            source_queue=q.name,
            order=(self.now(), next(self._seq)),
        )
        dlq.messages[moved.id] = moved
        self._push(dlq, moved)

    def _by_receipt(self, q: _Queue, receipt: str) -> _Message:
        mid = q.by_receipt.get(receipt)
        m = q.messages.get(mid) if mid else None
        if m is None or m.receipt != receipt:
            raise InvalidReceiptError(receipt)
        return m

    def delete(self, queue: str, receipt: str) -> None:
        with self.lock:
            self._count("DeleteMessage")
            q = self.queues[queue]
            mid = q.by_receipt.pop(receipt, None)
            if mid is not None:
                q.messages.pop(mid, None)

    def delete_batch(self, queue: str, receipts: Sequence[str]) -> BatchResult:
        """A malformed receipt fails alone (``ReceiptHandleIsInvalid``); a stale one is accepted.
        An empty batch is a no-op here (SQS refuses it; the simulator's pollers ack nothing so)."""
        if len(receipts) > MAX_BATCH:
            raise ValueError(f"DeleteMessageBatch takes 1 to {MAX_BATCH} entries")
        with self.lock:
            self._count("DeleteMessageBatch")
            q = self.queues[queue]
            out = BatchResult()
            for i, r in enumerate(receipts):
                if not _well_formed(r):
                    out.failed[str(i)] = "ReceiptHandleIsInvalid"
                    continue
                mid = q.by_receipt.pop(r, None)
                if mid is not None:
                    q.messages.pop(mid, None)
                out.successful[str(i)] = ""
            return out

    def change_visibility(self, queue: str, receipt: str, seconds: int) -> None:
        with self.lock:
            self._count("ChangeMessageVisibility")
            self._change_visibility(self.queues[queue], receipt, seconds)

    def _change_visibility(self, q: _Queue, receipt: str, seconds: int) -> None:
        _check_range("VisibilityTimeout", seconds, MAX_VISIBILITY)
        m = self._by_receipt(q, receipt)
        now = self.now()
        if m.received_at is not None and now + seconds > m.received_at + MAX_VISIBILITY:
            raise ValueError("the message would stay hidden beyond 12 hours from its receive")
        m.visible_at = now + seconds
        self._push(q, m)

    def change_visibility_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> BatchResult:
        """(receipt, seconds) per entry; each entry SQS would refuse fails alone."""
        if not 1 <= len(entries) <= MAX_BATCH:
            raise ValueError(f"ChangeMessageVisibilityBatch takes 1 to {MAX_BATCH} entries")
        with self.lock:
            self._count("ChangeMessageVisibilityBatch")
            q = self.queues[queue]
            out = BatchResult()
            for i, (receipt, seconds) in enumerate(entries):
                try:
                    self._change_visibility(q, receipt, seconds)
                except ValueError:
                    out.failed[str(i)] = "InvalidParameterValue"
                except InvalidReceiptError:
                    out.failed[str(i)] = "ReceiptHandleIsInvalid"
                else:
                    out.successful[str(i)] = ""
            return out

    def depth(self, queue: str) -> dict[str, int]:
        with self.lock:
            q = self.queues[queue]
            now = self.now()
            visible = sum(1 for m in q.messages.values() if m.visible_at <= now)
            delayed = sum(1 for m in q.messages.values() if m.visible_at > now and m.receive_count == 0)
            return {"visible": visible, "delayed": delayed, "in_flight": len(q.messages) - visible - delayed}

    def size(self, queue: str) -> int:
        return len(self.queues[queue].messages)

    def next_visible_at(self, queue: str) -> float | None:
        """The earliest time a message of ``queue`` becomes receivable (for the simulator's clock)."""
        with self.lock:
            q = self.queues[queue]
            ready = self._next_ready(q)
            if ready is not None:
                return ready.visible_at
            while q.heap:
                visible_at, _, mid, gen = q.heap[0]
                m = q.messages.get(mid)
                if m is None or m.gen != gen:
                    heapq.heappop(q.heap)
                    continue
                return visible_at
            return None


class MemoryQueues:
    """The Queues port over :class:`MemorySqs` (queue names as in the stack)."""

    def __init__(
        self,
        sqs: MemorySqs,
        *,
        queue_names: dict[str, str],
        dlq_names: dict[str, str],
        dispatch: str | None = None,
    ) -> None:
        self.sqs = sqs
        self.queue_names = queue_names
        self.dlq_names = dlq_names
        self.dispatch = dispatch

    def _send_batches(self, queue: str, entries: Sequence[tuple[str, int | None, dict[str, str]]]) -> None:
        """As :class:`SqsQueues`: batches of ten, the failed entries retried once, then raised."""
        for start in range(0, len(entries), MAX_BATCH):
            chunk = list(entries[start : start + MAX_BATCH])
            for _ in range(2):
                failed = self.sqs.send_batch(queue, chunk).failed
                if not failed:
                    break
                chunk = [e for i, e in enumerate(chunk) if str(i) in failed]
            else:
                raise SqsSendError(f"{len(chunk)} messages not accepted by SQS")

    def send(self, channel_type: str, messages: Sequence[OutMessage]) -> None:
        entries: list[tuple[str, int | None, dict[str, str]]] = [
            (json.dumps(m.body(), separators=(",", ":")), m.delay_seconds, dict(m.attributes))
            for m in messages
        ]
        self._send_batches(self.queue_names[channel_type], entries)

    def change_visibility(self, channel_type: str, receipt_handle: str, seconds: int) -> None:
        self.sqs.change_visibility(self.queue_names[channel_type], receipt_handle, seconds)

    def dead_letter(self, channel_type: str, message: OutMessage) -> None:
        self.sqs.send(
            self.dlq_names[channel_type],
            json.dumps(message.body(), separators=(",", ":")),
            attributes=dict(message.attributes),
        )

    def send_dispatch(self, shards: Sequence[int]) -> None:
        if self.dispatch is None:
            raise RuntimeError("no dispatch queue configured")
        entries: list[tuple[str, int | None, dict[str, str]]] = [
            (json.dumps({"shard": s}), 0, {}) for s in shards
        ]
        self._send_batches(self.dispatch, entries)


def sqs_event_records(received: Sequence[Received], queue_arn: str) -> dict[str, Any]:
    """A Lambda SQS event for messages received from :class:`MemorySqs` (what the ESM passes)."""
    return {
        "Records": [
            {
                "messageId": r.message_id,
                "receiptHandle": r.receipt_handle,
                "body": r.body,
                "attributes": {
                    "ApproximateReceiveCount": str(r.receive_count),
                    "SentTimestamp": str(int(r.sent_at * 1000)),
                    "SenderId": "AIDAEXAMPLE",
                    "ApproximateFirstReceiveTimestamp": str(int(r.sent_at * 1000)),
                },
                "messageAttributes": {
                    k: {
                        "stringValue": v,
                        "stringListValues": [],
                        "binaryListValues": [],
                        "dataType": "String",
                    }
                    for k, v in r.attributes.items()
                },
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": "us-east-1",
            }
            for r in received
        ]
    }
