"""Issue 25 item 8: the send path's endpoint and health reads are eventually consistent (half the read
units) and may answer an item as it was before its latest writes — on AWS, not on moto nor the
in-memory twins, so the twins gain a stale-read mode (adapters/stale_reads.py) and the send path is
tested under it. "Not found" or "disabled" on such a read is never terminal: it is read again,
consistently, before a delivery is dead-lettered ``endpoint_not_found`` or ``endpoint_disabled``.
"""

from __future__ import annotations

import random

from reminders.adapters.clock import SystemClock
from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.endpoints_store import MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.adapters.stale_reads import StaleImages
from reminders.adapters.webhook import WebhookSender
from reminders.domain.health import EndpointState
from reminders.domain.models import ChannelType
from reminders.domain.ports import NullTelemetry
from reminders.domain.states import DeliveryState
from reminders.services.endpoints import EndpointChange, Endpoints, NewEndpoint
from reminders.services.intents import ChannelSpec
from reminders_ops.local.receiver import WebhookReceiver

from .fakes import World

A = "acct-a"
LOCAL = DestinationPolicy(allowed_networks=["127.0.0.0/8"], allow_http=True)


def _endpoints(w: World, stale_writes: int) -> Endpoints:
    return Endpoints(
        store=MemoryEndpointStore(SecretSealer(LocalKeyWrapper()), stale_writes=stale_writes),
        reminders=w.store,
        clock=w.clock,
        telemetry=NullTelemetry(),
    )


def _wire(w: World, endpoints: Endpoints) -> None:
    """The deliverer with the real webhook sender, both asking the endpoint service (as runtime.py)."""
    sender = WebhookSender(
        policy=LOCAL, secret=lambda: DEV_WEBHOOK_SECRET, clock=SystemClock(), endpoints=endpoints.for_send
    )
    w._workers["w1"] = w.world.deliverer(
        senders={"webhook": sender, "email": w.sender},
        worker="w1",
        rng=random.Random(3),
        endpoints=endpoints.for_send,
    )


def _drain(w: World, rounds: int = 8) -> None:
    for _ in range(rounds):
        w.poll()
        w.clock.advance(30)


def test_stale_mode_serves_an_item_as_it_was_up_to_n_writes_ago() -> None:
    store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()), stale_writes=1)
    w = World()
    endpoints = Endpoints(store=store, reminders=w.store, clock=w.clock, telemetry=NullTelemetry())
    ep, _ = endpoints.create(NewEndpoint(A, "https://a.example/h"))
    assert store.get(ep.id, consistent=False) is None  # just created: read as absent
    assert store.get(ep.id) is not None  # a consistent read sees it
    endpoints.change(ep.id, EndpointChange(enabled=False))
    endpoints.change(ep.id, EndpointChange(enabled=True))
    old = store.get(ep.id, consistent=False)
    assert old is not None and not old.enabled  # one write ago: disabled
    store.stale.settle()
    now = store.get(ep.id, consistent=False)
    assert now is not None and now.enabled


def test_just_created_endpoint_read_stale_as_absent_does_not_dead_letter() -> None:
    w = World()
    endpoints = _endpoints(w, stale_writes=5)
    _wire(w, endpoints)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        ep, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks"))
        receiver.use_secret(secret)
        assert endpoints.store.get(ep.id, consistent=False) is None  # what the sender's read sees
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
        _drain(w)
        d = w.delivery(row.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)
        assert receiver.state.accepted[d.key] == 1 and receiver.signed_by(secret, d.key)


def test_just_reenabled_endpoint_read_stale_as_disabled_does_not_dead_letter() -> None:
    w = World()
    endpoints = _endpoints(w, stale_writes=1)
    _wire(w, endpoints)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        ep, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks"))
        receiver.use_secret(secret)
        endpoints.change(ep.id, EndpointChange(enabled=False))
        endpoints.change(ep.id, EndpointChange(enabled=True))
        stale = endpoints.store.get(ep.id, consistent=False)
        assert stale is not None and not stale.enabled  # what the sender's read sees
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
        _drain(w)
        d = w.delivery(row.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)
        assert receiver.state.accepted[d.key] == 1


def test_just_reenabled_endpoint_health_read_stale_as_disabled_does_not_dead_letter() -> None:
    w = World()
    w.health.stale = StaleImages(1)
    endpoints = _endpoints(w, stale_writes=0)
    _wire(w, endpoints)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        ep, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks"))
        receiver.use_secret(secret)
        operator = w.world.health_guard()
        now = w.clock.now().timestamp()
        operator.set_state(ep.id, A, EndpointState.DISABLED, now)
        operator.set_state(ep.id, A, EndpointState.ACTIVE, now)
        stale = w.health.get(ep.id, consistent=False)
        assert stale is not None and stale.state is EndpointState.DISABLED  # the consumer's read
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
        _drain(w)
        d = w.delivery(row.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)
        assert receiver.state.accepted[d.key] == 1


def test_endpoint_gone_is_still_dead_lettered_under_stale_reads() -> None:
    """The re-read changes no answer a consistent read gives: an endpoint that is gone (deleted
    under a row that still names it) ends ``invalid_destination`` (endpoint_not_found) as before."""
    w = World()
    endpoints = _endpoints(w, stale_writes=0)
    _wire(w, endpoints)
    ep, _ = endpoints.create(NewEndpoint(A, "http://127.0.0.1:9/hooks"))
    row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
    endpoints.store.delete(ep.id, endpoints.store.get(ep.id).seq)  # type: ignore[union-attr]
    endpoints.store.stale = StaleImages(3)
    _drain(w)
    d = w.delivery(row.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "invalid_destination"


def test_cached_absence_from_a_stale_read_never_dead_letters_a_delivery() -> None:
    """The limiter's lookup read the just-created endpoint stale as absent and the instance remembers
    that for its cache period: the sender does not take that memory for "not found"."""
    w = World()
    endpoints = _endpoints(w, stale_writes=5)
    _wire(w, endpoints)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        ep, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks", rate_per_second=5))
        receiver.use_secret(secret)
        assert endpoints.rate_of(ep.id) is None  # stale: "no such endpoint", remembered
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
        _drain(w)
        d = w.delivery(row.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)


def test_cached_disabled_health_view_never_dead_letters_after_an_enable() -> None:
    """Enable, then redrive at once (the documented flow): a consumer whose view still holds
    ``disabled`` from before the enable reads the item again before dead-lettering."""
    w = World()
    endpoints = _endpoints(w, stale_writes=0)
    _wire(w, endpoints)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        ep, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks"))
        receiver.use_secret(secret)
        now = w.clock.now().timestamp()
        operator = w.world.health_guard()
        operator.set_state(ep.id, A, EndpointState.DISABLED, now)
        consumer = w._workers["w1"].health
        assert consumer is not None and consumer.view(ep.id, A, now).state is EndpointState.DISABLED  # type: ignore[union-attr]
        operator.set_state(ep.id, A, EndpointState.ACTIVE, now)
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, ep.id),))
        w.poll()  # within the consumer's cache period: no clock moves
        d = w.delivery(row.id)
        assert d.state is DeliveryState.DELIVERED, (d.state, d.dead_letter_reason)
