"""Mapping between domain records and the compact stored form (short attribute names keep items
under 1 KB, so most ledger writes cost one write unit). Shared by the DynamoDB and in-memory stores."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from ..domain.localtime import SendWindow
from ..domain.models import Attempt, ChannelType, Delivery, Reminder, evidence_tag
from ..domain.ports import Cursor, IndexEntry, IndexKey
from ..domain.retention import TTL_ATTRIBUTE, expires_at
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
    "fb": "feedback",  # absent = None (issue 19: bounced | complained | rejected)
    "rr": "receiver_receipt",  # absent = None (issue 19: the standing receiver receipt)
    "ma": "maybe_accepted",  # absent = none (issue 25: destination tags, the evidence summary)
    "rs": "resend",  # absent = 0 (issue 25: intentional resends, each a new key)
    "pu": "parked_until",  # absent = None (issue 25: parked at a held endpoint until at most then)
}


#: Values that both conversions return as they are (the exact types, the common case first: a
#: stored item is mostly strings; ``type(v) in`` a set is cheaper than a chain of ``isinstance``).
_AS_IS = frozenset({str, int, bool})


def to_dynamo(value: Any) -> Any:
    """Floats become Decimals (DynamoDB has no float); None values are dropped from maps."""
    if type(value) in _AS_IS:
        return value
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: v if type(v) in _AS_IS else to_dynamo(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [v if type(v) in _AS_IS else to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    if type(value) in _AS_IS:
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: v if type(v) in _AS_IS else from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _AS_IS else from_dynamo(v) for v in value]
    return value


#: The delivery's fields in stored order; those stored only when not empty (issue 32 item 3: the map
#: is built on every claim and record, so the loop tests each field once, the common types first).
_TO_MAP = tuple(_DELIVERY_FIELDS.items())
_ONLY_IF_SET = frozenset({"ts", "ma", "rs"})
_ENUMS = (ChannelType, DeliveryState)


def delivery_to_map(d: Delivery) -> dict[str, Any]:
    out: dict[str, Any] = {}
    delivered = d.state is DeliveryState.DELIVERED
    for short, name in _TO_MAP:
        v = getattr(d, name)
        if v is None or v is False:
            continue
        if short in _ONLY_IF_SET and (not v or (delivered and short == "ma")):
            continue  # a delivered one's acceptance is the record (and its last line): no flag bytes
        out[short] = v if type(v) in _AS_IS else v.value if isinstance(v, _ENUMS) else v
    if d.last_error and d.last_error.get("detail") == "":
        out["le"] = {k: v for k, v in d.last_error.items() if k != "detail"}  # read back as ""
    out["rev"] = d.rev
    out["h"] = encode_history(d.history)
    if d.dropped:
        out["hx"] = dict(d.dropped)
    return to_dynamo(out)


def delivery_from_map(cid: str, m: dict[str, Any]) -> Delivery:
    """``m``: a delivery map already through :func:`from_dynamo` (:func:`reminder_from_item` converts
    the whole item once)."""
    kwargs: dict[str, Any] = {name: m[short] for short, name in _DELIVERY_FIELDS.items() if short in m}
    kwargs["type"] = ChannelType(kwargs["type"])
    kwargs["state"] = DeliveryState(kwargs["state"])
    kwargs["history"] = decode_history(m.get("h", []))
    kwargs["dropped"] = dict(m.get("hx") or {})
    le = kwargs.get("last_error")
    if isinstance(le, dict) and "detail" not in le:
        kwargs["last_error"] = {**le, "detail": ""}  # stored without an empty detail (7 bytes)
    d = Delivery(channel_id=cid, **kwargs)
    d.maybe_accepted = list(d.maybe_accepted)
    if not d.resend or d.state is DeliveryState.DELIVERED:
        # Items written before the summary, and delivered ones (stored without it): what their
        # history shows (a subset of the flags for every item written since, as every writer adds
        # lines through add_history; a resend starts its new key's flags empty, so not read back).
        seed = {t for line in d.history if (t := evidence_tag(d, line))}
        if not seed <= set(d.maybe_accepted):
            d.maybe_accepted = sorted(seed | set(d.maybe_accepted))
    return d


# -- the history line, one string each ------------------------------------------------------------
# An attempt stored as a map with its field names cost ~190 bytes; six of them pushed a delivered
# item past one write unit. A line is now one string of "|"-separated fields in a fixed order, with
# short codes for the common words, a compact timestamp, and policy version, fingerprint and worker
# written as ``^`` when they repeat the previous line's. Items written before (lines as maps) still read.
_LINE_FIELDS = (
    "at",
    "event",
    "outcome",
    "status",
    "decision",
    "delay_seconds",
    "policy_version",
    "receipt",
    "fingerprint",
    "detail",
    "worker",
    "dest",
    "repeat",
)
_CARRIED = ("policy_version", "fingerprint", "worker", "dest")
_SAME = "^"  # "as in the previous line that had one" (for the carried fields)
_CODES = {
    "attempt": "a",
    "accepted": "ac",
    "reconciled_conflict": "rc",
    "conflict_unconfirmed": "cu",
    "throttled": "th",
    "transient": "tr",
    "timeout": "to",
    "connection": "cn",
    "permanent": "pm",
    "invalid_destination": "id",
    "configuration": "cf",
    "delivered": "dv",
    "retry": "r",
    "hold": "h",
    "dead_letter": "dl",
    "suppressed": "sp",
    "bounced": "bo",
    "complained": "co",
    "receipt": "rx",
    "processed": "pr",
    "rejected": "rj",
}
_WORDS = {v: k for k, v in _CODES.items()}


def _compact_time(at: str) -> str:
    # "2026-11-29T12:00:00.123456Z" -> "20261129T120000.123456Z" (lossless)
    if len(at) == 27 and at.endswith("Z") and at[4] == "-":
        return f"{at[0:4]}{at[5:7]}{at[8:10]}T{at[11:13]}{at[14:16]}{at[17:19]}.{at[20:26]}Z"
    return at


def _full_time(at: str) -> str:
    if len(at) == 23 and at[8] == "T" and at.endswith("Z"):
        return f"{at[0:4]}-{at[4:6]}-{at[6:8]}T{at[9:11]}:{at[11:13]}:{at[13:15]}.{at[16:22]}Z"
    return at


def _num(value: float | int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def encode_history(history: list[Attempt]) -> list[str]:
    out: list[str] = []
    previous: dict[str, str] = {}
    for a in history:
        fields: list[str] = []
        for name in _LINE_FIELDS:
            v = getattr(a, name)
            if name == "at":
                text = _compact_time(v)
            elif name in ("status", "delay_seconds"):
                text = _num(v)
            elif name == "repeat":
                text = str(v) if v else ""
            else:
                text = "" if v is None else str(v).replace("|", "/")
                if name in ("event", "outcome", "decision"):
                    text = _CODES.get(text, text)
            if name in _CARRIED and text:
                if previous.get(name) == text:
                    text = _SAME
                else:
                    previous[name] = text
            fields.append(text)
        while fields and fields[-1] == "":
            fields.pop()
        out.append("|".join(fields))
    return out


def decode_history(lines: list[Any]) -> list[Attempt]:
    out: list[Attempt] = []
    previous: dict[str, str] = {}
    for line in lines:
        if isinstance(line, dict):  # written before the one-string form
            out.append(Attempt.from_dict(line))
            continue
        parts = str(line).split("|")
        values: dict[str, Any] = {}
        for name, text in zip(_LINE_FIELDS, parts, strict=False):
            if name in _CARRIED:
                if text == _SAME:
                    text = previous.get(name, "")
                elif text:
                    previous[name] = text
            if text == "":
                continue
            if name == "at":
                values[name] = _full_time(text)
            elif name in ("status", "repeat"):
                values[name] = int(text)
            elif name == "delay_seconds":
                values[name] = float(text)
            elif name in ("event", "outcome", "decision"):
                values[name] = _WORDS.get(text, text)
            else:
                values[name] = text
        values.setdefault("at", "")
        values.setdefault("event", "")
        out.append(Attempt(**values))
    return out


#: The stored names of the time fields, written (or removed) by every whole-reminder save.
TIME_FIELDS = ("dlo", "tz", "tzv", "sw", "dby")


def time_fields(r: Reminder) -> dict[str, Any]:
    """Local time, send window and deadline (issue 17), each omitted when absent (old items read):
    ``dlo`` wall time, ``tz`` zone, ``tzv`` tzdata release, ``sw`` "HHMM-HHMM", ``dby`` compact UTC."""
    out: dict[str, Any] = {}
    if r.due_local is not None:
        out["dlo"] = r.due_local
    if r.time_zone is not None:
        out["tz"] = r.time_zone
    if r.tz_rules is not None:
        out["tzv"] = r.tz_rules
    if r.send_window is not None:
        out["sw"] = r.send_window.encode()
    if r.deliver_by is not None:
        out["dby"] = _compact_time(iso(r.deliver_by))
    return out


def reminder_to_item(r: Reminder) -> dict[str, Any]:
    item: dict[str, Any] = to_dynamo(
        {
            **time_fields(r),
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
            **({"g": r.generation} if r.generation else {}),
            **({"r": math.ceil(r.retain_seconds / 3600)} if r.retain_seconds else {}),  # hours
            **({"loc": r.locale} if r.locale else {}),
            **({"tpr": int(r.template_registered)} if r.template_registered is not None else {}),
            **derived_of(r),
        }
    )
    item["dl"] = {cid: delivery_to_map(d) for cid, d in r.deliveries.items()}  # each converted once
    return item


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
        due_local=item.get("dlo"),
        time_zone=item.get("tz"),
        tz_rules=item.get("tzv"),
        send_window=SendWindow.decode(item["sw"]) if "sw" in item else None,
        deliver_by=parse_iso(_full_time(item["dby"])) if "dby" in item else None,
        generation=int(item.get("g", 0)),
        retain_seconds=int(item.get("r", 0)) * 3600,
        locale=item.get("loc"),
        template_registered=bool(item["tpr"]) if "tpr" in item else None,
        index_sort_key=None if item.get("w") else item.get("gsk"),
    )


# -- the sparse attention index -------------------------------------------------------------------
# ``nx`` (the account) and ``nxs`` ("<attention>#<due ISO>#<reminder id>") exist only while a delivery
# of the reminder needs a person: a dead letter, a held channel, a retry cycle. They are derived from
# the deliveries here, so every write of a whole item sets or clears them; a reminder delivered at
# its first attempt never has them (no index write at all).
ATTENTION_PK = "nx"
ATTENTION_SK = "nxs"
#: Most urgent first: a reminder is listed under the most urgent state of its deliveries.
ATTENTION_STATES = ("dead_letter", "held", "retryable")


def delivery_attention(d: Delivery) -> str | None:
    """``dead_letter``; ``held`` (the last attempt held the channel: our configuration); ``retryable``
    (the last attempt decided a retry, until the cycle ends delivered, dead or cancelled); or None."""
    if d.state is DeliveryState.DEAD_LETTER:
        return "dead_letter"
    if d.state.terminal:
        return None
    for line in reversed(d.history):
        if line.event == "attempt":
            return {"hold": "held", "retry": "retryable"}.get(line.decision)
    return None


def attention_of(r: Reminder) -> dict[str, str]:
    """The attention index attributes of ``r`` ({} when nothing needs attention)."""
    found = {a for d in r.deliveries.values() if (a := delivery_attention(d))}
    for state in ATTENTION_STATES:
        if state in found:
            return {ATTENTION_PK: r.account_id, ATTENTION_SK: f"{state}#{iso(r.due_at)}#{r.id}"}
    return {}


def derived_of(r: Reminder) -> dict[str, Any]:
    """Every attribute derived from the item's deliveries: the attention index keys and the TTL."""
    out: dict[str, Any] = dict(attention_of(r))
    expiry = expires_at(r)
    if expiry is not None:
        out[TTL_ATTRIBUTE] = expiry
    return out


DERIVED = (ATTENTION_PK, ATTENTION_SK, TTL_ATTRIBUTE)


def derived_of_item(item: dict[str, Any], written: Delivery | None = None) -> dict[str, Any]:
    """:func:`derived_of` of a stored item. ``written``: the delivery just stored into it, as the
    writer holds it (issue 32 item 3): only the fields the derivation reads are taken from the item
    (id, account, due time, retention, the other channels' maps) — no decode of the whole item, its
    data or the written channel's history."""
    if written is None or written.channel_id not in item.get("dl", {}):
        return derived_of(reminder_from_item(item))
    view = _DerivedView(
        id=item["rid"],
        account_id=item["acct"],
        due_at=parse_iso(item["due"]),
        retain_seconds=int(from_dynamo(item.get("r", 0))) * 3600,
        deliveries={
            cid: written
            if cid == written.channel_id
            else delivery_from_map(cid, from_dynamo(item["dl"][cid]))
            for cid in item["chs"]
        },
    )
    return derived_of(view)  # type: ignore[arg-type]  # the fields derived_of reads, and only those


@dataclass(frozen=True)
class _DerivedView:
    """What :func:`attention_of` and :func:`expires_at` read of a reminder."""

    id: str
    account_id: str
    due_at: datetime
    retain_seconds: int
    deliveries: dict[str, Delivery]


# -- the due index and the shard cursors, as both stores keep them ----------------------------------
def index_attributes(index: IndexKey) -> dict[str, Any]:
    """Where a reminder's item sits in the due index (GSI ``due``): its keys and the watch flag."""
    return {"gpk": index.pk, "gsk": index.sk, "w": index.watch}


def index_entry(item: Mapping[str, Any]) -> IndexEntry:
    """One due-index row from what the index projects of an item (rid, gsk, v, chs, w)."""
    return IndexEntry(
        reminder_id=item["rid"],
        sort_key=item["gsk"],
        version=int(item["v"]),
        channels=tuple(item.get("chs", [])),
        watch=bool(item.get("w", False)),
    )


def refuse_empty_range(after: str, until: str) -> None:
    """Sort keys (of any form: untagged, either tag length) hold no character below a space, so
    "> after" is ">= after + ' '": a query past ``until`` is
    ``BETWEEN lo AND hi`` with lo > hi, which DynamoDB refuses (ValidationException; moto answers an
    empty page). Both stores refuse it, so a caller that issues one fails on either."""
    if after and after + " " > until:
        raise ValueError("query range BETWEEN lo AND hi with lo > hi")


def cursor_item(bucket: str, watch_bucket: str = "") -> dict[str, Any]:
    """A new shard cursor: at the start of ``bucket`` (and of ``watch_bucket``), not leased."""
    return {"b": bucket, "a": "", "wb": watch_bucket, "wa": "", "rev": 0}


def cursor_from_item(shard: int, item: Mapping[str, Any]) -> Cursor:
    return Cursor(
        shard=shard,
        bucket=item["b"],
        after=item.get("a", ""),
        watch_bucket=item.get("wb", ""),
        watch_after=item.get("wa", ""),
        page=item.get("ap", ""),
        watch_page=item.get("wp", ""),
        lease_owner=item.get("lo"),
        lease_until=item.get("lu"),
        rev=int(item.get("rev", 0)),
    )
