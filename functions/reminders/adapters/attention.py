"""The sparse attention index on DynamoDB (GSI ``attention``: partition ``nx`` = account id, sort
``nxs`` = "<dead_letter|held|retryable>#<due ISO>#<reminder id>"), through the low-level client.

The attributes are derived from the item's deliveries (adapters/codec.py ``attention_of``): a write
of the whole item (create, correction, cancel) carries them; a write of one delivery (the worker's
outcome, a redrive) returns the item it produced and, only when that changes what the index should
say, one more conditional write settles them (conditional on every delivery revision it saw, so a
later write's own settlement wins). A reminder delivered at its first attempt never needs it: no
extra write and no index write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..domain.listing import Listed, ListQuery, decode_cursor, encode_cursor, in_range, parse_sk, sk_of
from ..domain.models import Delivery
from .codec import ATTENTION_PK, ATTENTION_SK, DERIVED, derived_of_item, from_dynamo

ATTENTION_INDEX = "attention"


def settle(update_item: Callable[..., Any], item: dict[str, Any], written: Delivery | None = None) -> int:
    """After a write of one delivery: make the derived attributes (``nx``/``nxs`` and the TTL
    ``xp``) say what ``item`` (the written item, as ``ReturnValues=ALL_NEW`` gave it, in the
    resource layer's Python form) needs. ``update_item`` is the store's own (``Table.update_item``:
    Python values). Returns the writes made (0 or 1)."""
    want = derived_of_item(item, written)  # ``written``: the delivery just stored, as held
    have = {k: from_dynamo(item[k]) for k in DERIVED if k in item}
    if want == have:
        return 0
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    conditions = ["attribute_exists(pk)"]
    for i, (cid, d) in enumerate(sorted(item.get("dl", {}).items())):
        names[f"#c{i}"] = cid
        values[f":r{i}"] = d.get("rev", 0)
        conditions.append(f"dl.#c{i}.rev = :r{i}")
    sets = [f"{k} = :{k}" for k in DERIVED if k in want]
    values.update({f":{k}": want[k] for k in DERIVED if k in want})
    removes = [k for k in DERIVED if k not in want and k in have]
    update = " ".join(
        part
        for part in (
            "SET " + ", ".join(sets) if sets else "",
            "REMOVE " + ", ".join(removes) if removes else "",
        )
        if part
    )
    try:
        update_item(
            Key={"pk": str(item["pk"]), "sk": "R"},
            ConditionExpression=" AND ".join(conditions),
            UpdateExpression=update,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return 0  # a later write changed a delivery: its own settlement decides
        raise
    return 1


class DynamoAttentionIndex:
    """Pages of the attention index for one account (low-level client, one Query per page)."""

    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table_name = table_name

    def list(self, q: ListQuery, cursor: str | None) -> tuple[list[Listed], str | None]:
        after = decode_cursor(q, cursor) if cursor else None
        values: dict[str, Any] = {":a": {"S": q.account_id}}
        cond = f"{ATTENTION_PK} = :a"
        bounds = q.bounds()
        if bounds is not None:
            cond += f" AND {ATTENTION_SK} BETWEEN :lo AND :hi"
            values.update({":lo": {"S": bounds[0]}, ":hi": {"S": bounds[1]}})
        out: list[Listed] = []
        start = after
        while True:
            request: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": ATTENTION_INDEX,
                "KeyConditionExpression": cond,
                "ExpressionAttributeValues": values,
                "Limit": q.limit + 1 - len(out),
            }
            if start is not None:
                rid = start.rsplit("#", 1)[1]
                request["ExclusiveStartKey"] = {
                    "pk": {"S": f"R#{rid}"},
                    "sk": {"S": "R"},
                    ATTENTION_PK: {"S": q.account_id},
                    ATTENTION_SK: {"S": start},
                }
            resp = self.client.query(**request)
            items = resp.get("Items", [])
            for it in items:
                sk = it[ATTENTION_SK]["S"]
                if in_range(q, sk):
                    out.append(parse_sk(sk))
            last = resp.get("LastEvaluatedKey")
            if len(out) > q.limit:
                out = out[: q.limit]
                return out, encode_cursor(q, sk_of(out[-1]))
            if not last:
                return out, None
            start = last[ATTENTION_SK]["S"]
