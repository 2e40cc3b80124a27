"""Issue 32 item 1: the consumer's per-instance endpoint cache (``LOOKUP_CACHE_SECONDS``) against a
hostile environment — another instance (the API's) disables, deletes or rotates the endpoint while a
consumer holds its copy, or another account names its id. The promise: a copy is trusted at most
``LOOKUP_CACHE_SECONDS``; a terminal answer (disabled, not found) is never taken from a cached or
eventually consistent copy; a copy never serves another account."""

from __future__ import annotations

from typing import Any

import pytest
from reminders.adapters.endpoints_store import MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.domain.ports import NullTelemetry
from reminders.services import endpoints as endpoints_module
from reminders.services.endpoints import LOOKUP_CACHE_SECONDS, EndpointChange, Endpoints, NewEndpoint

from .fakes import World

A, B = "acct-a", "acct-b"
URL = "https://a.example/hooks"


@pytest.fixture
def mono(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(endpoints_module.time, "monotonic", lambda: now[0])
    return now


def _instances() -> tuple[Endpoints, Endpoints]:
    """(the API's instance, a consumer's instance) on one store."""
    w = World()
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))

    def make() -> Endpoints:
        return Endpoints(store=store, reminders=w.store, clock=w.clock, telemetry=NullTelemetry())

    return make(), make()


def test_a_disabled_endpoint_stops_sending_within_the_cache_period_when_a_consumer_cached_it(
    mono: list[float],
) -> None:
    api, consumer = _instances()
    ep, _ = api.create(NewEndpoint(A, URL))
    assert consumer.for_send(A, ep.id) is not None  # the consumer's copy: enabled
    api.change(ep.id, EndpointChange(enabled=False))
    mono[0] += LOOKUP_CACHE_SECONDS + 0.001
    found = consumer.for_send(A, ep.id)
    assert found is not None and not found.enabled  # read again: the sender refuses a disabled one


def test_a_deleted_endpoint_stops_sending_within_the_cache_period_when_a_consumer_cached_it(
    mono: list[float],
) -> None:
    api, consumer = _instances()
    ep, _ = api.create(NewEndpoint(A, URL))
    assert consumer.for_send(A, ep.id) is not None
    api.delete(ep.id)
    mono[0] += LOOKUP_CACHE_SECONDS + 0.001
    assert consumer.for_send(A, ep.id) is None


def test_a_rotated_secret_signs_within_the_cache_period_when_a_consumer_cached_the_old_copy(
    mono: list[float],
) -> None:
    api, consumer = _instances()
    ep, _ = api.create(NewEndpoint(A, URL))
    assert consumer.for_send(A, ep.id) is not None
    _, second = api.rotate_secret(ep.id)
    mono[0] += LOOKUP_CACHE_SECONDS + 0.001
    found: Any = consumer.for_send(A, ep.id)
    assert found is not None
    assert second in found.signing_secrets(api.clock.now())  # the new key signs after the period


def test_another_account_never_gets_a_cached_endpoint_when_it_names_its_id(mono: list[float]) -> None:
    api, consumer = _instances()
    ep, _ = api.create(NewEndpoint(A, URL))
    assert consumer.for_send(A, ep.id) is not None  # A's copy in the consumer's cache
    assert consumer.for_send(B, ep.id) is None
    mono[0] += LOOKUP_CACHE_SECONDS / 2
    assert consumer.for_send(B, ep.id) is None and consumer.for_send(A, ep.id) is not None
