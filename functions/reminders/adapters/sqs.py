"""The Queues port on SQS: channel queues, their DLQs and the dispatch queue."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..domain.ports import OutMessage

BATCH = 10  # SQS SendMessageBatch limit


class SqsSendError(Exception):
    """Some entries of a SendMessageBatch failed (after one retry of those entries)."""


class SqsQueues:
    def __init__(
        self,
        client: Any,
        *,
        queue_urls: dict[str, str],
        dlq_urls: dict[str, str],
        dispatch_url: str | None = None,
    ) -> None:
        self.client = client
        self.queue_urls = queue_urls
        self.dlq_urls = dlq_urls
        self.dispatch_url = dispatch_url

    def _send_batch(self, url: str, entries: list[dict[str, Any]]) -> None:
        for start in range(0, len(entries), BATCH):
            chunk = entries[start : start + BATCH]
            for _ in range(2):
                resp = self.client.send_message_batch(QueueUrl=url, Entries=chunk)
                failed = {f["Id"] for f in resp.get("Failed", [])}
                if not failed:
                    break
                chunk = [e for e in chunk if e["Id"] in failed]
            else:
                raise SqsSendError(f"{len(chunk)} messages not accepted by SQS")

    def send(self, channel_type: str, messages: Sequence[OutMessage]) -> None:
        entries = [
            {
                "Id": str(i),
                "MessageBody": json.dumps(m.body(), separators=(",", ":")),
                "DelaySeconds": m.delay_seconds,
                **({"MessageAttributes": _attrs(m.attributes)} if m.attributes else {}),
            }
            for i, m in enumerate(messages)
        ]
        if entries:
            self._send_batch(self.queue_urls[channel_type], entries)

    def change_visibility(self, channel_type: str, receipt_handle: str, seconds: int) -> None:
        self.client.change_message_visibility(
            QueueUrl=self.queue_urls[channel_type], ReceiptHandle=receipt_handle, VisibilityTimeout=seconds
        )

    def dead_letter(self, channel_type: str, message: OutMessage) -> None:
        self.client.send_message(
            QueueUrl=self.dlq_urls[channel_type],
            MessageBody=json.dumps(message.body(), separators=(",", ":")),
            MessageAttributes=_attrs(message.attributes),
        )

    def send_dispatch(self, shards: Sequence[int]) -> None:
        if self.dispatch_url is None:
            raise RuntimeError("no dispatch queue configured")
        entries = [{"Id": str(s), "MessageBody": json.dumps({"shard": s})} for s in shards]
        self._send_batch(self.dispatch_url, entries)

    def in_flight(self) -> dict[str, dict[str, int]]:
        """Per channel queue: messages visible, in flight (received, not yet deleted) and delayed
        (``GetQueueAttributes``, approximate as SQS says; covered by ``grant_send_messages``)."""
        names = {
            "ApproximateNumberOfMessages": "visible",
            "ApproximateNumberOfMessagesNotVisible": "in_flight",
            "ApproximateNumberOfMessagesDelayed": "delayed",
        }
        out: dict[str, dict[str, int]] = {}
        for channel, url in self.queue_urls.items():
            attrs = self.client.get_queue_attributes(QueueUrl=url, AttributeNames=list(names))["Attributes"]
            out[channel] = {short: int(attrs.get(name, 0)) for name, short in names.items()}
        return out


def _attrs(attributes: dict[str, str]) -> dict[str, dict[str, str]]:
    return {k: {"DataType": "String", "StringValue": v or "-"} for k, v in attributes.items()}
