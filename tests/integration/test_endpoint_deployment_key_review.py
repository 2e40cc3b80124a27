"""Issue 24 item 2, review: the deployment signing key under a hostile environment and tenant.

Implicit endpoints' secrets are derived from one wrapped deployment key stored at
``pk=E#~deployment, sk=K``. A derived secret must never silently become another value: when the
key it was derived from is gone or replaced, opening it is refused (never a secret no receiver
holds). A lost answer on the key's conditional put, or two instances racing its creation, leave one
key; no route reaches its item. On moto (DynamoDB, KMS) where the store's behaviour matters, in
memory where only the domain does.
"""

from __future__ import annotations

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
)
from reminders.adapters.envelope import KmsKeyWrapper, LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.domain.errors import ConfigurationError, NotFoundError, ValidationError
from reminders.domain.ports import NullTelemetry
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
