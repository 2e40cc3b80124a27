"""An account's template versions (issue 30) in the reminders table (own key prefix ``TPL#``), on
the low-level client, and their in-memory twin.

Item ``pk=TPL#<account id>#<template id>, sk=V#<version, 7 digits>``: ``doc`` the version's content
(domain/templates.py ``encode``: locales, variables, default locale), ``at`` when it was written,
``ret`` when it was retired (absent while current). The key carries the account: another account's
template id is another partition, and reads as absent. A version is written once (a conditional
put) and never changed, except ``ret`` set once; it is never deleted (a version outlives every
reminder naming it, retention included: versions have no TTL).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from ..domain.templates import TemplateVersion
from .lost_answers import LostAnswers

PK_PREFIX = "TPL#"
SK_PREFIX = "V#"


def _pk(account_id: str, template_id: str) -> str:
    return f"{PK_PREFIX}{account_id}#{template_id}"


def _sk(version: int) -> str:
    return f"{SK_PREFIX}{version:07d}"


class DynamoTemplateStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name
        self.reads = 0  # GetItem/Query calls (the bench's template reads)

    def _key(self, account_id: str, template_id: str, version: int) -> dict[str, Any]:
        return {"pk": {"S": _pk(account_id, template_id)}, "sk": {"S": _sk(version)}}

    def put_new(self, tv: TemplateVersion) -> bool:
        """Write the version unless it exists; False when it does."""
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    **self._key(tv.account_id, tv.template_id, tv.version),
                    "doc": {"S": tv.encode()},
                    "at": {"S": tv.created_at},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def get(
        self, account_id: str, template_id: str, version: int, *, consistent: bool = True
    ) -> TemplateVersion | None:
        self.reads += 1
        resp = self.client.get_item(
            TableName=self.table, Key=self._key(account_id, template_id, version), ConsistentRead=consistent
        )
        item = resp.get("Item")
        if not item:
            return None
        return TemplateVersion.decode(
            account_id,
            template_id,
            version,
            item["doc"]["S"],
            created_at=item.get("at", {}).get("S", ""),
            retired_at=item["ret"]["S"] if "ret" in item else None,
        )

    def versions(self, account_id: str, template_id: str, limit: int) -> list[tuple[int, str, str | None]]:
        """(version, created at, retired at) of the template's versions, oldest first, at most ``limit``."""
        self.reads += 1
        out: list[tuple[int, str, str | None]] = []
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": _pk(account_id, template_id)}},
            "ProjectionExpression": "sk, #at, ret",
            "ExpressionAttributeNames": {"#at": "at"},
            "ConsistentRead": True,
        }
        while len(out) < limit:
            resp = self.client.query(**kwargs, Limit=limit - len(out))
            for item in resp.get("Items", []):
                out.append(
                    (
                        int(item["sk"]["S"][len(SK_PREFIX) :]),
                        item.get("at", {}).get("S", ""),
                        item["ret"]["S"] if "ret" in item else None,
                    )
                )
            if "LastEvaluatedKey" not in resp:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return out

    def retire(self, account_id: str, template_id: str, version: int, at: str) -> str | None:
        """Mark the version retired (once: a second retire keeps the first time); the retirement
        time, or None when the version does not exist."""
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=self._key(account_id, template_id, version),
                UpdateExpression="SET ret = if_not_exists(ret, :at)",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":at": {"S": at}},
                ReturnValues="ALL_NEW",
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return None
        return str(resp["Attributes"]["ret"]["S"])


class MemoryTemplateStore(LostAnswers):
    """Fault mode (``lose_next_answer``): ``put_new``."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str, int], TemplateVersion] = {}
        self.reads = 0
        self.lock = threading.Lock()
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose

    def put_new(self, tv: TemplateVersion) -> bool:
        with self.lock:
            key = (tv.account_id, tv.template_id, tv.version)
            if key in self.items:
                return False
            self.items[key] = TemplateVersion.decode(
                tv.account_id, tv.template_id, tv.version, tv.encode(), created_at=tv.created_at
            )
            return not self._answer_lost("put_new")

    def get(
        self, account_id: str, template_id: str, version: int, *, consistent: bool = True
    ) -> TemplateVersion | None:
        with self.lock:
            self.reads += 1
            return self.items.get((account_id, template_id, version))

    def versions(self, account_id: str, template_id: str, limit: int) -> list[tuple[int, str, str | None]]:
        with self.lock:
            self.reads += 1
            found = sorted(
                (v.version, v.created_at, v.retired_at)
                for (a, t, _), v in self.items.items()
                if (a, t) == (account_id, template_id)
            )
            return found[:limit]

    def retire(self, account_id: str, template_id: str, version: int, at: str) -> str | None:
        with self.lock:
            key = (account_id, template_id, version)
            tv = self.items.get(key)
            if tv is None:
                return None
            if tv.retired_at is None:
                self.items[key] = replace(tv, retired_at=at)
            return self.items[key].retired_at
