"""The shared rate limiter's records in the reminders table (own key prefix ``L#``), low-level client.

Item ``pk=L#<bucket>, sk=L``: ``t`` the theoretical arrival time (epoch seconds), ``expires_at``
the table's TTL (an idle destination's record expires). One conditional ``UpdateItem`` per try:
granted when ``t`` is absent or not after now; refused tries read the stored ``t`` back from the
failed condition (``ReturnValuesOnConditionCheckFailure``), no second read. A reservation is one
more: ``t`` moved on by one interval if it is after now and not after the latest start the caller
will wait for (``ReturnValues`` gives the new ``t``: the caller's slot is the interval before it).
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

PK_PREFIX = "L#"
SK = "L"
TTL_SECONDS = 3600


def _num(x: float) -> str:
    return str(Decimal(repr(round(x, 6))))


class DynamoRateSlots:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name
        self.writes = 0

    def advance(self, key: str, now: float, next_at: float) -> tuple[bool, float]:
        self.writes += 1
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": PK_PREFIX + key}, "sk": {"S": SK}},
                UpdateExpression="SET #t = :next, #e = :exp",
                ConditionExpression="attribute_not_exists(#t) OR #t <= :now",
                ExpressionAttributeNames={"#t": "t", "#e": "expires_at"},
                ExpressionAttributeValues={
                    ":next": {"N": _num(next_at)},
                    ":now": {"N": _num(now)},
                    ":exp": {"N": str(int(now) + TTL_SECONDS)},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self.client.exceptions.ConditionalCheckFailedException as exc:
            item = getattr(exc, "response", {}).get("Item") or {}
            stored = float(item.get("t", {}).get("N", next_at))
            return False, stored
        return True, next_at

    def reserve(self, key: str, now: float, latest: float, interval: float) -> tuple[bool, float]:
        self.writes += 1
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": PK_PREFIX + key}, "sk": {"S": SK}},
                UpdateExpression="SET #t = #t + :i, #e = :exp",
                ConditionExpression="#t > :now AND #t <= :latest",
                ExpressionAttributeNames={"#t": "t", "#e": "expires_at"},
                ExpressionAttributeValues={
                    ":i": {"N": _num(interval)},
                    ":now": {"N": _num(now)},
                    ":latest": {"N": _num(latest)},
                    ":exp": {"N": str(int(latest) + TTL_SECONDS)},
                },
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self.client.exceptions.ConditionalCheckFailedException as exc:
            item = getattr(exc, "response", {}).get("Item") or {}
            return False, float(item.get("t", {}).get("N", now))
        return True, float(resp["Attributes"]["t"]["N"])


class MemoryRateSlots:
    """The in-memory twin (the same condition), shared by the consumers of one world."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}
        self.lock = threading.Lock()
        self.writes = 0

    def advance(self, key: str, now: float, next_at: float) -> tuple[bool, float]:
        with self.lock:
            self.writes += 1
            current = self.t.get(key)
            if current is None or current <= now:
                self.t[key] = next_at
                return True, next_at
            return False, current

    def reserve(self, key: str, now: float, latest: float, interval: float) -> tuple[bool, float]:
        with self.lock:
            self.writes += 1
            current = self.t.get(key)
            if current is None:
                return False, now
            if now < current <= latest:
                self.t[key] = current + interval
                return True, self.t[key]
            return False, current
