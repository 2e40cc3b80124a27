"""Operational events (issue 16): what an account's event endpoint is told, derived by diffing the
old and new image of a table item (the table's stream is the outbox: an outcome recorded is an event
owed, whatever crashes after the write).

- A reminder delivery that became ``delivered`` → ``reminder.delivered``; ``dead_letter`` →
  ``reminder.dead_lettered`` with its reason. Keyed by the delivery's own key and its cycle (a
  redrive starts a new cycle, so a second dead letter after a redrive is a second event).
- An endpoint health item (``pk=E#<endpoint id>, sk=H``: ``st`` active|held|disabled, ``tv`` the
  transition counter, ``acct``, ``since``, ``why``) whose ``st`` changed → ``endpoint.held``,
  ``endpoint.resumed`` (back to active) or ``endpoint.disabled``. Keyed by the endpoint and ``tv``.

Each event becomes an internal reminder of the account (kind :data:`EVENT_KIND`, key
:func:`OpEvent.key`), so it goes through the same queue, ledger, retry and never-twice invariant as
any webhook. Event reminders produce no events themselves (no loops). Payloads carry ids, types,
reasons and times: never an address, a URL or a reminder's ``data``.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .models import Reminder
from .schedule import iso
from .states import DeliveryState

#: The kind of an event reminder. The API's ``kind`` pattern has no ``@``: no client can make one.
EVENT_KIND = "@event"
#: Event reminder keys start with it; the API's ``key`` pattern has no ``/``: no client key collides.
EVENT_KEY_PREFIX = "evt/"
#: The template an event reminder names (its body is rendered from the event, not from a template).
EVENT_TEMPLATE = "@event"

REMINDER_DELIVERED = "reminder.delivered"
REMINDER_DEAD_LETTERED = "reminder.dead_lettered"
ENDPOINT_HELD = "endpoint.held"
ENDPOINT_RESUMED = "endpoint.resumed"
ENDPOINT_DISABLED = "endpoint.disabled"
EVENT_TYPES = (REMINDER_DELIVERED, REMINDER_DEAD_LETTERED, ENDPOINT_HELD, ENDPOINT_RESUMED, ENDPOINT_DISABLED)

#: The endpoint health item (written by the health part of issue 16): ``pk=E#<id>, sk=H``.
HEALTH_PK_PREFIX = "E#"
HEALTH_SK = "H"
HEALTH_ACTIVE = "active"
HEALTH_HELD = "held"
HEALTH_DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class OpEvent:
    type: str  # one of EVENT_TYPES
    account_id: str
    subject: str  # what it is about: "<delivery key>/<cycle>" or "<endpoint id>/<transition>"
    occurred_at: str  # ISO UTC: when the outcome or transition happened (the event reminder's due time)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The event's stable key (the event reminder's business key): the same outcome always
        yields the same key, so a stream record seen twice creates one event reminder."""
        return f"{EVENT_KEY_PREFIX}{self.type}/{self.subject}"

    def document(self) -> dict[str, Any]:
        """The webhook body (Standard Webhooks' recommended shape: type, timestamp, data). The
        timestamp is when the outcome or transition happened (``data`` does not repeat it)."""
        return {"type": self.type, "timestamp": self.occurred_at, "data": dict(self.data)}


@dataclass(frozen=True, slots=True)
class EventEndpoint:
    """The endpoint an account registered for its operational events, and the types it wants."""

    account_id: str
    endpoint_id: str
    event_types: tuple[str, ...]
    registered_at: str


class EventEndpointStore(Protocol):
    def get(self, account_id: str) -> EventEndpoint | None: ...

    def put(self, registration: EventEndpoint) -> None: ...

    def delete(self, account_id: str) -> bool:
        """False: there was none."""
        ...


def is_event_reminder(reminder: Reminder) -> bool:
    return reminder.kind == EVENT_KIND or reminder.key.startswith(EVENT_KEY_PREFIX)


def reminder_events(old: Reminder | None, new: Reminder) -> list[OpEvent]:
    """The delivery outcomes ``new`` records that ``old`` did not (one per channel at most)."""
    if is_event_reminder(new):
        return []  # an event's own delivery is never an event (no loops)
    out: list[OpEvent] = []
    for cid, d in new.deliveries.items():
        if d.state not in (DeliveryState.DELIVERED, DeliveryState.DEAD_LETTER):
            continue
        before = old.deliveries.get(cid) if old is not None else None
        if before is not None and before.state is d.state and before.cycle == d.cycle:
            continue  # already so: another write of the same outcome (a receipt, a feedback note)
        common = {
            "reminder_id": new.id,
            "account_id": new.account_id,
            "kind": new.kind,
            "channel_id": cid,
            "channel_type": d.type.value,
            "delivery_key": d.key,
            "cycle": d.cycle,
        }
        # When it happened: the delivery's own time, else its last history line, else (a dead
        # letter written without an attempt) the reminder's due time: never no time (no event lost).
        if d.state is DeliveryState.DELIVERED:
            at = d.delivered_at or _last_at(d.history) or iso(new.due_at)
            out.append(OpEvent(REMINDER_DELIVERED, new.account_id, f"{d.key}/{d.cycle}", at, common))
        else:
            at = _last_at(d.history) or iso(new.due_at)
            data = {**common, "reason": d.dead_letter_reason or "unknown"}
            out.append(OpEvent(REMINDER_DEAD_LETTERED, new.account_id, f"{d.key}/{d.cycle}", at, data))
    return out


def _last_at(history: list[Any]) -> str | None:
    return history[-1].at if history else None


_HEALTH_EVENTS = {
    HEALTH_HELD: ENDPOINT_HELD,
    HEALTH_DISABLED: ENDPOINT_DISABLED,
    HEALTH_ACTIVE: ENDPOINT_RESUMED,
}


def is_health_item(item: dict[str, Any] | None) -> bool:
    return (
        item is not None
        and str(item.get("pk", "")).startswith(HEALTH_PK_PREFIX)
        and str(item.get("sk", "")) == HEALTH_SK
    )


def health_events(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[OpEvent]:
    """The endpoint transition ``new`` records (plain attribute values, as deserialized): none when
    the state is unchanged, the item was removed, or it is malformed. A first item that is already
    held or disabled is a transition from active."""
    if not is_health_item(new):
        return []
    assert new is not None
    state = new.get("st")
    before = (old or {}).get("st", HEALTH_ACTIVE) if is_health_item(old) else HEALTH_ACTIVE
    account = new.get("acct")
    if state not in _HEALTH_EVENTS or state == before or not isinstance(account, str) or not account:
        return []
    try:
        transition = int(new.get("tv", 0))
    except (TypeError, ValueError):
        return []
    endpoint_id = str(new["pk"])[len(HEALTH_PK_PREFIX) :]
    at = str(new.get("since") or "")
    if not at:
        return []
    data: dict[str, Any] = {
        "endpoint_id": endpoint_id,
        "account_id": account,
        "state": state,
        "previous_state": before,
        "transition": transition,
        "since": at,
    }
    if isinstance(new.get("why"), str) and new["why"] and state != HEALTH_ACTIVE:
        data["reason"] = new["why"]
    return [OpEvent(_HEALTH_EVENTS[state], account, f"{endpoint_id}/{transition}", at, data)]
