"""An in-memory SQS (standard queue) with the semantics the product relies on: DelaySeconds,
visibility timeout, ChangeMessageVisibility, ApproximateReceiveCount, a new receipt handle per
receive, maxReceiveCount moving a message to its DLQ on the receive that exceeds it, message
attributes, and best-effort send order among visible messages, a delayed message counting as sent
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


class InvalidReceiptError(Exception):
    """The receipt handle is not the message's latest (or the message is gone)."""


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
        with self.lock:
            self.queues.setdefault(name, _Queue(name, config or QueueConfig()))
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

    def send_batch(self, queue: str, entries: Sequence[tuple[str, int, dict[str, str]]]) -> list[str]:
        if len(entries) > 10:
            raise ValueError("SendMessageBatch takes at most 10 entries")
        with self.lock:
            self._count("SendMessageBatch")
            return [self._send(queue, b, d, a) for b, d, a in entries]

    def _send(self, queue: str, body: str, delay: int | None, attributes: dict[str, str] | None) -> str:
        q = self.queues[queue]
        now = self.now()
        d = q.config.delay_seconds if delay is None else delay
        if not 0 <= d <= 900:
            raise ValueError("DelaySeconds must be between 0 and 900")
        m = _Message(
            uuid.uuid4().hex, body, dict(attributes or {}), now, now + d, order=(now + d, next(self._seq))
        )
        q.messages[m.id] = m
        self._push(q, m)
        return m.id

    def receive(
        self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None
    ) -> list[Received]:
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

    def delete_batch(self, queue: str, receipts: Sequence[str]) -> None:
        with self.lock:
            self._count("DeleteMessageBatch")
            q = self.queues[queue]
            for r in receipts:
                mid = q.by_receipt.pop(r, None)
                if mid is not None:
                    q.messages.pop(mid, None)

    def change_visibility(self, queue: str, receipt: str, seconds: int) -> None:
        if not 0 <= seconds <= 43200:
            raise ValueError("VisibilityTimeout must be between 0 and 43200")
        with self.lock:
            self._count("ChangeMessageVisibility")
            q = self.queues[queue]
            m = self._by_receipt(q, receipt)
            m.visible_at = self.now() + seconds
            self._push(q, m)

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

    def send(self, channel_type: str, messages: Sequence[OutMessage]) -> None:
        entries = [
            (json.dumps(m.body(), separators=(",", ":")), m.delay_seconds, dict(m.attributes))
            for m in messages
        ]
        for start in range(0, len(entries), 10):
            self.sqs.send_batch(self.queue_names[channel_type], entries[start : start + 10])

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
        entries: list[tuple[str, int, dict[str, str]]] = [(json.dumps({"shard": s}), 0, {}) for s in shards]
        for start in range(0, len(entries), 10):
            self.sqs.send_batch(self.dispatch, entries[start : start + 10])


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
