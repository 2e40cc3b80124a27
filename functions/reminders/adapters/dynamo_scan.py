"""A paged scan of the table's due-index entries (operator tooling: the backfill of issue 28)."""

from __future__ import annotations

import json
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from ..domain.ports import IndexedRow

_SER, _DES = TypeSerializer(), TypeDeserializer()


def scan_index_entries(client: Any, table_name: str, after: str, limit: int) -> tuple[list[IndexedRow], str]:
    """One Scan page (``limit`` items read): each reminder row's entry; the next page's start as JSON
    of the scan's LastEvaluatedKey (the table's string keys), "" at the end."""
    kwargs: dict[str, Any] = {
        "TableName": table_name,
        "Limit": limit,
        "ProjectionExpression": "rid, acct, gpk, gsk, w",
        "FilterExpression": "attribute_exists(gpk) AND attribute_exists(rid)",
        # Strongly consistent (twice the read units of an eventual Scan, once per upgrade): an entry
        # an older build wrote just before the run is read as written, never as a stale image
        # already in this build's form and skipped (the explorer's seed 40, review rev28e).
        "ConsistentRead": True,
    }
    if after:
        kwargs["ExclusiveStartKey"] = {k: _SER.serialize(v) for k, v in json.loads(after).items()}
    resp = client.scan(**kwargs)
    out = []
    for typed in resp.get("Items", []):
        item = {k: _DES.deserialize(v) for k, v in typed.items()}
        out.append(
            IndexedRow(item["rid"], item["acct"], item["gpk"], item["gsk"], bool(item.get("w", False)))
        )
    last = resp.get("LastEvaluatedKey")
    return out, (
        json.dumps({k: _DES.deserialize(v) for k, v in last.items()}, sort_keys=True) if last else ""
    )
