"""Issue 24 item 1: every endpoint reference is (account, endpoint). One account (B) naming another
account's (A's) ``ep_…`` — in a correction, or in a row stored before corrections were checked —
never makes the service sign B's content with A's secret, count B's failures in A's endpoint
health, send A's endpoint events to B, or refuse A's own deliveries and receipts.

Service level, on the in-memory world; the API end to end is in tests/integration/test_tenancy_api.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from reminders.adapters.clock import SystemClock
from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.endpoints_store import MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.receipts import EndpointReceiverSecrets
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.adapters.webhook import WebhookSender
from reminders.domain.errors import ValidationError
from reminders.domain.health import EndpointState
from reminders.domain.models import ChannelType, Reminder
from reminders.domain.ports import NullTelemetry, Rendered
from reminders.domain.retry import OutcomeClass
from reminders.domain.states import DeliveryState
from reminders.services.endpoints import Endpoints, NewEndpoint
from reminders.services.intents import ChannelSpec
from reminders_ops.local.receiver import WebhookReceiver

from .fakes import WEBHOOK_URL, World

A, B = "acct-a", "acct-b"
A_URL = "https://a.example/hooks"
MISSING = "ep_" + "0" * 32
LOCAL = DestinationPolicy(allowed_networks=["127.0.0.0/8"], allow_http=True)


def _endpoints(w: World, **wiring: Any) -> Endpoints:
    return Endpoints(
        store=MemoryEndpointStore(SecretSealer(LocalKeyWrapper())),
        reminders=w.store,
        clock=w.clock,
        telemetry=NullTelemetry(),
        **wiring,
    )


def _foreign_row(w: World, endpoint_id: str, key: str = "b:1") -> Reminder:
    """B's reminder naming A's endpoint, as a row written before create and correction checked it
    (the service's create trusts its caller: the API runs the ownership check first)."""
    return w.create(key, account_id=B, channels=(ChannelSpec(ChannelType.WEBHOOK, endpoint_id),))


def _drain(w: World, rounds: int = 40) -> None:
    for _ in range(rounds):
        w.poll()
        w.clock.advance(30)


def test_correction_naming_another_accounts_endpoint_is_refused_like_a_missing_one() -> None:
    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    reminders = w.world.reminders(use_endpoint=endpoints.use)
    mine = w.create("b:1", account_id=B, due_in=3600)
    refused: list[ValidationError] = []
    for target in (theirs.id, MISSING):
        with pytest.raises(ValidationError) as err:
            reminders.correct(mine.id, [_destination(target)])
        refused.append(err.value)
    foreign, missing = refused
    assert (foreign.field, foreign.message) == (missing.field, missing.message)
    assert foreign.message == "no such endpoint for this account"  # as POST /reminders answers
    stored = w.get(mine.id)
    assert stored.version == mine.version and stored.deliveries["webhook-0"].destination == WEBHOOK_URL
    assert endpoints.store.uses(theirs.id) == []  # nothing recorded against A's endpoint


def test_correction_naming_the_accounts_own_endpoint_is_accepted_and_counted_by_a_delete() -> None:
    w = World()
    endpoints = _endpoints(w)
    own, _ = endpoints.create(NewEndpoint(B, A_URL))
    reminders = w.world.reminders(use_endpoint=endpoints.use)
    mine = w.create("b:1", account_id=B, due_in=3600)
    corrected = reminders.correct(mine.id, [_destination(own.id)])
    assert corrected.deliveries["webhook-0"].destination == own.id
    assert endpoints.open_uses(own.id) == 1  # a delete of the endpoint is refused while it is named


def _destination(target: str) -> Any:
    from reminders.domain.corrections import Destination

    return Destination("webhook-0", ChannelType.WEBHOOK, target)


def test_foreign_endpoint_never_signs_or_receives_another_accounts_content_when_cached() -> None:
    w = World()
    endpoints = _endpoints(w)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        theirs, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks", rate_per_second=5))
        receiver.use_secret(secret)
        # A's own lookups fill the instance's cache: the sender's, and the rate limiter's.
        assert endpoints.for_send(A, theirs.id) is not None
        assert endpoints.rate_of(theirs.id) == 5
        assert endpoints.for_send(B, theirs.id) is None
        row = _foreign_row(w, theirs.id)
        sender = WebhookSender(
            policy=LOCAL, secret=lambda: DEV_WEBHOOK_SECRET, clock=SystemClock(), endpoints=endpoints.for_send
        )
        d = row.deliveries["webhook-0"]
        result = sender.send(d, row, Rendered("", '{"secret": "b-content"}', "fp"))
        assert result.outcome is OutcomeClass.INVALID_DESTINATION and result.detail == "endpoint_not_found"
        assert receiver.state.posts[d.key] == 0 and not receiver.state.bodies


def test_rate_lookup_never_lets_another_account_send_through_an_endpoint() -> None:
    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL, rate_per_second=5))
    assert endpoints.rate_of(theirs.id) == 5  # the limiter's lookup, by endpoint id alone
    assert endpoints.for_send(B, theirs.id) is None
    assert endpoints.for_send(A, theirs.id) is not None


def test_negative_endpoint_lookup_by_one_account_never_dead_letters_another_accounts_delivery() -> None:
    w = World()
    endpoints = _endpoints(w)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        theirs, secret = endpoints.create(NewEndpoint(A, receiver.url + "/hooks"))
        receiver.use_secret(secret)
        assert endpoints.for_send(B, theirs.id) is None  # B's lookup: "no such endpoint" (for B)
        row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, theirs.id),))
        sender = WebhookSender(
            policy=LOCAL, secret=lambda: DEV_WEBHOOK_SECRET, clock=SystemClock(), endpoints=endpoints.for_send
        )
        d = row.deliveries["webhook-0"]
        result = sender.send(d, row, Rendered("", '{"a": 1}', "fp"))
        assert result.outcome is OutcomeClass.ACCEPTED, result
        assert receiver.state.accepted[d.key] == 1 and receiver.signed_by(secret, d.key)


def test_negative_endpoint_lookup_by_one_account_never_refuses_another_accounts_receipts() -> None:
    w = World()
    endpoints = _endpoints(w)
    theirs, secret = endpoints.create(NewEndpoint(A, A_URL))
    row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, theirs.id),))
    assert endpoints.for_send(B, theirs.id) is None
    secrets = EndpointReceiverSecrets(endpoints.for_send, w.clock.now)
    assert secrets.secrets_for(A, row.deliveries["webhook-0"].destination) == [secret]


def test_foreign_failures_never_count_in_another_accounts_endpoint_health() -> None:
    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    now = w.clock.now().timestamp()
    w.health.record(theirs.id, A, now, 3, 0)  # A's own traffic: answered
    before = w.health.items[theirs.id]
    for i in range(30):
        row = _foreign_row(w, theirs.id, key=f"b:{i}")
        w.sender.script(row.deliveries["webhook-0"].key, ["500"] * 20)
    _drain(w)
    after = w.health.items[theirs.id]
    assert after.account_id == A
    assert after.state is EndpointState.ACTIVE and not w.health.transitions
    assert after.buckets == before.buckets and after.failed_in_row == 0


def test_foreign_deliveries_never_create_or_own_another_accounts_endpoint_health() -> None:
    w = World()
    endpoints = _endpoints(w, health=w.health)  # the owner is fixed when the endpoint is created
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    assert w.health.items[theirs.id].account_id == A
    for i in range(30):
        row = _foreign_row(w, theirs.id, key=f"b:{i}")
        w.sender.script(row.deliveries["webhook-0"].key, ["500"] * 20)
    _drain(w)
    h = w.health.items[theirs.id]
    # endpoint.held about A's endpoint would go to the item's owner's event endpoint: never B
    assert h.account_id == A and h.state is EndpointState.ACTIVE and not w.health.transitions
    assert not any(f for _, f in h.buckets.values())


def test_foreign_probe_never_takes_another_accounts_held_endpoint_lease() -> None:
    w = World()
    endpoints = _endpoints(w, health=w.health)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    now = w.clock.now().timestamp()
    h = w.health.items[theirs.id]
    held = w.health.transition(h, EndpointState.HELD, _why(), now, A)
    assert held is not None
    w.clock.advance(3600)  # a probe is long due
    row = _foreign_row(w, theirs.id)
    w.sender.script(row.deliveries["webhook-0"].key, ["ok"])
    _drain(w, rounds=3)
    after = w.health.items[theirs.id]
    assert after.state is EndpointState.HELD and after.probe_until is None and after.tv == held.tv
    assert w.sender.sends(row.deliveries["webhook-0"].key) == 1  # B's own send, ungoverned by A's hold
    assert w.delivery(row.id).state is DeliveryState.DELIVERED


def _why() -> Any:
    from reminders.domain.health import HealthWhy

    return HealthWhy.OPERATOR


def test_endpoint_event_about_one_accounts_endpoint_never_goes_to_another_account() -> None:
    from reminders.adapters.event_endpoints_store import MemoryEventEndpointStore
    from reminders.domain.opevents import ENDPOINT_HELD, OpEvent
    from reminders.services.opevents import OpEvents

    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    mine, _ = endpoints.create(NewEndpoint(B, "https://b.example/events"))
    registrations = MemoryEventEndpointStore()
    ops = OpEvents(
        registrations=registrations,
        endpoints=endpoints,
        reminders=w.reminders,
        clock=w.clock,
        telemetry=NullTelemetry(),
    )
    ops.register(B, mine.id)
    at = "2026-11-29T12:00:00.000Z"
    data = {"endpoint_id": theirs.id, "account_id": B, "state": "held"}
    # A health item B's failures made about A's endpoint (before its owner was fixed): acct=B.
    event = OpEvent(ENDPOINT_HELD, B, f"{theirs.id}/1", at, data)
    rows = len(w.store.items)
    assert ops.emit([event], ops.lookups()) == 0
    assert len(w.store.items) == rows  # no event reminder of B's about A's endpoint


def test_foreign_endpoint_never_takes_another_accounts_rate_or_creates_its_health() -> None:
    """A row naming another account's endpoint, stored before the checks (an endpoint made before
    its health owner was fixed at creation): the consumer's own lookup keeps it out of that
    endpoint's rate and health; the sender then refuses it (endpoint_not_found)."""
    import random

    from reminders.domain.ratelimit import DestinationLimiter

    class Recording(DestinationLimiter):
        def __init__(self) -> None:
            super().__init__(1000.0)
            self.asked: list[str] = []

        def acquire(self, destination: str, now: float) -> float:
            self.asked.append(destination)
            return super().acquire(destination, now)

    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    limiter = Recording()
    worker = w.world.deliverer(
        senders={"webhook": w.sender, "email": w.sender},
        worker="w-tenancy",
        rng=random.Random(3),
        limiter=limiter,
        endpoints=endpoints.for_send,
    )
    w._workers["w1"] = worker
    foreign = _foreign_row(w, theirs.id)
    w.sender.script(foreign.deliveries["webhook-0"].key, ["500"] * 20)
    own = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, theirs.id),))
    _drain(w, rounds=5)
    assert limiter.asked.count(theirs.id) == 1  # A's delivery alone took a slot of A's endpoint
    h = w.health.items.get(theirs.id)
    assert h is None or (h.account_id == A and not any(f for _, f in h.buckets.values()))
    assert w.delivery(own.id).state is DeliveryState.DELIVERED


def test_owner_sees_and_enables_its_endpoint_whatever_another_account_wrote_before() -> None:
    """A health item another account's deliveries wrote on this endpoint before the owner was fixed
    at creation: the owner's view shows none of it, and enabling the endpoint makes it the owner's
    (never a 5xx for a condition that can never hold)."""
    from reminders.domain.health import HealthWhy
    from reminders.services.health import report

    w = World()
    endpoints = _endpoints(w)
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL))
    now = w.clock.now().timestamp()
    poisoned = w.health.record(theirs.id, B, now, 0, 5, "transient")
    assert poisoned is not None
    w.health.transition(poisoned, EndpointState.HELD, HealthWhy.FAILURE_RATIO, now, B)
    guard = w.world.health_guard()
    seen = report(guard, endpoints, theirs.id, now, A)
    assert seen.state == "active" and seen.transitions == 0 and seen.last_error_class == ""
    h = guard.set_state(theirs.id, A, EndpointState.DISABLED, now)
    assert h.account_id == A and h.state is EndpointState.DISABLED
    assert guard.admit(theirs.id, B, now).kind.value == "send"  # B's view: not its endpoint's health


def test_keyed_lookups_still_read_an_endpoint_once_per_cache_period() -> None:
    """Keying by (account, endpoint) costs no read: the limiter's read fills the owner's entry, and
    "no endpoint of that id at all" (a bare URL's unregistered implicit endpoint) is the same
    answer for every account, so it is shared; only "another account's" is per account."""
    from reminders.domain.endpoints import implicit_endpoint_id

    w = World()
    endpoints = _endpoints(w)
    reads: list[str] = []
    get = endpoints.store.get

    def counting(endpoint_id: str, consistent: bool = True) -> Any:
        reads.append(endpoint_id)
        return get(endpoint_id, consistent)

    endpoints.store.get = counting  # type: ignore[method-assign]
    theirs, _ = endpoints.create(NewEndpoint(A, A_URL, rate_per_second=5))
    reads.clear()
    assert endpoints.rate_of(theirs.id) == 5 and endpoints.for_send(A, theirs.id) is not None
    assert endpoints.for_send(B, theirs.id) is None and endpoints.for_send(B, theirs.id) is None
    assert reads == [theirs.id, theirs.id]  # the limiter's (A's served by it), then B's own
    reads.clear()
    bare = implicit_endpoint_id(A, "https://bare.example/x")
    assert endpoints.rate_of(bare) is None
    assert endpoints.for_send(A, "https://bare.example/x") is None
    assert endpoints.for_send(B, bare) is None
    # A bare URL's absent implicit endpoint is shared; a delivery naming the id is refused on it only
    # after one consistent read (terminal: issue 25 item 8).
    assert reads == [bare, bare]
    registered, _ = endpoints.create(NewEndpoint(A, "https://bare.example/x", bare_urls=True))
    assert registered.id == bare and endpoints.for_send(A, "https://bare.example/y") is not None


def test_a_parked_delivery_names_its_account_and_is_parked_again_as_that_accounts() -> None:
    from reminders.domain.health import HealthWhy
    from reminders.services.deliver import PARKED_ACCOUNT_ATTRIBUTE, PARKED_ENDPOINT_ATTRIBUTE

    w = World()
    endpoints = _endpoints(w, health=w.health)
    own, _ = endpoints.create(NewEndpoint(A, A_URL))
    now = w.clock.now().timestamp()
    held = w.health.transition(w.health.items[own.id], EndpointState.HELD, HealthWhy.OPERATOR, now, A)
    assert held is not None
    row = w.create("a:1", account_id=A, channels=(ChannelSpec(ChannelType.WEBHOOK, own.id),))
    assert [r.outcome for r in w.poll()] == ["endpoint_parked"]
    (parked,) = w.queued()
    attrs = parked["attributes"]
    assert (attrs[PARKED_ENDPOINT_ATTRIBUTE], attrs[PARKED_ACCOUNT_ATTRIBUTE]) == (own.id, A)
    assert w.sender.sends(row.deliveries["webhook-0"].key) == 0
