"""The suppression list in the reminders table, under its own key prefix, through the low-level
DynamoDB client; and its in-memory twin (unit tests, the simulator).

Item: ``pk = "SUP#<account>"``, ``sk = "<address hash>#<scope>"``; ``r`` reason, ``src`` source,
``at`` time. One partition per account: listing an account's entries is one query, never a scan.
The address hash is keyed per account (domain/address_hash.py); a lookup also reads the forms
entries were written with before (deployment-keyed, unkeyed), in the same batch, and re-keys such an
entry of that account when it matches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from ..domain.address_hash import AddressHasher
from ..domain.suppression import ALL_KINDS, SuppressionEntry, SuppressionReason
from .lost_answers import LostAnswers

PREFIX = "SUP#"
_ser = TypeSerializer()
_de = TypeDeserializer()


def _pk(account_id: str) -> str:
    return PREFIX + account_id


def _sk(hashed: str, scope: str) -> str:
    return f"{hashed}#{scope}"


def entry_to_item(e: SuppressionEntry) -> dict[str, Any]:
    return {
        "pk": _pk(e.account_id),
        "sk": _sk(e.address_hash, e.scope),
        "r": e.reason.value,
        "src": e.source,
        "at": e.at,
    }


def entry_from_item(item: dict[str, Any]) -> SuppressionEntry:
    hashed, _, scope = str(item["sk"]).rpartition("#")
    return SuppressionEntry(
        account_id=str(item["pk"])[len(PREFIX) :],
        address_hash=hashed,
        reason=SuppressionReason(item["r"]),
        source=str(item.get("src", "")),
        at=str(item.get("at", "")),
        scope=scope or ALL_KINDS,
    )


def _lookup_keys(hasher: AddressHasher, account_id: str, address: str, kind: str) -> list[tuple[str, str]]:
    """(pk, sk) of every entry that may suppress ``address`` for ``kind``: all-kinds and the kind's
    scope, under the account's keyed hash and the forms of before."""
    scopes = [ALL_KINDS] if kind == ALL_KINDS else [ALL_KINDS, kind]
    return [(_pk(account_id), _sk(h, s)) for h in hasher.candidates(account_id, address) for s in scopes]


def _settle(
    found: list[SuppressionEntry], current: str, rekey: Callable[[SuppressionEntry, str], None]
) -> SuppressionEntry | None:
    """The entry that suppresses (all-kinds first), re-keying every one found under an old hash
    (best effort: a failed re-key leaves the old entry, which keeps suppressing)."""
    for e in found:
        if e.address_hash != current:
            try:
                rekey(e, current)
            except Exception:  # the check itself must not fail for a migration step
                continue
    found = sorted(found, key=lambda e: e.scope != ALL_KINDS)
    return replace(found[0], address_hash=current) if found else None


class DynamoSuppressionList:
    def __init__(self, client: Any, table_name: str, hasher: AddressHasher | None = None) -> None:
        self.client = client
        self.table = table_name
        self.hasher = hasher or AddressHasher()

    def hash_of(self, account_id: str, address: str) -> str:
        return self.hasher.hash(account_id, address)

    def _rekey(self, e: SuppressionEntry, current: str) -> None:
        """Write the entry under the account's keyed hash, then delete its old key (a concurrent lookup may
        re-key it too: the add is conditional, the delete idempotent)."""
        self.add(replace(e, address_hash=current))
        self.client.delete_item(
            TableName=self.table,
            Key={"pk": {"S": _pk(e.account_id)}, "sk": {"S": _sk(e.address_hash, e.scope)}},
        )

    def add(self, entry: SuppressionEntry) -> bool:
        item = {k: _ser.serialize(v) for k, v in entry_to_item(entry).items()}
        try:
            self.client.put_item(
                TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)"
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def find(self, account_id: str, address: str, kind: str) -> SuppressionEntry | None:
        keys = [
            {"pk": {"S": pk}, "sk": {"S": sk}}
            for pk, sk in _lookup_keys(self.hasher, account_id, address, kind)
        ]
        resp = self.client.batch_get_item(RequestItems={self.table: {"Keys": keys, "ConsistentRead": True}})
        found = [
            entry_from_item({k: _de.deserialize(v) for k, v in item.items()})
            for item in resp.get("Responses", {}).get(self.table, [])
        ]
        if resp.get("UnprocessedKeys"):
            # Throttled keys: read them one by one (a suppression check must not be skipped).
            for key in resp["UnprocessedKeys"][self.table]["Keys"]:
                got = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True)
                if "Item" in got:
                    found.append(entry_from_item({k: _de.deserialize(v) for k, v in got["Item"].items()}))
        return _settle(found, self.hasher.hash(account_id, address), self._rekey)

    def list(self, account_id: str, limit: int = 100) -> list[SuppressionEntry]:
        out: list[SuppressionEntry] = []
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": _pk(account_id)}},
            "Limit": limit,
        }
        while len(out) < limit:
            resp = self.client.query(**kwargs)
            out += [
                entry_from_item({k: _de.deserialize(v) for k, v in item.items()})
                for item in resp.get("Items", [])
            ]
            if "LastEvaluatedKey" not in resp:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return out[:limit]

    def remove(self, account_id: str, address_hash: str, scope: str | None = None) -> int:
        """Remove the entries of the hash (one scope, or all), read first (consistently): each entry
        read counts as removed once its delete ran, so a delete whose answer was lost (botocore's
        retry found nothing left) still counts — as the in-memory twin removes what it read."""
        resp = self.client.query(
            TableName=self.table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :h)",
            ExpressionAttributeValues={":pk": {"S": _pk(account_id)}, ":h": {"S": address_hash + "#"}},
            ConsistentRead=True,
        )
        scopes = [str(i["sk"]["S"]).removeprefix(address_hash + "#") for i in resp.get("Items", [])]
        if scope is not None:
            scopes = [s for s in scopes if s == scope]
        for s in scopes:
            self.client.delete_item(
                TableName=self.table, Key={"pk": {"S": _pk(account_id)}, "sk": {"S": _sk(address_hash, s)}}
            )
        return len(scopes)


class MemorySuppressionList(LostAnswers):
    """The in-memory twin: the same keys and the same "add only if absent" rule. Fault mode
    (``lose_next_answer``): ``add`` (the retry finds the entry: False, the entry written)."""

    def __init__(self, hasher: AddressHasher | None = None) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.reads = 0
        self.writes = 0
        self.hasher = hasher or AddressHasher()
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose

    def hash_of(self, account_id: str, address: str) -> str:
        return self.hasher.hash(account_id, address)

    def _rekey(self, e: SuppressionEntry, current: str) -> None:
        self.add(replace(e, address_hash=current))
        with self.lock:
            self.items.pop((_pk(e.account_id), _sk(e.address_hash, e.scope)), None)

    def add(self, entry: SuppressionEntry) -> bool:
        item = entry_to_item(entry)
        with self.lock:
            self.writes += 1
            if (item["pk"], item["sk"]) in self.items:
                return False
            self.items[(item["pk"], item["sk"])] = item
            return not self._answer_lost("add")

    def find(self, account_id: str, address: str, kind: str) -> SuppressionEntry | None:
        keys = _lookup_keys(self.hasher, account_id, address, kind)
        with self.lock:
            self.reads += 1
            found = [entry_from_item(self.items[k]) for k in keys if k in self.items]
        return _settle(found, self.hasher.hash(account_id, address), self._rekey)

    def list(self, account_id: str, limit: int = 100) -> list[SuppressionEntry]:
        with self.lock:
            keys = sorted(k for k in self.items if k[0] == _pk(account_id))
            return [entry_from_item(self.items[k]) for k in keys[:limit]]

    def remove(self, account_id: str, address_hash: str, scope: str | None = None) -> int:
        with self.lock:
            keys = [
                k
                for k in self.items
                if k[0] == _pk(account_id)
                and (
                    k[1] == _sk(address_hash, scope)
                    if scope is not None
                    else k[1].startswith(address_hash + "#")
                )
            ]
            for k in keys:
                del self.items[k]
            return len(keys)
