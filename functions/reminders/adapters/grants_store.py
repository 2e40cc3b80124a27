"""Principal → account grants in the reminders table (own key prefix ``P#``), low-level client.

Item ``pk=P#<principal ARN>, sk=P`` with ``accts``, a string set of account ids (``*``: all).
Managed by ``reminders accounts grant|revoke``; read by the API (cached briefly per instance).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

PK_PREFIX = "P#"
SK = "P"


class GrantStore(Protocol):
    def accounts(self, principal: str) -> set[str]: ...

    def grant(self, principal: str, account_id: str) -> None: ...

    def revoke(self, principal: str, account_id: str) -> None: ...


class DynamoGrantStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    def _key(self, principal: str) -> dict[str, Any]:
        return {"pk": {"S": PK_PREFIX + principal}, "sk": {"S": SK}}

    def accounts(self, principal: str) -> set[str]:
        resp = self.client.get_item(TableName=self.table, Key=self._key(principal), ConsistentRead=True)
        return set(resp.get("Item", {}).get("accts", {}).get("SS", []))

    def grant(self, principal: str, account_id: str) -> None:
        self.client.update_item(
            TableName=self.table,
            Key=self._key(principal),
            UpdateExpression="ADD accts :a",
            ExpressionAttributeValues={":a": {"SS": [account_id]}},
        )

    def revoke(self, principal: str, account_id: str) -> None:
        self.client.update_item(
            TableName=self.table,
            Key=self._key(principal),
            UpdateExpression="DELETE accts :a",
            ExpressionAttributeValues={":a": {"SS": [account_id]}},
        )


class MemoryGrantStore:
    def __init__(self) -> None:
        self.grants: dict[str, set[str]] = {}
        self.lock = threading.Lock()

    def accounts(self, principal: str) -> set[str]:
        with self.lock:
            return set(self.grants.get(principal, set()))

    def grant(self, principal: str, account_id: str) -> None:
        with self.lock:
            self.grants.setdefault(principal, set()).add(account_id)

    def revoke(self, principal: str, account_id: str) -> None:
        with self.lock:
            self.grants.get(principal, set()).discard(account_id)
