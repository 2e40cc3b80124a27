"""Webhook endpoints in the reminders table (their own key prefix ``E#``), on the low-level client.

Item ``pk=E#<endpoint id>, sk=E``: account, url, rate, description, ``off`` when disabled, the
signing keys ``ks`` (each with its creation time and, while overlapping after a rotation, its
expiry): a derived key stores only its salt ``g`` and which deployment key ``d`` it came from (an
implicit endpoint's: no data key, no KMS request to open it; under another deployment key: refused),
any other is sealed ``s`` (AES-GCM) under the endpoint's data key ``dk`` (KMS ``CiphertextBlob``,
present while a sealed key is or was); ``rev``
(optimistic concurrency), ``auto`` while it is an implicit endpoint the service made for a bare
URL's origin (issue 24), and ``seq`` (bumped by every new use, so a delete that counted the uses
cannot miss one added meanwhile).

Item ``pk=E#~deployment, sk=K`` (one per table): the deployment signing key, wrapped (``dk``),
written once by the first instance that derives a key (conditional put; a racing instance reads the
winner's). An instance reads it once (``E#``: the public function's ``LeadingKeys`` reach it).

Item ``pk=E#<endpoint id>, sk=U#<reminder id>#<channel id>``: a reminder channel that names the
endpoint, written together with the ``seq`` bump (one transaction) before the reminder itself. A
delete counts the uses whose delivery is not terminal; uses of finished reminders are removed then.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..domain.endpoints import Endpoint, SigningKey, new_salt
from ..domain.errors import ConfigurationError, StoreConflictError
from .envelope import SecretSealer, deployment_key_id
from .lost_answers import LostAnswers
from .stale_reads import MISSING, StaleImages

PK_PREFIX = "E#"
SK_ENDPOINT = "E"
DEPLOYMENT_KEY_ID = "~deployment"  # never an endpoint id (``ep_<32 hex>``)
SK_DEPLOYMENT_KEY = "K"
USE_PREFIX = "U#"

#: A use's transaction cancelled by a conflict is tried this many times in all, with jittered
#: exponential backoff from TRANSACTION_BACKOFF_SECONDS (at most ~0.15 s of waiting in all).
TRANSACTION_ATTEMPTS = 4
TRANSACTION_BACKOFF_SECONDS = 0.02
#: Cancellation reasons that a later try can clear (AWS: another transaction or a standalone write
#: holds the item, or throughput): anything but a failed condition or a refused request.
TRANSIENT_CANCELLATIONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)


def cancellation_codes(response: dict[str, Any]) -> list[str]:
    """The ``Code`` of each ``CancellationReasons`` entry of a ``TransactionCanceledException``
    (``"None"`` for an item that was fine), or, when a service leaves the list out, the codes AWS
    repeats in its message: ``... specific reasons [TransactionConflict, None]``."""
    reasons = response.get("CancellationReasons")
    if reasons:
        return [str(r.get("Code", "None")) for r in reasons]
    found = re.search(r"\[([A-Za-z, ]*)\]\s*$", str(response.get("Error", {}).get("Message", "")))
    return [c.strip() for c in found.group(1).split(",")] if found else []


# -- the stored form (plain Python values; bytes for the binary attributes) -------------------------
def needs_data_key(e: Endpoint) -> bool:
    """Some key is sealed (not derived): the endpoint needs its data key."""
    return any(k.salt is None for k in e.keys)


def _stored_key(
    e: Endpoint,
    k: SigningKey,
    sealer: SecretSealer,
    wrapped: bytes | None,
    deployment_key: Callable[[], bytes] | None,
) -> dict[str, Any]:
    if k.salt is not None:
        if deployment_key is None:
            raise ValueError("a derived key needs the deployment key")
        out: dict[str, Any] = {"g": k.salt, "d": deployment_key_id(deployment_key())}
    else:
        if wrapped is None:
            raise ValueError("a sealed key needs the endpoint's data key")
        out = {"s": sealer.seal(e.id, wrapped, k.secret)}
    return out | {"at": k.created_at} | ({"x": k.expires_at} if k.expires_at else {})


def endpoint_to_item(
    e: Endpoint,
    sealer: SecretSealer,
    wrapped: bytes | None,
    deployment_key: Callable[[], bytes] | None = None,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": PK_PREFIX + e.id,
        "sk": SK_ENDPOINT,
        "acct": e.account_id,
        "url": e.url,
        "at": e.created_at,
        "ks": [_stored_key(e, k, sealer, wrapped, deployment_key) for k in e.keys],
        "rev": e.rev,
        "seq": e.seq,
    }
    if wrapped is not None:
        item["dk"] = wrapped
    if e.rate_per_second is not None:
        item["rate"] = e.rate_per_second
    if e.description:
        item["desc"] = e.description
    if not e.enabled:
        item["off"] = True
    if e.implicit:
        item["auto"] = True
    return item


def endpoint_from_item(
    item: dict[str, Any], sealer: SecretSealer, deployment_key: Callable[[], bytes] | None = None
) -> Endpoint:
    """The endpoint with its secrets open: sealed ones under its data key (cached per instance),
    derived ones from ``deployment_key()`` (the wrapped deployment key), its account and its id."""
    eid = str(item["pk"])[len(PK_PREFIX) :]
    account = str(item["acct"])
    wrapped = bytes(item["dk"]) if "dk" in item else None

    def secret(k: dict[str, Any]) -> str:
        if "g" in k:
            if deployment_key is None:
                raise ValueError("a derived key needs the deployment key")
            root = deployment_key()
            if "d" in k and str(k["d"]) != deployment_key_id(root):
                # the key it was derived from is gone (another was made since): refused, never a
                # secret that no receiver holds
                raise ConfigurationError(
                    "deployment signing key replaced: derived endpoint secrets do not open"
                )
            return sealer.derive(root, account, eid, str(k["g"]))
        if wrapped is None:
            raise ValueError("a sealed key needs the endpoint's data key")
        return sealer.open(eid, wrapped, bytes(k["s"]))

    rate = item.get("rate")
    return Endpoint(
        id=eid,
        account_id=account,
        url=str(item["url"]),
        created_at=str(item["at"]),
        rate_per_second=float(rate) if rate is not None else None,
        description=str(item.get("desc", "")),
        enabled=not item.get("off", False),
        implicit=bool(item.get("auto", False)),
        keys=[
            SigningKey(secret(k), str(k["at"]), k.get("x"), str(k["g"]) if "g" in k else None)
            for k in item["ks"]
        ],
        rev=int(item.get("rev", 0)),
        seq=int(item.get("seq", 0)),
    )


def _wrapped_of(existing: dict[str, Any] | None, sealer: SecretSealer, endpoint: Endpoint) -> bytes | None:
    """The endpoint's one data key: the stored one, a fresh one when a sealed key first needs it
    (``GenerateDataKey``), or none (every key derived)."""
    if existing is not None and "dk" in existing:
        return bytes(existing["dk"])
    return sealer.new_data_key(endpoint.id) if needs_data_key(endpoint) else None


class DeploymentKey:
    """The wrapped deployment signing key, read (or first made) once per store instance. ``read``
    answers the stored blob or None; ``put`` writes it if none is stored (False: one was). Only a new
    derived key (``create``) may make it: opening a derived key whose deployment key is gone is a
    configuration error, never a silently different secret."""

    def __init__(
        self,
        sealer: SecretSealer,
        read: Callable[[], bytes | None],
        put: Callable[[bytes], bool],
    ) -> None:
        self.sealer = sealer
        self.read = read
        self.put = put
        self._wrapped: bytes | None = None
        self._lock = threading.Lock()

    def __call__(self, create: bool = False) -> bytes:
        if self._wrapped is None:
            with self._lock:
                if self._wrapped is None:
                    self._wrapped = self._load(create)
        return self._wrapped

    def _load(self, create: bool) -> bytes:
        stored = self.read()
        if stored is not None:
            return stored
        if not create:
            raise ConfigurationError("deployment signing key missing: derived endpoint secrets do not open")
        fresh = self.sealer.new_deployment_key()
        if self.put(fresh):
            return fresh
        stored = self.read()  # another instance made it first: theirs is the one
        if stored is None:
            raise StoreConflictError("deployment signing key not readable after its creation; retry")
        return stored


# -- DynamoDB --------------------------------------------------------------------------------------
class DynamoEndpointStore:
    def __init__(
        self,
        client: Any,
        table_name: str,
        sealer: SecretSealer,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

        self.client = client
        self.table = table_name
        self.sealer = sealer
        self.sleep = sleep
        self._ser = TypeSerializer()
        self._de = TypeDeserializer()
        self.deployment_key = DeploymentKey(sealer, self._read_deployment_key, self._put_deployment_key)

    def _read_deployment_key(self) -> bytes | None:
        resp = self.client.get_item(
            TableName=self.table, Key=self._key(DEPLOYMENT_KEY_ID, SK_DEPLOYMENT_KEY), ConsistentRead=True
        )
        item = resp.get("Item")
        return bytes(item["dk"]["B"]) if item and "dk" in item else None

    def _put_deployment_key(self, wrapped: bytes) -> bool:
        try:
            self.client.put_item(
                TableName=self.table,
                Item={**self._key(DEPLOYMENT_KEY_ID, SK_DEPLOYMENT_KEY), "dk": {"B": wrapped}},
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def derived_key(self, account_id: str, endpoint_id: str, created_at: str) -> SigningKey:
        salt = new_salt()
        secret = self.sealer.derive(self.deployment_key(create=True), account_id, endpoint_id, salt)
        return SigningKey(secret, created_at, salt=salt)

    def _enc(self, item: dict[str, Any]) -> dict[str, Any]:
        from .codec import to_dynamo

        return {k: self._ser.serialize(to_dynamo(v)) for k, v in item.items()}

    def _dec(self, item: dict[str, Any]) -> dict[str, Any]:
        from .codec import from_dynamo

        out = {k: from_dynamo(self._de.deserialize(v)) for k, v in item.items()}
        if "dk" in out:
            out["dk"] = bytes(out["dk"])
        for k in out.get("ks", []):
            if "s" in k:
                k["s"] = bytes(k["s"])
        return out

    def _key(self, endpoint_id: str, sk: str = SK_ENDPOINT) -> dict[str, Any]:
        return {"pk": {"S": PK_PREFIX + endpoint_id}, "sk": {"S": sk}}

    def _raw(self, endpoint_id: str, consistent: bool = True) -> dict[str, Any] | None:
        key = self._key(endpoint_id)
        resp = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=consistent)
        return self._dec(resp["Item"]) if "Item" in resp else None

    def put_new(self, endpoint: Endpoint) -> bool:
        item = endpoint_to_item(
            endpoint, self.sealer, _wrapped_of(None, self.sealer, endpoint), self.deployment_key
        )
        try:
            self.client.put_item(
                TableName=self.table, Item=self._enc(item), ConditionExpression="attribute_not_exists(pk)"
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def get(self, endpoint_id: str, consistent: bool = True) -> Endpoint | None:
        raw = self._raw(endpoint_id, consistent)
        return endpoint_from_item(raw, self.sealer, self.deployment_key) if raw else None

    def owner_of(self, endpoint_id: str) -> str | None:
        resp = self.client.get_item(
            TableName=self.table,
            Key=self._key(endpoint_id),
            ConsistentRead=False,
            ProjectionExpression="#acct",
            ExpressionAttributeNames={"#acct": "acct"},
        )
        item = resp.get("Item")
        return str(item["acct"]["S"]) if item and "acct" in item else None

    def save(self, endpoint: Endpoint, expected_rev: int) -> bool:
        raw = self._raw(endpoint.id)
        if raw is None or int(raw.get("rev", 0)) != expected_rev:
            return False
        stored = Endpoint(**{**_fields(endpoint), "rev": expected_rev + 1, "seq": int(raw.get("seq", 0))})
        item = endpoint_to_item(
            stored, self.sealer, _wrapped_of(raw, self.sealer, stored), self.deployment_key
        )
        item.pop("seq")  # bumped by uses concurrently: not ours to overwrite
        names = {f"#{k}": k for k in item if k not in ("pk", "sk")}
        values = {f":{k}": v for k, v in item.items() if k not in ("pk", "sk")}
        sets = ", ".join(f"#{k} = :{k}" for k in item if k not in ("pk", "sk"))
        removes = [a for a in ("rate", "desc", "off", "auto") if a not in item]
        expr = f"SET {sets}" + (f" REMOVE {', '.join('#' + a for a in removes)}" if removes else "")
        names.update({f"#{a}": a for a in removes})
        values[":expected"] = expected_rev
        names["#r"] = "rev"
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._key(endpoint.id),
                UpdateExpression=expr,
                ConditionExpression="#r = :expected",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=self._enc(values),
            )
        except (
            self.client.exceptions.ConditionalCheckFailedException,
            # A use's transaction holds the item (AWS; botocore does not retry it): lost to a
            # concurrent writer, as a failed condition is. The caller reads again and retries.
            self.client.exceptions.TransactionConflictException,
        ):
            return False
        endpoint.rev = expected_rev + 1
        return True

    def delete(self, endpoint_id: str, expected_seq: int) -> bool:
        try:
            self.client.delete_item(
                TableName=self.table,
                Key=self._key(endpoint_id),
                ConditionExpression="attribute_exists(pk) AND #s = :s",
                ExpressionAttributeNames={"#s": "seq"},
                ExpressionAttributeValues={":s": {"N": str(expected_seq)}},
            )
        except (
            self.client.exceptions.ConditionalCheckFailedException,
            self.client.exceptions.TransactionConflictException,  # a use being added: count again
        ):
            return False
        return True

    def add_use(self, endpoint_id: str, reminder_id: str, channel_id: str, at: str) -> bool:
        """False only when the endpoint is gone (the transaction's condition failed). A transaction
        cancelled by a conflict (AWS: another transaction on the endpoint item, e.g. a concurrent
        create naming it) is tried again; StoreConflictError when it kept conflicting."""
        for attempt in range(TRANSACTION_ATTEMPTS):
            try:
                self._transact_use(endpoint_id, reminder_id, channel_id, at)
            except self.client.exceptions.TransactionCanceledException as exc:
                codes = cancellation_codes(exc.response)
                if not codes or "ConditionalCheckFailed" in codes:
                    return False
                if not TRANSIENT_CANCELLATIONS.intersection(codes):
                    raise  # our request was refused (validation, size): not the endpoint's absence
                if attempt + 1 < TRANSACTION_ATTEMPTS:
                    self.sleep(TRANSACTION_BACKOFF_SECONDS * 2**attempt * random.uniform(0.5, 1.0))
                continue
            return True
        raise StoreConflictError("the endpoint is being written concurrently; retry")

    def _transact_use(self, endpoint_id: str, reminder_id: str, channel_id: str, at: str) -> None:
        self.client.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": self.table,
                        "Key": self._key(endpoint_id),
                        "UpdateExpression": "ADD #s :one",
                        "ConditionExpression": "attribute_exists(pk)",
                        "ExpressionAttributeNames": {"#s": "seq"},
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": {
                            **self._key(endpoint_id, f"{USE_PREFIX}{reminder_id}#{channel_id}"),
                            "at": {"S": at},
                        },
                    }
                },
            ]
        )

    def uses(self, endpoint_id: str) -> list[tuple[str, str, str]]:
        out: list[tuple[str, str, str]] = []
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :u)",
            "ExpressionAttributeValues": {":pk": {"S": PK_PREFIX + endpoint_id}, ":u": {"S": USE_PREFIX}},
            "ProjectionExpression": "sk, #at",
            "ExpressionAttributeNames": {"#at": "at"},
            "ConsistentRead": True,
        }
        while True:
            resp = self.client.query(**kwargs)
            for item in resp.get("Items", []):
                rid, _, cid = item["sk"]["S"][len(USE_PREFIX) :].partition("#")
                out.append((rid, cid, item.get("at", {}).get("S", "")))
            if "LastEvaluatedKey" not in resp:
                return out
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    def drop_uses(self, endpoint_id: str, uses: Sequence[tuple[str, str]]) -> None:
        for rid, cid in uses:
            self.client.delete_item(
                TableName=self.table, Key=self._key(endpoint_id, f"{USE_PREFIX}{rid}#{cid}")
            )


def _fields(e: Endpoint) -> dict[str, Any]:
    return {name: getattr(e, name) for name in Endpoint.__slots__}


# -- in memory (the same conditions) ----------------------------------------------------------------
class MemoryEndpointStore(LostAnswers):
    """The in-memory twin: items in their stored (sealed) form, the same conditional semantics."""

    def __init__(self, sealer: SecretSealer, stale_writes: int = 0) -> None:
        self.sealer = sealer
        self.items: dict[str, dict[str, Any]] = {}
        #: fault mode (issue 25 item 8): eventually consistent reads see an item as it was up to
        #: ``stale_writes`` writes ago, as DynamoDB may (moto and this twin are otherwise consistent)
        self.stale = StaleImages(stale_writes)
        self.use_rows: dict[str, dict[tuple[str, str], str]] = {}
        self.lock = threading.RLock()
        self.lost_answers: dict[str, int] = {}  # fault mode: operation -> answers still to lose
        #: the deployment signing key's item (its wrapped blob); share it to model several instances
        self.deployment_item: dict[str, bytes] = {}
        self.deployment_key = DeploymentKey(sealer, self._read_deployment_key, self._put_deployment_key)

    def _read_deployment_key(self) -> bytes | None:
        with self.lock:
            return self.deployment_item.get("dk")

    def _put_deployment_key(self, wrapped: bytes) -> bool:
        with self.lock:
            if "dk" in self.deployment_item:
                return False
            self.deployment_item["dk"] = wrapped
            return True

    def derived_key(self, account_id: str, endpoint_id: str, created_at: str) -> SigningKey:
        salt = new_salt()
        secret = self.sealer.derive(self.deployment_key(create=True), account_id, endpoint_id, salt)
        return SigningKey(secret, created_at, salt=salt)

    def put_new(self, endpoint: Endpoint) -> bool:
        with self.lock:
            if endpoint.id in self.items:
                return False
            self.stale.written(endpoint.id, None)
            self.items[endpoint.id] = endpoint_to_item(
                endpoint, self.sealer, _wrapped_of(None, self.sealer, endpoint), self.deployment_key
            )
            return not self._answer_lost("put_new")

    def get(self, endpoint_id: str, consistent: bool = True) -> Endpoint | None:
        with self.lock:
            raw = self.items.get(endpoint_id)
            old = MISSING if consistent else self.stale.eventual(endpoint_id)
            if old is not MISSING:
                raw = old
            return endpoint_from_item(raw, self.sealer, self.deployment_key) if raw else None

    def owner_of(self, endpoint_id: str) -> str | None:
        with self.lock:
            raw = self.items.get(endpoint_id)
            return str(raw["acct"]) if raw else None

    def save(self, endpoint: Endpoint, expected_rev: int) -> bool:
        with self.lock:
            raw = self.items.get(endpoint.id)
            if raw is None or raw["rev"] != expected_rev:
                return False
            self.stale.written(endpoint.id, raw)
            stored = Endpoint(**{**_fields(endpoint), "rev": expected_rev + 1, "seq": raw["seq"]})
            self.items[endpoint.id] = endpoint_to_item(
                stored, self.sealer, _wrapped_of(raw, self.sealer, stored), self.deployment_key
            )
            if self._answer_lost("save"):
                return False
            endpoint.rev = expected_rev + 1
            return True

    def delete(self, endpoint_id: str, expected_seq: int) -> bool:
        with self.lock:
            raw = self.items.get(endpoint_id)
            if raw is None or raw["seq"] != expected_seq:
                return False
            self.stale.written(endpoint_id, raw)
            del self.items[endpoint_id]
            return not self._answer_lost("delete")

    def add_use(self, endpoint_id: str, reminder_id: str, channel_id: str, at: str) -> bool:
        with self.lock:
            raw = self.items.get(endpoint_id)
            if raw is None:
                return False
            self.stale.written(endpoint_id, raw)
            raw["seq"] += 1
            self.use_rows.setdefault(endpoint_id, {})[(reminder_id, channel_id)] = at
            return True

    def uses(self, endpoint_id: str) -> list[tuple[str, str, str]]:
        with self.lock:
            return sorted((r, c, at) for (r, c), at in self.use_rows.get(endpoint_id, {}).items())

    def drop_uses(self, endpoint_id: str, uses: Sequence[tuple[str, str]]) -> None:
        with self.lock:
            rows = self.use_rows.get(endpoint_id, {})
            for u in uses:
                rows.pop(u, None)
