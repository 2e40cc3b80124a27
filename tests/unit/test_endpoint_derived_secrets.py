"""Issue 24 item 2: an implicit endpoint's secret is derived (HKDF-SHA256) from one sealed deployment
signing key, the account, the endpoint and a stored random salt — never stored, never computable for
another account, rotated by a new salt with the old derivation kept for the overlap. Registered
endpoints keep their sealed secret; items written before (an implicit endpoint's sealed secret) still
open. In-memory world; the KMS call counts on moto are in tests/integration/test_endpoint_kms_calls.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from reminders.adapters.clock import FixedClock
from reminders.adapters.endpoints_store import MemoryEndpointStore, endpoint_to_item
from reminders.adapters.envelope import DEPLOYMENT_KEY_CONTEXT, LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.domain.endpoints import (
    SECRET_PREFIX,
    Endpoint,
    SigningKey,
    implicit_endpoint_id,
    is_endpoint_id,
    new_secret,
)
from reminders.domain.errors import ConfigurationError
from reminders.domain.ports import NullTelemetry
from reminders.services.endpoints import Endpoints, NewEndpoint

T0 = datetime(2026, 12, 2, 6, tzinfo=UTC)
A, B = "acct-a", "acct-b"
URL = "https://hooks.example/in"


def _service(store: MemoryEndpointStore, clock: FixedClock | None = None) -> Endpoints:
    return Endpoints(
        store=store, reminders=MemoryReminderStore(), clock=clock or FixedClock(T0), telemetry=NullTelemetry()
    )


def test_implicit_endpoint_stores_a_salt_and_no_secret_nor_data_key_when_made_at_a_send() -> None:
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    made = _service(store).signing_endpoint(A, URL)
    assert made is not None and made.implicit and made.keys[0].salt is not None
    secret = made.keys[0].secret
    assert secret.startswith(SECRET_PREFIX)
    item = store.items[made.id]
    stored = repr(item) + repr(store.deployment_item)
    assert secret not in stored and secret[len(SECRET_PREFIX) :] not in stored
    assert "dk" not in item and [set(k) for k in item["ks"]] == [{"g", "d", "at"}]
    assert wrapper.generated == 1  # the deployment key, once; no data key for the endpoint


def test_derived_secret_is_never_another_accounts_when_salt_and_endpoint_are_the_same() -> None:
    sealer = SecretSealer(LocalKeyWrapper())
    root = sealer.new_deployment_key()
    eid, salt = implicit_endpoint_id(A, URL), "00" * 16
    mine = sealer.derive(root, A, eid, salt)
    assert mine == sealer.derive(root, A, eid, salt)  # deterministic: every instance signs alike
    assert mine != sealer.derive(root, B, eid, salt)  # the account is in the info
    assert mine != sealer.derive(root, A, implicit_endpoint_id(B, URL), salt)
    assert mine != sealer.derive(root, A, eid, "01" + "00" * 15)  # the salt is the generation
    # length-prefixed info: moving a character from the account into the endpoint id changes it
    assert sealer.derive(root, "ab", "c", salt) != sealer.derive(root, "a", "bc", salt)
    other = SecretSealer(LocalKeyWrapper())  # another deployment's key
    assert mine != other.derive(other.new_deployment_key(), A, eid, salt)


def test_implicit_endpoints_of_two_accounts_for_one_origin_sign_with_different_secrets() -> None:
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    service = _service(store)
    a, b = service.signing_endpoint(A, URL), service.signing_endpoint(B, URL)
    assert a is not None and b is not None and a.id != b.id
    assert set(a.signing_secrets(T0)).isdisjoint(b.signing_secrets(T0))


def test_two_instances_derive_the_same_secret_and_unwrap_the_deployment_key_once_each() -> None:
    wrapper = LocalKeyWrapper()
    first = MemoryEndpointStore(SecretSealer(wrapper))
    second = MemoryEndpointStore(SecretSealer(wrapper))  # another instance: same table, same KMS key
    second.items, second.deployment_item = first.items, first.deployment_item
    made = _service(first).signing_endpoint(A, URL)
    assert made is not None
    for _ in range(5):
        seen = second.get(made.id, consistent=False)
        assert seen is not None and seen.keys == made.keys
    assert (wrapper.generated, wrapper.unwrapped) == (1, 1)


def test_deployment_key_made_by_racing_instances_is_the_one_stored_first() -> None:
    wrapper = LocalKeyWrapper()
    first = MemoryEndpointStore(SecretSealer(wrapper))
    second = MemoryEndpointStore(SecretSealer(wrapper))
    second.deployment_item = first.deployment_item
    winner = first.sealer.new_deployment_key()
    original = second.deployment_key.read
    calls = []

    def read_then_lose_the_race() -> bytes | None:
        calls.append(1)
        if len(calls) == 1:
            first.deployment_item["dk"] = winner  # the other instance's conditional put lands first
            return None
        return original()

    second.deployment_key.read = read_then_lose_the_race
    assert second.deployment_key(create=True) == winner and first.deployment_item["dk"] == winner


def test_rotating_an_implicit_endpoint_draws_a_new_salt_and_keeps_the_old_secret_for_the_overlap() -> None:
    clock = FixedClock(T0)
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    service = _service(store, clock)
    made = service.signing_endpoint(A, URL)
    assert made is not None
    old = made.keys[0]
    rotated, shown = service.rotate_secret(made.id, overlap_seconds=3600)
    assert (
        rotated.implicit and rotated.keys[0].secret == shown and rotated.keys[0].salt not in (None, old.salt)
    )
    stored = store.get(made.id)
    assert stored is not None and stored.signing_secrets(clock.now()) == [shown, old.secret]
    assert stored.signing_secrets(clock.now() + timedelta(seconds=3601)) == [shown]
    assert "dk" not in store.items[made.id]  # still no data key: both keys derived


def test_registering_the_origin_of_an_implicit_endpoint_seals_the_shown_secret_beside_the_derived_one() -> (
    None
):
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    service = _service(store)
    made = service.signing_endpoint(A, URL)
    assert made is not None
    adopted, shown = service.create(NewEndpoint(A, URL, bare_urls=True))
    assert adopted.id == made.id and not adopted.implicit
    item = store.items[made.id]
    assert "dk" in item and [sorted(k) for k in item["ks"]] == [["at", "s"], ["at", "d", "g", "x"]]
    again = store.get(made.id)
    assert again is not None and again.signing_secrets(T0) == [shown, made.keys[0].secret]


def test_registered_endpoint_keeps_its_sealed_secret() -> None:
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    made, shown = _service(store).create(NewEndpoint(A, URL))
    item = store.items[made.id]
    assert "dk" in item and [sorted(k) for k in item["ks"]] == [["at", "s"]] and made.keys[0].salt is None
    assert store.deployment_item == {} and wrapper.generated == 1  # its data key; no deployment key
    found = store.get(made.id)
    assert found is not None and found.keys[0].secret == shown


def _legacy_implicit(store: MemoryEndpointStore) -> Endpoint:
    """An implicit endpoint as stored before derivation: its one secret sealed under its data key."""
    eid = implicit_endpoint_id(A, URL)
    at = "2026-12-01T00:00:00.000000Z"
    legacy = Endpoint(eid, A, "https://hooks.example", at, keys=[SigningKey(new_secret(), at)], implicit=True)
    store.items[eid] = endpoint_to_item(legacy, store.sealer, store.sealer.new_data_key(eid))
    return legacy


def test_implicit_endpoint_stored_sealed_and_never_shown_is_rederived_at_its_next_send() -> None:
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    legacy = _legacy_implicit(store)
    found = _service(store).signing_endpoint(A, URL)
    assert found is not None and found.id == legacy.id and found.keys[0].salt is not None
    assert found.signing_secrets(T0) == [found.keys[0].secret] != legacy.signing_secrets(T0)
    assert [sorted(k) for k in store.items[legacy.id]["ks"]] == [["at", "d", "g"]]
    later = MemoryEndpointStore(SecretSealer(wrapper))  # another instance: opens it with no data key
    later.items, later.deployment_item = store.items, store.deployment_item
    unwrapped = wrapper.unwrapped
    again = _service(later).signing_endpoint(A, URL)
    assert again is not None and again.keys == found.keys and wrapper.unwrapped == unwrapped + 1  # the key


def test_implicit_endpoint_stored_sealed_whose_secret_was_shown_keeps_it_until_it_expires() -> None:
    clock = FixedClock(T0)
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    legacy = _legacy_implicit(store)
    shown_before = SigningKey(new_secret(), "2026-12-01T06:00:00.000000Z")  # a rotate-secret of before
    expiring = SigningKey(legacy.keys[0].secret, legacy.created_at, "2026-12-03T00:00:00.000000Z")
    legacy.keys = [shown_before, expiring]
    store.items[legacy.id] = endpoint_to_item(legacy, store.sealer, store.items[legacy.id]["dk"])
    service = _service(store, clock)
    found = service.signing_endpoint(A, URL)
    assert found is not None and found.signing_secrets(T0) == [shown_before.secret, legacy.keys[1].secret]
    rotated, shown = service.rotate_secret(legacy.id, overlap_seconds=60)  # its next key is derived
    assert [k.salt is None for k in rotated.keys] == [False, True, True]
    again = store.get(legacy.id)
    assert again is not None and again.signing_secrets(T0)[0] == shown
    assert set(again.signing_secrets(T0)) == {shown, shown_before.secret, legacy.keys[1].secret}


def test_derived_secret_is_refused_when_the_deployment_key_does_not_open() -> None:
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    made = _service(store).signing_endpoint(A, URL)
    assert made is not None
    other_instance = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))  # a KMS key that is not ours
    other_instance.items, other_instance.deployment_item = store.items, store.deployment_item
    with pytest.raises(ConfigurationError, match="deployment signing key unavailable"):
        other_instance.get(made.id)


def test_deployment_key_context_is_no_endpoint_id() -> None:
    assert not is_endpoint_id(DEPLOYMENT_KEY_CONTEXT)


def test_derived_secret_is_refused_not_replaced_when_the_deployment_key_item_is_gone() -> None:
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    made = _service(store).signing_endpoint(A, URL)
    assert made is not None
    restarted = MemoryEndpointStore(SecretSealer(wrapper))  # a new instance after the item was lost
    restarted.items = store.items
    with pytest.raises(ConfigurationError, match="deployment signing key missing"):
        restarted.get(made.id)
    assert restarted.deployment_item == {} and wrapper.generated == 1  # no other key made meanwhile
