"""Operational events (issue 16): an account registers one of its endpoints for them; every outcome
and endpoint transition the table's stream reports (domain/opevents.py) becomes an internal reminder
of that account, created through the normal use case with the event's stable key and the endpoint
as its channel, due when it happened. So an event is signed with the endpoint's secret, queued,
claimed, retried and ledgered like any webhook (at most one accepted send per key), and the stream's
at-least-once delivery is harmless: a second create of the same key returns the first.

An account with no event endpoint costs one registration read per stream invocation (the lookup is
cached per invocation by :class:`Lookups`), and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..domain.endpoints import is_endpoint_id
from ..domain.errors import ConflictError, NotFoundError, ValidationError
from ..domain.models import ChannelType, reminder_id
from ..domain.opevents import (
    EVENT_KIND,
    EVENT_TEMPLATE,
    EVENT_TYPES,
    EventEndpoint,
    EventEndpointStore,
    OpEvent,
)
from ..domain.ports import Clock, Telemetry
from ..domain.schedule import iso, parse_iso
from .endpoints import Endpoints
from .intents import ChannelSpec, NewReminder, Reminders

EVENT_CHANNEL_ID = "webhook-0"


class Lookups:
    """The registrations read during one stream invocation: each account's read at most once."""

    def __init__(self, store: EventEndpointStore) -> None:
        self.store = store
        self.seen: dict[str, EventEndpoint | None] = {}
        self.reads = 0

    def __call__(self, account_id: str) -> EventEndpoint | None:
        if account_id not in self.seen:
            self.reads += 1
            self.seen[account_id] = self.store.get(account_id)
        return self.seen[account_id]


class OpEvents:
    def __init__(
        self,
        *,
        registrations: EventEndpointStore,
        endpoints: Endpoints,
        reminders: Reminders,
        clock: Clock,
        telemetry: Telemetry,
    ) -> None:
        self.registrations = registrations
        self.endpoints = endpoints
        self.reminders = reminders
        self.clock = clock
        self.telemetry = telemetry

    # -- the registration (the API) ------------------------------------------------------------
    def register(self, account_id: str, endpoint_id: str, event_types: Sequence[str] = ()) -> EventEndpoint:
        """``endpoint_id`` (one of the account's endpoints) receives ``event_types`` (all when empty)."""
        endpoint = self.endpoints.store.get(endpoint_id) if is_endpoint_id(endpoint_id) else None
        if endpoint is None or endpoint.account_id != account_id:
            raise ValidationError("endpoint_id", "no such endpoint for this account")
        unknown = sorted(set(event_types) - set(EVENT_TYPES))
        if unknown:
            raise ValidationError("event_types", f"unknown event type(s): {', '.join(unknown)}")
        registration = EventEndpoint(
            account_id=account_id,
            endpoint_id=endpoint_id,
            event_types=tuple(sorted(set(event_types) or EVENT_TYPES)),
            registered_at=iso(self.clock.now()),
        )
        self.registrations.put(registration)
        self.telemetry.count("event_endpoint_registered")
        self.telemetry.log(
            "event_endpoint_registered", endpoint_id=endpoint_id, types=len(registration.event_types)
        )
        return registration

    def registration(self, account_id: str) -> EventEndpoint:
        found = self.registrations.get(account_id)
        if found is None:
            raise NotFoundError(f"account {account_id} has no event endpoint")
        return found

    def unregister(self, account_id: str) -> EventEndpoint:
        found = self.registration(account_id)
        self.registrations.delete(account_id)
        self.telemetry.count("event_endpoint_removed")
        return found

    def lookups(self) -> Lookups:
        return Lookups(self.registrations)

    # -- emitting ---------------------------------------------------------------------------------
    def emit(self, events: Iterable[OpEvent], lookup: Callable[[str], EventEndpoint | None]) -> int:
        """Create the event reminder of each event the account wants (how many were new). A failure
        to write raises: the stream record is retried, and the stable key makes the retry harmless."""
        created = 0
        for event in events:
            registration = lookup(event.account_id)
            if registration is None or event.type not in registration.event_types:
                self.telemetry.count("opevent_unwanted")
                continue
            if not self._about_own_endpoint(event):
                self.telemetry.count("opevent_foreign_endpoint", type=event.type)
                continue
            if self._create(event, registration):
                created += 1
        return created

    def _about_own_endpoint(self, event: OpEvent) -> bool:
        """An ``endpoint.*`` event goes only to the account that owns the endpoint (issue 24): a
        health item another account's deliveries wrote before its owner was fixed names that other
        account. One read of the owner per transition event (rare; no secret opened: this function
        holds no key to them); an implicit endpoint never registered has no item to read, and its
        id is a hash of its own account."""
        endpoint_id = event.data.get("endpoint_id") if event.type.startswith("endpoint.") else None
        if not isinstance(endpoint_id, str) or not is_endpoint_id(endpoint_id):
            return True
        owner = self.endpoints.store.owner_of(endpoint_id)
        return owner is None or owner == event.account_id

    def _create(self, event: OpEvent, registration: EventEndpoint) -> bool:
        cmd = NewReminder(
            account_id=event.account_id,
            key=event.key,
            kind=EVENT_KIND,
            due_at=parse_iso(event.occurred_at),
            channels=(ChannelSpec(ChannelType.WEBHOOK, registration.endpoint_id),),
            template_id=EVENT_TEMPLATE,
            template_version=1,
            data=event.document(),
        )
        try:
            # The use first, as the API records one for a channel naming an endpoint (a delete counts
            # it). Only while the endpoint exists; whose it is was checked at registration, so no read
            # of the endpoint (and no opening of its secrets) per event.
            rid = reminder_id(event.account_id, event.key)
            if not self.endpoints.store.add_use(
                registration.endpoint_id, rid, EVENT_CHANNEL_ID, iso(self.clock.now())
            ):
                raise ValidationError("endpoint_id", "the account's event endpoint no longer exists")
            _, created = self.reminders.create(cmd, internal=True)
        except (ValidationError, ConflictError) as exc:
            # Never better on a retry: the endpoint was deleted after it was registered, or the
            # event is older than any delivery may be. Counted and logged (no content), not retried.
            self.telemetry.count("opevent_refused", type=event.type)
            self.telemetry.log("opevent_refused", type=event.type, why=type(exc).__name__)
            return False
        self.telemetry.count("opevent_created" if created else "opevent_duplicate", type=event.type)
        if created:
            self.telemetry.log(
                "opevent_created", type=event.type, reminder_id=reminder_id(event.account_id, event.key)
            )
        return created
