"""Receiver receipts in the reminders table (own key prefix, low-level client): the API's
conditional put is the durable first step; the table's stream (filtered to this prefix, INSERT only)
carries each new receipt to ReceiptsFunction. No put-then-send gap: the stream record is written by
DynamoDB atomically with the item. Plus the in-memory twin and the shared-secret ReceiverSecrets.

Item: ``pk = "RCPT#<webhook id>"``, ``sk = "E#<event id>"``; ``rid``/``cid`` (where the delivery
is), ``st`` status, ``et`` event time, ``rs`` reason, ``at`` received, ``expires_at`` (TTL).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

PREFIX = "RCPT#"
#: A received receipt is kept this long (TTL) for deduplication by event id, then expires.
RECEIPT_RETENTION_SECONDS = 30 * 24 * 3600


def receipt_key(webhook_id: str, event_id: str) -> dict[str, str]:
    return {"pk": PREFIX + webhook_id, "sk": "E#" + event_id}


class DynamoReceiptLog:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    def put_new(self, webhook_id: str, event_id: str, item: dict[str, str]) -> bool:
        full: dict[str, Any] = {k: {"S": v} for k, v in {**item, **receipt_key(webhook_id, event_id)}.items()}
        if "expires_at" in item:
            full["expires_at"] = {"N": item["expires_at"]}
        try:
            self.client.put_item(
                TableName=self.table, Item=full, ConditionExpression="attribute_not_exists(pk)"
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True


class MemoryReceiptLog:
    """The in-memory twin; ``on_put`` plays the stream (called with each new item)."""

    def __init__(self, on_put: Callable[[dict[str, str]], None] | None = None) -> None:
        self.items: dict[tuple[str, str], dict[str, str]] = {}
        self.on_put = on_put
        self.lock = threading.Lock()
        self.writes = 0

    def put_new(self, webhook_id: str, event_id: str, item: dict[str, str]) -> bool:
        key = receipt_key(webhook_id, event_id)
        with self.lock:
            self.writes += 1
            if (key["pk"], key["sk"]) in self.items:
                return False
            self.items[(key["pk"], key["sk"])] = {**item, **key}
        if self.on_put is not None:
            self.on_put({**item, **key})
        return True


class EndpointReceiverSecrets:
    """ReceiverSecrets from the endpoint a delivery sends through (issue 15): the secrets that sign
    its webhooks now sign its receipts — during a rotation's overlap the old and the new. A delivery
    with no registered endpoint (a bare URL) verifies against the stack's channel secret, which
    is what signs its webhooks. The reminder is read to find the delivery (its account and
    destination): an unknown reminder, delivery or endpoint has no secrets (404)."""

    def __init__(
        self,
        reminders: Any,  # a ReminderStore
        endpoint_for: Callable[[str, str], Any],  # Endpoints.for_send(account_id, destination)
        channel_secret: Callable[[], str],
        now: Callable[[], Any],
    ) -> None:
        self.reminders = reminders
        self.endpoint_for = endpoint_for
        self.channel_secret = channel_secret
        self.now = now

    def secrets_for(self, webhook_id: str, reminder_id: str) -> list[str]:
        reminder = self.reminders.get(reminder_id)
        if reminder is None:
            return []
        delivery = next(
            (d for d in reminder.deliveries.values() if d.key == webhook_id and d.type.value == "webhook"),
            None,
        )
        if delivery is None:
            return []
        endpoint = self.endpoint_for(reminder.account_id, delivery.destination)
        if endpoint is None:
            if delivery.destination.startswith("ep_"):
                return []  # the endpoint it names is gone
            return [self.channel_secret()]
        secrets: list[str] = endpoint.signing_secrets(self.now())
        return secrets


class SharedReceiverSecrets:
    """ReceiverSecrets implemented by the one shared webhook signing secret (until issue 15's
    per-endpoint secrets replace it): every endpoint's receipts verify against it."""

    def __init__(self, secret: Callable[[], str]) -> None:
        self.secret = secret

    def secrets_for(self, webhook_id: str, reminder_id: str) -> list[str]:
        return [self.secret()]
