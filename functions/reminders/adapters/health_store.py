"""Endpoint health in the reminders table (issue 16), low-level client: item ``pk=E#<endpoint id>,
sk=H`` beside the endpoint's own item (``sk=E``).

Attributes (read by the operational-events stream consumer too): ``st`` the state (``active`` |
``held`` | ``disabled``), ``tv`` the transition counter (bumped by every state change), ``acct``,
``since`` (ISO time of the last transition), ``why`` (its reason class). The window: ``o<t>`` /
``f<t>`` the answers / failures in the bucket starting at epoch second ``t`` (``ADD``, so writers
on any instance never conflict), ``fs`` the first failure since the last answer, ``fr`` failures in
a row, ``le`` the last error class. The probe: ``np`` next probe at, ``pu`` a probe in flight
until, ``pr`` failed probes since held (epoch seconds).

Every write is one ``UpdateItem``: outcomes conditional only on the owner, a transition conditional
on ``tv``, a probe lease conditional on the state, ``tv`` and the probe schedule. Each returns the
new image, so the writer judges the window without a second read.

The owner (``acct``) is fixed when the endpoint is created (:meth:`DynamoHealthStore.own`), or by
the first write of an implicit endpoint's own account (its id is a hash of that account): every
write is conditional on it (issue 24), so one account's outcomes never count in, move, probe or
report (``endpoint.*`` events go to ``acct``) another account's endpoint.
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from ..domain.health import EndpointHealth, EndpointState, HealthPolicy, HealthWhy, observed, transitioned
from .stale_reads import MISSING, StaleImages

PK_PREFIX = "E#"
SK = "H"
#: Every write's condition on the owner: none yet (its first write sets it), or this account.
_OWNED = "attribute_not_exists(#acct) OR #acct = :acct"
_BUCKET = re.compile(r"^([of])(\d+)$")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch(s: str) -> float:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def _n(x: float) -> dict[str, str]:
    return {"N": str(Decimal(repr(round(float(x), 3))))}


def health_from_item(endpoint_id: str, item: dict[str, Any]) -> EndpointHealth:
    """The stored attributes (low-level form) as an :class:`EndpointHealth`."""

    def num(name: str) -> float | None:
        v = item.get(name)
        return float(v["N"]) if v and "N" in v else None

    buckets: dict[int, tuple[int, int]] = {}
    for name, value in item.items():
        m = _BUCKET.match(name)
        if m and "N" in value:
            b = int(m.group(2))
            o, f = buckets.get(b, (0, 0))
            n = int(Decimal(value["N"]))
            buckets[b] = (o + n, f) if m.group(1) == "o" else (o, f + n)
    since = item.get("since", {}).get("S")
    return EndpointHealth(
        endpoint_id=endpoint_id,
        account_id=item.get("acct", {}).get("S", ""),
        state=EndpointState(item.get("st", {}).get("S", "active")),
        tv=int(num("tv") or 0),
        since=_epoch(since) if since else None,
        why=item.get("why", {}).get("S", ""),
        buckets=buckets,
        failing_since=num("fs"),
        failed_in_row=int(num("fr") or 0),
        probes=int(num("pr") or 0),
        next_probe_at=num("np"),
        probe_until=num("pu"),
        last_error=item.get("le", {}).get("S", ""),
    )


class DynamoHealthStore:
    """The health items, on the low-level client (``adapters/clients.make_client``)."""

    def __init__(self, client: Any, table_name: str, policy: HealthPolicy) -> None:
        self.client = client
        self.table = table_name
        self.policy = policy
        self.writes = 0
        self.reads = 0
        self._lock = threading.Lock()

    def _key(self, endpoint_id: str) -> dict[str, Any]:
        return {"pk": {"S": PK_PREFIX + endpoint_id}, "sk": {"S": SK}}

    def _count(self, reads: int = 0, writes: int = 0) -> None:
        with self._lock:
            self.reads += reads
            self.writes += writes

    def get(self, endpoint_id: str, consistent: bool = True) -> EndpointHealth | None:
        """``consistent`` False: an eventually consistent read at half the price (the consumers'
        one-second view; a stale one only delays what a conditional write then decides)."""
        self._count(reads=1)
        item = self.client.get_item(
            TableName=self.table, Key=self._key(endpoint_id), ConsistentRead=consistent
        ).get("Item")
        return health_from_item(endpoint_id, item) if item else None

    def own(self, endpoint_id: str, account_id: str) -> None:
        """At the endpoint's creation: the item is ``account_id``'s (active, nothing counted). An item
        some other account's deliveries wrote before (a reference stored before issue 24) is
        replaced by a fresh one."""
        self._count(writes=1)
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._key(endpoint_id),
                UpdateExpression="SET #acct = :acct, #st = if_not_exists(#st, :active), "
                "#tv = if_not_exists(#tv, :zero)",
                ConditionExpression=_OWNED,
                ExpressionAttributeNames={"#acct": "acct", "#st": "st", "#tv": "tv"},
                ExpressionAttributeValues={
                    ":acct": {"S": account_id},
                    ":active": {"S": EndpointState.ACTIVE.value},
                    ":zero": {"N": "0"},
                },
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            self._count(writes=1)
            self.client.put_item(
                TableName=self.table,
                Item={
                    **self._key(endpoint_id),
                    "acct": {"S": account_id},
                    "st": {"S": EndpointState.ACTIVE.value},
                    "tv": {"N": "0"},
                },
            )

    def _update(self, endpoint_id: str, **kwargs: Any) -> EndpointHealth | None:
        self._count(writes=1)
        try:
            out = self.client.update_item(
                TableName=self.table, Key=self._key(endpoint_id), ReturnValues="ALL_NEW", **kwargs
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return None
        return health_from_item(endpoint_id, out.get("Attributes") or {})

    def record(
        self,
        endpoint_id: str,
        account_id: str,
        now: float,
        ok: int,
        failed: int,
        error: str = "",
        prune: list[int] | tuple[int, ...] = (),
    ) -> EndpointHealth | None:
        """Add ``ok`` answers and ``failed`` failures to the bucket of ``now``; None (nothing
        written) when the item is another account's."""
        b = self.policy.bucket(now)
        names: dict[str, str] = {"#st": "st", "#tv": "tv", "#acct": "acct", "#fr": "fr", "#fs": "fs"}
        values: dict[str, Any] = {
            ":active": {"S": EndpointState.ACTIVE.value},
            ":zero": {"N": "0"},
            ":acct": {"S": account_id},
        }
        sets = [
            "#st = if_not_exists(#st, :active)",
            "#tv = if_not_exists(#tv, :zero)",
            "#acct = if_not_exists(#acct, :acct)",
        ]
        adds, removes = [], []
        if ok:
            names["#o"], values[":ok"] = f"o{b}", {"N": str(ok)}
            adds.append("#o :ok")
        if failed:
            names["#f"], values[":failed"] = f"f{b}", {"N": str(failed)}
            adds.append("#f :failed")
            values[":now"] = _n(now)
            if ok:
                sets += ["#fs = :now", "#fr = :failed"]
            else:
                sets.append("#fs = if_not_exists(#fs, :now)")
                adds.append("#fr :failed")
        elif ok:
            sets.append("#fr = :zero")
            removes.append("#fs")
        if error:
            names["#le"], values[":le"] = "le", {"S": error}
            sets.append("#le = :le")
        for i, old in enumerate(x for x in prune if x != b):
            names[f"#po{i}"], names[f"#pf{i}"] = f"o{old}", f"f{old}"
            removes += [f"#po{i}", f"#pf{i}"]
        expr = "SET " + ", ".join(sets)
        if adds:
            expr += " ADD " + ", ".join(adds)
        if removes:
            expr += " REMOVE " + ", ".join(removes)
        return self._update(
            endpoint_id,
            UpdateExpression=expr,
            ConditionExpression=_OWNED,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )

    def transition(
        self,
        current: EndpointHealth,
        state: EndpointState,
        why: HealthWhy,
        now: float,
        account_id: str = "",
    ) -> EndpointHealth | None:
        """Move to ``state`` if nobody moved it since ``current`` was read (``tv``); None if someone did."""
        held = state is EndpointState.HELD
        names = {
            "#st": "st",
            "#tv": "tv",
            "#since": "since",
            "#why": "why",
            "#acct": "acct",
            "#pr": "pr",
            "#pu": "pu",
        }
        values: dict[str, Any] = {
            ":st": {"S": state.value},
            ":tv": {"N": str(current.tv)},
            ":tv1": {"N": str(current.tv + 1)},
            ":since": {"S": _iso(now)},
            ":why": {"S": why.value},
            ":acct": {"S": account_id or current.account_id},
            ":zero": {"N": "0"},
        }
        sets = ["#st = :st", "#tv = :tv1", "#since = :since", "#why = :why", "#acct = :acct", "#pr = :zero"]
        removes = ["#pu"]
        names["#np"] = "np"
        if held:
            values[":np"] = _n(now + self.policy.probe_base_seconds)
            sets.append("#np = :np")
        else:
            names["#fs"], names["#fr"] = "fs", "fr"
            removes += ["#np", "#fs", "#fr"]
            for i, b in enumerate(current.buckets):
                names[f"#o{i}"], names[f"#f{i}"] = f"o{b}", f"f{b}"
                removes += [f"#o{i}", f"#f{i}"]
        cond = "attribute_not_exists(#tv) OR #tv = :tv" if current.tv == 0 else "#tv = :tv"
        cond = f"({cond}) AND ({_OWNED})"
        return self._update(
            current.endpoint_id,
            UpdateExpression="SET " + ", ".join(sets) + " REMOVE " + ", ".join(removes),
            ConditionExpression=cond,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )

    def take_probe(self, current: EndpointHealth, now: float) -> EndpointHealth | None:
        """The probe lease: one conditional write; None when another delivery holds it or none is due."""
        return self._update(
            current.endpoint_id,
            UpdateExpression="SET #pu = :until",
            ConditionExpression=(
                "#st = :held AND #tv = :tv AND (attribute_not_exists(#np) OR #np <= :now)"
                " AND (attribute_not_exists(#pu) OR #pu <= :now) AND #acct = :acct"
            ),
            ExpressionAttributeNames={"#st": "st", "#tv": "tv", "#np": "np", "#pu": "pu", "#acct": "acct"},
            ExpressionAttributeValues={
                ":acct": {"S": current.account_id},
                ":held": {"S": EndpointState.HELD.value},
                ":tv": {"N": str(current.tv)},
                ":now": _n(now),
                ":until": _n(now + self.policy.probe_lease_seconds),
            },
        )

    def probe_failed(self, current: EndpointHealth, now: float, error: str) -> EndpointHealth | None:
        """A failed probe: release the lease, the next probe after the grown interval."""
        probes = current.probes + 1
        return self._update(
            current.endpoint_id,
            UpdateExpression="SET #np = :np, #pr = :pr, #le = :le REMOVE #pu",
            ConditionExpression="#st = :held AND #tv = :tv AND #acct = :acct",
            ExpressionAttributeNames={
                "#st": "st",
                "#tv": "tv",
                "#np": "np",
                "#pu": "pu",
                "#pr": "pr",
                "#le": "le",
                "#acct": "acct",
            },
            ExpressionAttributeValues={
                ":acct": {"S": current.account_id},
                ":held": {"S": EndpointState.HELD.value},
                ":tv": {"N": str(current.tv)},
                ":np": _n(now + self.policy.probe_interval(probes, now - (current.since or now))),
                ":pr": {"N": str(probes)},
                ":le": {"S": error or "unknown"},
            },
        )


class MemoryHealthStore:
    """The in-memory twin: the same conditions on one dict, shared by the consumers of one world."""

    def __init__(self, policy: HealthPolicy, stale_writes: int = 0) -> None:
        self.policy = policy
        self.items: dict[str, EndpointHealth] = {}
        #: fault mode (issue 25 item 8): eventually consistent reads see an item as it was up to
        #: ``stale_writes`` writes ago, as DynamoDB may (this twin is otherwise consistent)
        self.stale = StaleImages(stale_writes)
        self.lock = threading.Lock()
        self.writes = 0
        self.reads = 0
        self.transitions: list[tuple[float, str, str, str]] = []  # (at, endpoint, state, why)

    def get(self, endpoint_id: str, consistent: bool = True) -> EndpointHealth | None:
        with self.lock:
            self.reads += 1
            old = MISSING if consistent else self.stale.eventual(endpoint_id)
            return self.items.get(endpoint_id) if old is MISSING else old

    def own(self, endpoint_id: str, account_id: str) -> None:
        with self.lock:
            self.writes += 1
            h = self.items.get(endpoint_id)
            self.stale.written(endpoint_id, h)
            if h is None or h.account_id != account_id:
                h = EndpointHealth(endpoint_id, account_id)
            self.items[endpoint_id] = replace(h, account_id=account_id)

    def _owned(self, h: EndpointHealth | None, account_id: str) -> bool:
        """As the DynamoDB condition: no item yet, or this account's."""
        return h is None or h.account_id == account_id

    def record(
        self,
        endpoint_id: str,
        account_id: str,
        now: float,
        ok: int,
        failed: int,
        error: str = "",
        prune: list[int] | tuple[int, ...] = (),
    ) -> EndpointHealth | None:
        with self.lock:
            self.writes += 1
            stored = self.items.get(endpoint_id)
            self.stale.written(endpoint_id, stored)
            if not self._owned(stored, account_id):
                return None
            h = stored or EndpointHealth(endpoint_id, account_id)
            h = observed(h, now, ok, failed, self.policy, error)
            self.items[endpoint_id] = h
            return h

    def transition(
        self,
        current: EndpointHealth,
        state: EndpointState,
        why: HealthWhy,
        now: float,
        account_id: str = "",
    ) -> EndpointHealth | None:
        with self.lock:
            self.writes += 1
            stored = self.items.get(current.endpoint_id)
            self.stale.written(current.endpoint_id, stored)
            if (stored.tv if stored else 0) != current.tv:
                return None
            if not self._owned(stored, account_id or current.account_id):
                return None
            base = stored or replace(current, account_id=account_id or current.account_id)
            h = transitioned(base, state, why, now, self.policy)
            self.items[current.endpoint_id] = h
            self.transitions.append((now, current.endpoint_id, state.value, why.value))
            return h

    def take_probe(self, current: EndpointHealth, now: float) -> EndpointHealth | None:
        with self.lock:
            self.writes += 1
            h = self.items.get(current.endpoint_id)
            self.stale.written(current.endpoint_id, h)
            if h is None or h.state is not EndpointState.HELD or h.tv != current.tv or not h.probe_due(now):
                return None
            if h.account_id != current.account_id:
                return None
            h = replace(h, probe_until=now + self.policy.probe_lease_seconds)
            self.items[current.endpoint_id] = h
            return h

    def probe_failed(self, current: EndpointHealth, now: float, error: str) -> EndpointHealth | None:
        with self.lock:
            self.writes += 1
            h = self.items.get(current.endpoint_id)
            self.stale.written(current.endpoint_id, h)
            if h is None or h.state is not EndpointState.HELD or h.tv != current.tv:
                return None
            if h.account_id != current.account_id:
                return None
            probes = h.probes + 1
            h = replace(
                h,
                probes=probes,
                next_probe_at=now + self.policy.probe_interval(probes, now - (h.since or now)),
                probe_until=None,
                last_error=error or "unknown",
            )
            self.items[current.endpoint_id] = h
            return h
