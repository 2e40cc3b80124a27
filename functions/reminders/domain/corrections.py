"""Corrections of a reminder in place: each changed field is one ``FieldChange`` in a list.

A PATCH is a list of field changes applied together under one version bump. Each change names the
field (the only thing the history records: never the value), says whether it is valid for the
reminder as stored, and applies itself to the reminder record. Adding a field (``due_local``,
``send_window``, ``deliver_by``) is adding one class here and one line in the API's body model.

When a change is refused (the rule, in one place):
- while any affected delivery is ``sending``: the attempt in flight was rendered from the old row;
  its outcome must be recorded before the row changes under it;
- (issue 25) when ANY earlier attempt of an affected delivery, to any destination, may have been
  accepted (an acceptance, a timeout, a transient error or an expired lease: the delivery's evidence
  summary, ``Delivery.may_have_been_accepted()``, never the last history line alone): the receiver
  may hold the old payload under the same ``webhook-id`` / ``Message-ID``, and a corrected payload
  under that key would be collapsed into it (or be a second send of the reminder). 409
  ``correction_after_possible_acceptance``. Only an explicit ``resend`` sends it again: a new
  delivery generation with a new key (``resend_generation``), recorded as intentional.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from .endpoints import ENDPOINT_PREFIX
from .models import Attempt, ChannelType, Delivery, Reminder, add_history, delivery_key
from .states import DeliveryState

#: Deliveries a correction touches: everything not delivered and not cancelled. A dead letter is
#: included (a corrected destination is what its redrive then uses); a terminal success is not.
CORRECTABLE = frozenset(
    {
        DeliveryState.SCHEDULED,
        DeliveryState.QUEUED,
        DeliveryState.SENDING,
        DeliveryState.RETRYABLE,
        DeliveryState.DEAD_LETTER,
    }
)


class FieldChange(Protocol):
    """One field of a correction."""

    @property
    def field(self) -> str:
        """The field's name as the API spells it; recorded in the history (never the value)."""
        ...

    def channels(self, reminder: Reminder) -> list[str]:
        """The channel ids this change affects (their deliveries are checked and re-planned)."""
        ...

    def apply(self, reminder: Reminder) -> Reminder:
        """The reminder with this change applied (version and deliveries' states untouched)."""
        ...


def _open(reminder: Reminder) -> list[str]:
    return [cid for cid, d in reminder.deliveries.items() if d.state in CORRECTABLE]


@dataclass(frozen=True, slots=True)
class DueAt:
    """A new due instant; with ``due_local`` it is that wall time resolved in ``time_zone`` under
    the tzdata release ``tz_rules`` (issue 17). An instant alone keeps the reminder's zone (its
    send window's zone) and drops the wall time."""

    due_at: datetime
    due_local: str | None = None
    time_zone: str | None = None
    tz_rules: str | None = None

    @property
    def field(self) -> str:
        return "due_local" if self.due_local is not None else "due_at"

    def channels(self, reminder: Reminder) -> list[str]:
        # Dead letters too: the body carries ``due_at``, so a new due time changes what a redrive
        # sends under the delivery's key (a possible acceptance refuses it, as any correction's).
        return _open(reminder)

    def apply(self, reminder: Reminder) -> Reminder:
        return replace(
            reminder,
            due_at=self.due_at,
            due_local=self.due_local,
            time_zone=self.time_zone or reminder.time_zone,
            tz_rules=self.tz_rules if self.due_local is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Destination:
    """A channel's destination: an email address or a webhook URL (the same type as before), or an
    endpoint (``ep_…``) of the reminder's own account: checked as a create checks it (issue 24)."""

    channel_id: str
    type: ChannelType
    destination: str
    field: str = "destination"

    @property
    def endpoint_id(self) -> str | None:
        """The endpoint the new destination names, if it has the shape of one (whatever follows)."""
        names = self.type is ChannelType.WEBHOOK and self.destination.startswith(ENDPOINT_PREFIX)
        return self.destination if names else None

    @property
    def request_field(self) -> str:
        """The request's field this change came from, for a 422 naming it."""
        return f"channels.{self.channel_id}.{'url' if self.type is ChannelType.WEBHOOK else 'to'}"

    def channels(self, reminder: Reminder) -> list[str]:
        return [self.channel_id]

    def apply(self, reminder: Reminder) -> Reminder:
        deliveries = dict(reminder.deliveries)
        deliveries[self.channel_id] = replace(deliveries[self.channel_id], destination=self.destination)
        return replace(reminder, deliveries=deliveries)


@dataclass(frozen=True, slots=True)
class TemplateVersion:
    version: int
    field: str = "template.version"

    def channels(self, reminder: Reminder) -> list[str]:
        return _open(reminder)

    def apply(self, reminder: Reminder) -> Reminder:
        return replace(reminder, template_version=self.version)


@dataclass(frozen=True, slots=True)
class Data:
    data: dict[str, Any]
    field: str = "data"

    def channels(self, reminder: Reminder) -> list[str]:
        return _open(reminder)

    def apply(self, reminder: Reminder) -> Reminder:
        return replace(reminder, data=dict(self.data))


def resend_generation(reminder: Reminder, d: Delivery, at: str) -> Delivery:
    """``d`` as a new delivery generation (an explicit resend after a possible acceptance): a new key
    (webhook-id, SES tag) no receiver has seen, a fresh attempt budget from ``at``, no evidence yet
    (the old key's lines stay in the history), and a ``resend`` line saying it was asked for."""
    n = d.resend + 1
    fresh = replace(
        d,
        key=delivery_key(reminder.account_id, reminder.key, d.channel_id, reminder.generation, n),
        resend=n,
        maybe_accepted=[],
        attempts=0,
        throttles=0,
        throttle_streak=0,
        cycle_started_at=at,
        last_error=None,
        receipt=None,
    )
    return replace(fresh, **add_history(fresh, Attempt(at=at, event="resend", detail=f"intentional #{n}")))
