"""Receiver receipts in the reminders table (own key prefix, low-level client): the API's
conditional put is the durable first step; the table's stream (filtered to this prefix, INSERT only)
carries each new receipt to ReceiptsFunction. No put-then-send gap: the stream record is written by
DynamoDB atomically with the item. Plus the in-memory twin and the ReceiverSecrets of an endpoint.

Item: ``pk = "RCPT#<webhook id>"``, ``sk = "E#<event id>"``; ``rid``/``cid`` (where the delivery
is), ``st`` status, ``et`` event time, ``rs`` reason, ``at`` received, ``expires_at`` (TTL).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from .lost_answers import LostAnswers

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

    def get(self, webhook_id: str, event_id: str) -> dict[str, str] | None:
        key = {k: {"S": v} for k, v in receipt_key(webhook_id, event_id).items()}
        got = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")
        return {k: str(next(iter(v.values()))) for k, v in got.items()} if got else None


class MemoryReceiptLog(LostAnswers):
    """The in-memory twin; ``on_put`` plays the stream (called with each new item). Fault mode
    (``lose_next_answer``): ``put_new`` (the retry finds the item: False, the item and its stream
    record written)."""

    def __init__(self, on_put: Callable[[dict[str, str]], None] | None = None) -> None:
        self.items: dict[tuple[str, str], dict[str, str]] = {}
        self.on_put = on_put
        self.lock = threading.Lock()
        self.writes = 0
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose

    def put_new(self, webhook_id: str, event_id: str, item: dict[str, str]) -> bool:
        key = receipt_key(webhook_id, event_id)
        with self.lock:
            self.writes += 1
            if (key["pk"], key["sk"]) in self.items:
                return False
            self.items[(key["pk"], key["sk"])] = {**item, **key}
            lost = self._answer_lost("put_new")
        if self.on_put is not None:
            self.on_put({**item, **key})
        return not lost

    def get(self, webhook_id: str, event_id: str) -> dict[str, str] | None:
        key = receipt_key(webhook_id, event_id)
        with self.lock:
            got = self.items.get((key["pk"], key["sk"]))
            return dict(got) if got is not None else None


class EndpointReceiverSecrets:
    """ReceiverSecrets from the endpoint a delivery was sent through (issues 15 and 24): the secrets
    that sign its webhooks sign its receipts — during a rotation's overlap the old and the new. A
    bare URL's is its account's implicit endpoint of that origin; the stack's former channel secret
    never verifies a receipt (even while the migration window adds it to outgoing webhooks). Only
    looked up, never made: no endpoint, no secrets."""

    def __init__(
        self,
        endpoint_for: Callable[[str, str], Any],  # Endpoints.for_send(account_id, destination)
        now: Callable[[], Any],
    ) -> None:
        self.endpoint_for = endpoint_for
        self.now = now

    def secrets_for(self, account_id: str, destination: str) -> list[str]:
        endpoint = self.endpoint_for(account_id, destination)
        if endpoint is None or endpoint.account_id != account_id:
            return []
        secrets: list[str] = endpoint.signing_secrets(self.now())
        return secrets


class SharedReceiverSecrets:
    """ReceiverSecrets of one fixed secret for every delivery: the unit tests' in-memory world only
    (the runtime and the fault run use EndpointReceiverSecrets)."""

    def __init__(self, secret: Callable[[], str]) -> None:
        self.secret = secret

    def secrets_for(self, account_id: str, destination: str) -> list[str]:
        return [self.secret()]
