"""Endpoints in the in-memory world: rotation, envelope sealing, the delete-in-use count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from reminders.adapters.clock import FixedClock
from reminders.adapters.endpoints_store import MemoryEndpointStore, endpoint_from_item
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.domain.endpoints import (
    Endpoint,
    SigningKey,
    implicit_endpoint_id,
    new_secret,
    origin_of,
    rotate,
)
from reminders.domain.errors import ConfigurationError
from reminders.domain.ports import NullTelemetry
from reminders.services.endpoints import EndpointInUseError, Endpoints, NewEndpoint

T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _endpoint() -> Endpoint:
    return Endpoint(
        "ep_" + "a" * 32,
        "acct-1",
        "https://h.example/x",
        "2026-12-01T12:00:00.000000Z",
        keys=[SigningKey(new_secret(), "2026-12-01T12:00:00.000000Z")],
    )


def test_rotation_signs_with_old_and_new_until_the_expiry_then_new_only() -> None:
    e = _endpoint()
    old = e.keys[0].secret
    rotated, new = rotate(e, T0, 3600)
    assert rotated.signing_secrets(T0) == [new, old]
    assert rotated.signing_secrets(T0 + timedelta(seconds=3601)) == [new]
    again, newest = rotate(rotated, T0 + timedelta(seconds=10), 60)
    assert again.signing_secrets(T0 + timedelta(seconds=11))[0] == newest and len(again.keys) == 3
    later, _ = rotate(again, T0 + timedelta(hours=2), 60)  # expired keys are dropped
    assert len(later.keys) == 2


def test_implicit_endpoint_is_one_per_account_and_origin() -> None:
    a = implicit_endpoint_id("acct-1", "https://H.example:443/a?x=1")
    assert a == implicit_endpoint_id("acct-1", "https://h.example/b")
    assert a != implicit_endpoint_id("acct-2", "https://h.example/b")
    assert a != implicit_endpoint_id("acct-1", "https://h.example:8443/b")
    assert origin_of("http://h.example:80/x") == "http://h.example"


def test_sealed_secret_does_not_open_under_another_endpoint_id() -> None:
    sealer = SecretSealer(LocalKeyWrapper())
    store = MemoryEndpointStore(sealer)
    e = _endpoint()
    assert store.put_new(e)
    item = dict(store.items[e.id])
    assert e.keys[0].secret.encode() not in repr(item).encode()
    assert endpoint_from_item(item, sealer).keys == e.keys
    moved = {**item, "pk": "E#ep_" + "b" * 32}
    with pytest.raises(ConfigurationError):
        endpoint_from_item(moved, sealer)


def test_one_data_key_per_endpoint_unwrapped_once_per_instance() -> None:
    wrapper = LocalKeyWrapper()
    store = MemoryEndpointStore(SecretSealer(wrapper))
    e = _endpoint()
    store.put_new(e)
    rotated, _ = rotate(store.get(e.id) or e, T0, 60)
    assert store.save(rotated, 0)
    for _ in range(5):
        store.get(e.id)
    assert wrapper.generated == 1 and wrapper.unwrapped == 0  # cached since it was generated


def test_delete_counts_open_uses_and_drops_abandoned_ones() -> None:
    clock = FixedClock(T0)
    service = Endpoints(
        store=MemoryEndpointStore(SecretSealer(LocalKeyWrapper())),
        reminders=MemoryReminderStore(),
        clock=clock,
        telemetry=NullTelemetry(),
    )
    e, _ = service.create(NewEndpoint("acct-1", "https://h.example/x"))
    service.use(e.id, "acct-1", "rem_" + "0" * 32, "webhook-0")  # its reminder never got written
    with pytest.raises(EndpointInUseError) as err:
        service.delete(e.id)
    assert err.value.count == 1
    clock.advance(360)
    service.delete(e.id)


def test_email_rate_is_the_ses_send_quota_read_once_unless_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3
    from botocore.stub import Stubber
    from reminders import runtime

    for k, v in {"TABLE_NAME": "t", "EMAIL_QUEUE_URL": "q", "WEBHOOK_QUEUE_URL": "q"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("EMAIL_DLQ_URL", "q")
    monkeypatch.setenv("WEBHOOK_DLQ_URL", "q")
    monkeypatch.delenv("EMAIL_RATE_PER_SECOND", raising=False)
    runtime.reset()
    client = boto3.client("sesv2", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_response("get_account", {"SendQuota": {"Max24HourSend": 50000.0, "MaxSendRate": 14.0}})
    monkeypatch.setattr(runtime, "_client", lambda service: client)
    with stub:
        assert runtime.email_rate() == 14.0
        assert runtime.email_rate() == 14.0  # once per cold start
    monkeypatch.setenv("EMAIL_RATE_PER_SECOND", "3")
    runtime.settings.cache_clear()
    runtime.email_rate.cache_clear()
    assert runtime.email_rate() == 3.0
    runtime.settings.cache_clear()
    runtime.email_rate.cache_clear()
