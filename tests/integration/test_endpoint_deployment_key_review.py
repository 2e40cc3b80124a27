"""Issue 24 item 2, review: the deployment signing key under a hostile environment and tenant.

Implicit endpoints' secrets are derived from one wrapped deployment key stored at
``pk=E#~deployment, sk=K``. A derived secret must never silently become another value: when the
key it was derived from is gone or replaced, opening it is refused (never a secret no receiver
holds). A lost answer on the key's conditional put, or two instances racing its creation, leave one
key; no route reaches its item. On moto (DynamoDB, KMS) where the store's behaviour matters, in
memory where only the domain does.
"""

from __future__ import annotations

import base64
import logging
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters.clock import FixedClock, SystemClock
from reminders.adapters.endpoints_store import (
    DEPLOYMENT_KEY_ID,
    SK_DEPLOYMENT_KEY,
    DynamoEndpointStore,
    MemoryEndpointStore,
    endpoint_to_item,
)
from reminders.adapters.envelope import KmsKeyWrapper, LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.domain.endpoints import Endpoint, SigningKey, implicit_endpoint_id, new_secret
from reminders.domain.errors import ConfigurationError, NotFoundError, ValidationError
from reminders.domain.ports import NullTelemetry
from reminders.services import endpoints as endpoints_module
from reminders.services.endpoints import EndpointChange, Endpoints

A, B = "acct-a", "acct-b"
URL = "https://hooks.example/in"
OTHER_URL = "https://other.example/in"


def _memory_service(store: MemoryEndpointStore) -> Endpoints:
    return Endpoints(
        store=store,
        reminders=MemoryReminderStore(),
        clock=FixedClock(SystemClock().now()),
        telemetry=NullTelemetry(),
    )


def _dynamo_service(aws: dict[str, str], client: Any | None = None) -> Endpoints:
    store = DynamoEndpointStore(
        client or boto3.client("dynamodb"),
        aws["TABLE_NAME"],
        SecretSealer(KmsKeyWrapper(boto3.client("kms"), aws["ENDPOINT_KEY_ID"])),
    )
    return Endpoints(store=store, reminders=runtime.store(), clock=SystemClock(), telemetry=NullTelemetry())


def _deployment_item(aws: dict[str, str]) -> dict[str, Any] | None:
    resp = boto3.client("dynamodb").get_item(
        TableName=aws["TABLE_NAME"],
        Key={"pk": {"S": "E#" + DEPLOYMENT_KEY_ID}, "sk": {"S": SK_DEPLOYMENT_KEY}},
        ConsistentRead=True,
    )
    item: dict[str, Any] | None = resp.get("Item")
    return item


def test_derived_secret_is_refused_not_replaced_when_the_deployment_key_is_gone_and_a_send_mints_first() -> (
    None
):
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    made = _memory_service(store).signing_endpoint(A, URL)
    assert made is not None
    restarted = MemoryEndpointStore(SecretSealer(wrapper))  # a new instance after the item was lost
    restarted.items = store.items
    # its first send goes to another (account, origin): a new implicit endpoint, a new deployment key
    assert _memory_service(restarted).signing_endpoint(B, OTHER_URL) is not None
    assert restarted.deployment_item["dk"] != store.deployment_item["dk"]
    # the older endpoint: refused, as when it is opened first — never signed with a secret nobody holds
    with pytest.raises(ConfigurationError):
        found = restarted.get(made.id)
        assert found is not None and found.keys[0].secret != made.keys[0].secret


def test_deployment_key_is_one_when_its_conditional_put_loses_its_answer(aws: dict[str, str]) -> None:
    """botocore retries the put whose answer was lost; the retry fails its own condition."""
    real = boto3.client("dynamodb")

    class LostAnswer:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def put_item(self, **kwargs: Any) -> Any:
            if kwargs.get("Item", {}).get("pk", {}).get("S") == "E#" + DEPLOYMENT_KEY_ID:
                real.put_item(**kwargs)  # landed; its answer lost
            return real.put_item(**kwargs)  # the retry

    first = _dynamo_service(aws, LostAnswer())
    made = first.signing_endpoint(A, URL)
    assert made is not None
    second = _dynamo_service(aws)  # another instance: reads the stored key
    seen = second.store.get(made.id)
    assert seen is not None and seen.keys == made.keys
    item = _deployment_item(aws)
    assert item is not None and bytes(item["dk"]["B"]) == first.store.deployment_key()  # type: ignore[attr-defined]


def test_deployment_key_is_the_first_stored_when_two_instances_race_its_creation(aws: dict[str, str]) -> None:
    first, second = _dynamo_service(aws), _dynamo_service(aws)
    read_of_second = second.store.deployment_key.read  # type: ignore[attr-defined]
    raced: list[bytes] = []

    def read_before_the_other_put() -> bytes | None:
        if not raced:  # both instances found no key; the first instance's put lands first
            raced.append(first.store.deployment_key(create=True))  # type: ignore[attr-defined]
            return None
        return read_of_second()

    second.store.deployment_key.read = read_before_the_other_put  # type: ignore[attr-defined]
    b = second.signing_endpoint(B, URL)
    a = first.signing_endpoint(A, URL)
    assert a is not None and b is not None
    item = _deployment_item(aws)
    assert item is not None and bytes(item["dk"]["B"]) == raced[0]
    assert second.store.deployment_key() == raced[0]  # type: ignore[attr-defined]
    # each instance opens the other's endpoint to the same secret
    assert (first.store.get(b.id) or b).keys == b.keys and (second.store.get(a.id) or a).keys == a.keys


@pytest.mark.parametrize(
    "eid", [DEPLOYMENT_KEY_ID, "E#" + DEPLOYMENT_KEY_ID, "ep_" + "~deployment".ljust(32, "x")]
)
def test_deployment_key_item_is_unreachable_when_an_account_names_it_as_an_endpoint(
    aws: dict[str, str], eid: str
) -> None:
    service = _dynamo_service(aws)
    assert service.signing_endpoint(A, URL) is not None  # the key exists
    before = _deployment_item(aws)
    for call in (
        lambda: service.get(eid),
        lambda: service.change(eid, EndpointChange(description="x")),
        lambda: service.rotate_secret(eid),
        lambda: service.delete(eid),
    ):
        with pytest.raises(NotFoundError):
            call()
    with pytest.raises(ValidationError):
        service.use(eid, A, "r1", "c1")
    # the sender's lookup (its destinations are validated URLs or ``ep_`` ids): never that item
    sent = service.signing_endpoint(A, eid)
    assert sent is None or (sent.id != DEPLOYMENT_KEY_ID and sent.id.startswith("ep_"))
    assert service.rate_of(eid) is None
    assert _deployment_item(aws) == before


class _Recording:
    """Telemetry that keeps every log line and counter, to look for key material in them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.lines.append(f"{name} {value} {dimensions}")

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        self.lines.append(f"{name} {value}")

    def log(self, action: str, **fields: Any) -> None:
        self.lines.append(f"{action} {fields}")


def _legacy_implicit(store: MemoryEndpointStore, account: str = A) -> Endpoint:
    """An implicit endpoint as stored before derivation: one sealed secret, never shown."""
    eid = implicit_endpoint_id(account, URL)
    at = "2026-12-01T00:00:00.000000Z"
    legacy = Endpoint(
        eid, account, "https://hooks.example", at, keys=[SigningKey(new_secret(), at)], implicit=True
    )
    store.items[eid] = endpoint_to_item(legacy, store.sealer, store.sealer.new_data_key(eid))
    return legacy


def test_rotation_keeps_its_shown_secret_when_a_sender_rederives_from_a_stale_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mono = [1000.0]
    monkeypatch.setattr(endpoints_module, "time", SimpleNamespace(monotonic=lambda: mono[0]))
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper), stale_writes=1)
    legacy = _legacy_implicit(store)
    sender, api = _memory_service(store), _memory_service(store)
    assert sender.for_send(A, URL) is not None  # the sender's copy: the legacy endpoint (rev 0)
    rotated, shown = api.rotate_secret(legacy.id, overlap_seconds=3600)  # the account is shown a secret
    # the sender, on its copy (cached, or an eventually consistent read): tries to re-derive, loses
    sent = sender.signing_endpoint(A, URL)
    assert sent is not None
    stored = store.get(legacy.id)
    assert stored is not None and stored.keys == rotated.keys  # nothing lost, nothing replaced
    now = SystemClock().now()
    assert stored.signing_secrets(now)[0] == shown
    mono[0] += 60  # past the sender's lookup cache; the stale image is one write old
    store.stale.written(legacy.id, store.items[legacy.id])  # one more write: the rotation is visible
    again = sender.signing_endpoint(A, URL)
    assert again is not None and shown in again.signing_secrets(now)
    assert legacy.keys[0].secret in again.signing_secrets(now)  # the old one through its overlap only


def test_no_log_carries_key_material_when_implicit_endpoints_are_made_rederived_rotated_and_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    rec = _Recording()
    service = Endpoints(
        store=store, reminders=MemoryReminderStore(), clock=FixedClock(SystemClock().now()), telemetry=rec
    )
    legacy = _legacy_implicit(store, B)
    made = service.signing_endpoint(A, URL)
    rederived = service.signing_endpoint(B, URL)
    assert made is not None and rederived is not None
    _, shown = service.rotate_secret(made.id)
    errors: list[str] = []
    other = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))  # a KMS key that is not ours
    other.items, other.deployment_item = store.items, store.deployment_item
    try:
        other.get(made.id)
    except ConfigurationError as exc:
        errors.append(str(exc))
    assert errors
    root = store.sealer._deployment[store.deployment_item["dk"]]
    material = [shown, legacy.keys[0].secret, *(k.secret for k in (*made.keys, *rederived.keys))]
    material = [m.removeprefix("whsec_") for m in material] + [
        base64.b64encode(root).decode(),
        root.hex(),
        base64.b64encode(store.deployment_item["dk"]).decode(),
    ]
    text = "\n".join([*rec.lines, caplog.text, *errors])
    assert rec.lines and not [m for m in material if m in text]


def test_rederived_key_is_the_one_sent_when_its_conditional_write_loses_its_answer() -> None:
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    legacy = _legacy_implicit(store)
    rec = _Recording()
    service = Endpoints(
        store=store, reminders=MemoryReminderStore(), clock=FixedClock(SystemClock().now()), telemetry=rec
    )
    store.lose_next_answer("save")
    sent = service.signing_endpoint(A, URL)
    stored = store.get(legacy.id)
    assert sent is not None and stored is not None and sent.keys == stored.keys
    assert sent.keys[0].salt is not None and any("own_write_recognised" in line for line in rec.lines)


def test_one_rederived_key_is_stored_when_two_instances_rederive_at_once() -> None:
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    legacy = _legacy_implicit(store)
    first, second = _memory_service(store), _memory_service(store)
    assert first.for_send(A, URL) is not None  # the first instance's copy: the legacy endpoint
    won = second.signing_endpoint(A, URL)  # the second re-derives first
    lost = first.signing_endpoint(A, URL)  # the first, on its copy: its write loses, it sends as read
    stored = store.get(legacy.id)
    assert won is not None and lost is not None and stored is not None
    assert stored.keys == won.keys and len(stored.keys) == 1 and stored.keys[0].salt is not None
    # the loser signed with the legacy secret, which no receiver was ever shown; nothing else changed
    assert lost.keys == legacy.keys
