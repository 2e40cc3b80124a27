"""Mapping between domain records and the compact stored form (short attribute names keep items
under 1 KB, so most ledger writes cost one write unit). Shared by the DynamoDB and in-memory stores."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..domain.models import Attempt, ChannelType, Delivery, Reminder
from ..domain.schedule import iso, parse_iso
from ..domain.states import DeliveryState

_DELIVERY_FIELDS = {
    "t": "type",
    "dst": "destination",
    "k": "key",
    "st": "state",
    "n": "attempts",
    "th": "throttles",
    "ts": "throttle_streak",  # absent = 0 (items written before it; a delivered item never has it)
    "cy": "cycle",
    "cs": "cycle_started_at",
    "lo": "lease_owner",
    "lu": "lease_until",
    "na": "next_attempt_at",
    "le": "last_error",
    "rc": "receipt",
    "dr": "dead_letter_reason",
    "da": "delivered_at",
    "dp": "dlq_pending",
    "rev": "rev",
}


def to_dynamo(value: Any) -> Any:
    """Floats become Decimals (DynamoDB has no float); None values are dropped from maps."""
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: to_dynamo(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    return value


def delivery_to_map(d: Delivery) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for short, name in _DELIVERY_FIELDS.items():
        v = getattr(d, name)
        if v is None or v is False or (short == "ts" and not v):
            continue
        out[short] = v.value if isinstance(v, ChannelType | DeliveryState) else v
    out["rev"] = d.rev
    out["h"] = [a.to_dict() for a in d.history]
    return to_dynamo(out)


def delivery_from_map(cid: str, m: dict[str, Any]) -> Delivery:
    m = from_dynamo(m)
    kwargs: dict[str, Any] = {name: m[short] for short, name in _DELIVERY_FIELDS.items() if short in m}
    kwargs["type"] = ChannelType(kwargs["type"])
    kwargs["state"] = DeliveryState(kwargs["state"])
    kwargs["history"] = [Attempt.from_dict(a) for a in m.get("h", [])]
    return Delivery(channel_id=cid, **kwargs)


def reminder_to_item(r: Reminder) -> dict[str, Any]:
    return to_dynamo(
        {
            "pk": f"R#{r.id}",
            "sk": "R",
            "rid": r.id,
            "acct": r.account_id,
            "key": r.key,
            "kind": r.kind,
            "due": iso(r.due_at),
            "tid": r.template_id,
            "tv": r.template_version,
            "data": r.data,
            "v": r.version,
            "at": iso(r.created_at),
            "fp": r.fingerprint,
            "shard": r.shard,
            "chs": list(r.deliveries),
            "dl": {cid: delivery_to_map(d) for cid, d in r.deliveries.items()},
        }
    )


def reminder_from_item(item: dict[str, Any]) -> Reminder:
    item = from_dynamo(item)
    return Reminder(
        id=item["rid"],
        account_id=item["acct"],
        key=item["key"],
        kind=item["kind"],
        due_at=parse_iso(item["due"]),
        template_id=item["tid"],
        template_version=item["tv"],
        data=item.get("data", {}),
        version=item["v"],
        created_at=parse_iso(item["at"]),
        fingerprint=item["fp"],
        deliveries={cid: delivery_from_map(cid, item["dl"][cid]) for cid in item["chs"]},
        shard=item.get("shard", 0),
    )
