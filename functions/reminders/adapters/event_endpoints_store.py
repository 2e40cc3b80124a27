"""An account's event endpoint (issue 16) in the reminders table (own key prefix ``OPEV#``), on the
low-level client.

Item ``pk=OPEV#<account id>, sk=OPEV``: ``ep`` the endpoint id the account's operational events are
sent through, ``types`` (a string set) the event types it wants, ``at`` when it was registered.
One item per account: registering again replaces it; removing it stops the events.
"""

from __future__ import annotations

import threading
from typing import Any

from ..domain.opevents import EventEndpoint
from .lost_answers import LostAnswers

PK_PREFIX = "OPEV#"
SK = "OPEV"


class DynamoEventEndpointStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    @staticmethod
    def _key(account_id: str) -> dict[str, Any]:
        return {"pk": {"S": PK_PREFIX + account_id}, "sk": {"S": SK}}

    def get(self, account_id: str) -> EventEndpoint | None:
        resp = self.client.get_item(TableName=self.table, Key=self._key(account_id), ConsistentRead=True)
        item = resp.get("Item")
        if not item:
            return None
        return EventEndpoint(
            account_id=account_id,
            endpoint_id=item["ep"]["S"],
            event_types=tuple(sorted(item.get("types", {}).get("SS", []))),
            registered_at=item.get("at", {}).get("S", ""),
        )

    def put(self, registration: EventEndpoint) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                **self._key(registration.account_id),
                "ep": {"S": registration.endpoint_id},
                "types": {"SS": list(registration.event_types)},
                "at": {"S": registration.registered_at},
            },
        )

    def delete(self, account_id: str) -> bool:
        resp = self.client.delete_item(
            TableName=self.table, Key=self._key(account_id), ReturnValues="ALL_OLD"
        )
        return bool(resp.get("Attributes"))


class MemoryEventEndpointStore(LostAnswers):
    """Fault mode (``lose_next_answer``): ``delete`` (the retry's ALL_OLD is empty: False, deleted) and
    ``put`` (unconditional: the retry writes it again and answers as written)."""

    def __init__(self) -> None:
        self.items: dict[str, EventEndpoint] = {}
        self.reads = 0
        self.lock = threading.Lock()
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose

    def get(self, account_id: str) -> EventEndpoint | None:
        with self.lock:
            self.reads += 1
            return self.items.get(account_id)

    def put(self, registration: EventEndpoint) -> None:
        with self.lock:
            self.items[registration.account_id] = registration
            self._answer_lost("put")

    def delete(self, account_id: str) -> bool:
        with self.lock:
            deleted = self.items.pop(account_id, None) is not None
            return deleted and not self._answer_lost("delete")
