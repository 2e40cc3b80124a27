"""The small queue interface the contract suite speaks, with two implementations: SQS on moto
(boto3, real time) and :class:`MemorySqs` (virtual time). ``advance`` sleeps on moto and moves the
virtual clock in memory, so one test body checks both."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import boto3
from reminders.adapters.memory_sqs import MemoryQueues, MemorySqs, QueueConfig
from reminders.adapters.sqs import SqsQueues
from reminders.domain.ports import Queues


@dataclass(frozen=True)
class Msg:
    message_id: str
    receipt: str
    body: str
    receive_count: int
    attributes: dict[str, str]


class QueueBackend(Protocol):
    name: str

    def create(
        self,
        name: str,
        *,
        visibility_timeout: int = 30,
        dlq: str | None = None,
        max_receive_count: int | None = None,
    ) -> str: ...

    def send(
        self, queue: str, body: str, *, delay: int | None = None, attributes: dict[str, str] | None = None
    ) -> str: ...

    def send_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        """Send; the ids (positions) of the entries reported in ``Failed``."""
        ...

    def receive(
        self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None
    ) -> list[Msg]: ...

    def delete(self, queue: str, receipt: str) -> None: ...

    def delete_batch(self, queue: str, receipts: Sequence[str]) -> list[str]:
        """Delete; the ids (positions) of the entries reported in ``Failed``."""
        ...

    def change_visibility(self, queue: str, receipt: str, seconds: int) -> None: ...

    def change_visibility_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        """(receipt, seconds) per entry; the ids (positions) of the entries reported in ``Failed``."""
        ...

    def advance(self, seconds: float) -> None: ...

    def receive_due(self, queue: str, seconds: float) -> list[Msg]:
        """The first non-empty receive once ``seconds`` have passed: a poll on a real-time backend
        (no fixed sleep past an emulator's timer tick), the clock moved in memory."""
        ...

    def send_batch_calls(self) -> int:
        """How many SendMessageBatch requests reached the queue service so far."""
        ...

    def port(self, queues: dict[str, str], dlqs: dict[str, str], dispatch: str) -> Queues:
        """The product's Queues port over this backend (SqsQueues or MemoryQueues)."""
        ...


class MotoQueueBackend:
    """SQS on moto (inside ``mock_aws``): real time, so tests keep delays at 1-2 s."""

    name = "sqs-moto"

    def __init__(self) -> None:
        self.client: Any = boto3.client("sqs", region_name="us-east-1")
        self.urls: dict[str, str] = {}
        self._batches = 0
        self.client.meta.events.register("before-call.sqs.SendMessageBatch", self._count_batch)

    def _count_batch(self, **_: Any) -> None:
        self._batches += 1

    def send_batch_calls(self) -> int:
        return self._batches

    def create(
        self,
        name: str,
        *,
        visibility_timeout: int = 30,
        dlq: str | None = None,
        max_receive_count: int | None = None,
    ) -> str:
        attrs: dict[str, Any] = {"VisibilityTimeout": str(visibility_timeout)}
        if dlq is not None:
            dlq_arn = self.client.get_queue_attributes(QueueUrl=self.urls[dlq], AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            attrs["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)}
            )
        self.urls[name] = self.client.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
        return name

    def send(
        self, queue: str, body: str, *, delay: int | None = None, attributes: dict[str, str] | None = None
    ) -> str:
        kwargs: dict[str, Any] = {"QueueUrl": self.urls[queue], "MessageBody": body}
        if delay is not None:
            kwargs["DelaySeconds"] = delay
        if attributes:
            kwargs["MessageAttributes"] = {
                k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()
            }
        return str(self.client.send_message(**kwargs)["MessageId"])

    def send_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        resp = self.client.send_message_batch(
            QueueUrl=self.urls[queue],
            Entries=[{"Id": str(i), "MessageBody": b, "DelaySeconds": d} for i, (b, d) in enumerate(entries)],
        )
        return sorted(f["Id"] for f in resp.get("Failed", []))

    def receive(self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None) -> list[Msg]:
        kwargs: dict[str, Any] = (
            {} if visibility_timeout is None else {"VisibilityTimeout": visibility_timeout}
        )
        resp = self.client.receive_message(
            QueueUrl=self.urls[queue],
            MaxNumberOfMessages=max_messages,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
            **kwargs,
        )
        return [
            Msg(
                m["MessageId"],
                m["ReceiptHandle"],
                m["Body"],
                int(m["Attributes"]["ApproximateReceiveCount"]),
                {k: v["StringValue"] for k, v in (m.get("MessageAttributes") or {}).items()},
            )
            for m in resp.get("Messages", [])
        ]

    def delete(self, queue: str, receipt: str) -> None:
        self.client.delete_message(QueueUrl=self.urls[queue], ReceiptHandle=receipt)

    def delete_batch(self, queue: str, receipts: Sequence[str]) -> list[str]:
        resp = self.client.delete_message_batch(
            QueueUrl=self.urls[queue],
            Entries=[{"Id": str(i), "ReceiptHandle": r} for i, r in enumerate(receipts)],
        )
        return sorted(f["Id"] for f in resp.get("Failed", []))

    def change_visibility(self, queue: str, receipt: str, seconds: int) -> None:
        self.client.change_message_visibility(
            QueueUrl=self.urls[queue], ReceiptHandle=receipt, VisibilityTimeout=seconds
        )

    def change_visibility_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        resp = self.client.change_message_visibility_batch(
            QueueUrl=self.urls[queue],
            Entries=[
                {"Id": str(i), "ReceiptHandle": r, "VisibilityTimeout": s} for i, (r, s) in enumerate(entries)
            ],
        )
        return sorted(f["Id"] for f in resp.get("Failed", []))

    def advance(self, seconds: float) -> None:
        time.sleep(seconds)

    def receive_due(self, queue: str, seconds: float) -> list[Msg]:
        deadline = time.monotonic() + seconds + 5.0  # generous: the poll ends at the first answer
        while not (got := self.receive(queue)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return got

    def port(self, queues: dict[str, str], dlqs: dict[str, str], dispatch: str) -> Queues:
        return SqsQueues(
            self.client,
            queue_urls={k: self.urls[v] for k, v in queues.items()},
            dlq_urls={k: self.urls[v] for k, v in dlqs.items()},
            dispatch_url=self.urls[dispatch],
        )


class LocalStackQueueBackend(MotoQueueBackend):
    """LocalStack's own SQS (``make verify``: host mode on 127.0.0.1, tests/localstack/run.sh) at
    ``endpoint``: real time, and queues outlive a test, so each test's queues get names of their own."""

    name = "sqs-localstack"

    def __init__(self, endpoint: str) -> None:
        self.client = boto3.client("sqs", region_name="us-east-1", endpoint_url=endpoint)
        self.urls = {}
        self._batches = 0
        self._prefix = f"t{uuid.uuid4().hex[:12]}-"
        self.client.meta.events.register("before-call.sqs.SendMessageBatch", self._count_batch)

    def create(
        self,
        name: str,
        *,
        visibility_timeout: int = 30,
        dlq: str | None = None,
        max_receive_count: int | None = None,
    ) -> str:
        attrs: dict[str, Any] = {"VisibilityTimeout": str(visibility_timeout)}
        if dlq is not None:
            dlq_arn = self.client.get_queue_attributes(QueueUrl=self.urls[dlq], AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            attrs["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)}
            )
        self.urls[name] = self.client.create_queue(QueueName=self._prefix + name, Attributes=attrs)[
            "QueueUrl"
        ]
        return name

    def drop(self) -> None:
        for url in self.urls.values():
            self.client.delete_queue(QueueUrl=url)


class MemoryQueueBackend:
    """:class:`MemorySqs` on a virtual clock."""

    name = "memory"

    def __init__(self) -> None:
        self.now = 1_800_000_000.0
        self.sqs = MemorySqs(lambda: self.now)

    def create(
        self,
        name: str,
        *,
        visibility_timeout: int = 30,
        dlq: str | None = None,
        max_receive_count: int | None = None,
    ) -> str:
        return self.sqs.create_queue(
            name,
            QueueConfig(
                visibility_timeout=visibility_timeout,
                dead_letter_queue=dlq,
                max_receive_count=max_receive_count,
            ),
        )

    def send(
        self, queue: str, body: str, *, delay: int | None = None, attributes: dict[str, str] | None = None
    ) -> str:
        return self.sqs.send(queue, body, delay_seconds=delay, attributes=attributes)

    def send_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        return sorted(self.sqs.send_batch(queue, [(b, d, {}) for b, d in entries]).failed)

    def receive(self, queue: str, max_messages: int = 10, visibility_timeout: int | None = None) -> list[Msg]:
        return [
            Msg(r.message_id, r.receipt_handle, r.body, r.receive_count, dict(r.attributes))
            for r in self.sqs.receive(queue, max_messages, visibility_timeout)
        ]

    def delete(self, queue: str, receipt: str) -> None:
        self.sqs.delete(queue, receipt)

    def delete_batch(self, queue: str, receipts: Sequence[str]) -> list[str]:
        return sorted(self.sqs.delete_batch(queue, receipts).failed)

    def change_visibility(self, queue: str, receipt: str, seconds: int) -> None:
        self.sqs.change_visibility(queue, receipt, seconds)

    def change_visibility_batch(self, queue: str, entries: Sequence[tuple[str, int]]) -> list[str]:
        return sorted(self.sqs.change_visibility_batch(queue, entries).failed)

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def receive_due(self, queue: str, seconds: float) -> list[Msg]:
        self.now += seconds
        return self.receive(queue)

    def send_batch_calls(self) -> int:
        return self.sqs.calls.get("SendMessageBatch", 0)

    def port(self, queues: dict[str, str], dlqs: dict[str, str], dispatch: str) -> Queues:
        return MemoryQueues(self.sqs, queue_names=queues, dlq_names=dlqs, dispatch=dispatch)
