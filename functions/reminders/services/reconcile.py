"""Reconciliation against the provider's own record of a send (SES send events).

SES has no idempotency key. When SES accepted an email but the worker died (or timed out) before
recording it, the SES "Send" event — tagged with the delivery key — marks the delivery delivered,
so the retry that follows the lease expiry finds it delivered and does not send again.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..domain.models import Attempt
from ..domain.ports import Clock, ReminderStore, Telemetry
from ..domain.schedule import iso
from ..domain.states import DeliveryState

RETRIES = 3
_OPEN = (DeliveryState.SENDING, DeliveryState.RETRYABLE)


class Reconciler:
    def __init__(self, *, store: ReminderStore, clock: Clock, telemetry: Telemetry) -> None:
        self.store = store
        self.clock = clock
        self.telemetry = telemetry

    def provider_accepted(
        self, reminder_id: str, channel_id: str, delivery_key: str, receipt: str, at: datetime | None = None
    ) -> str:
        """Record that the provider accepted the send with ``delivery_key``. Order-insensitive: a
        late event never regresses a terminal state; it is added to the audit trail."""
        for _ in range(RETRIES):
            reminder = self.store.get(reminder_id)
            d = reminder.deliveries.get(channel_id) if reminder else None
            if reminder is None or d is None or d.key != delivery_key:
                self.telemetry.count("provider_event_unmatched")
                return "unmatched"
            now = self.clock.now()
            event = Attempt(
                at=iso(now),
                event="provider_event",
                outcome="accepted",
                receipt=receipt,
                detail=f"provider accepted at {iso(at) if at else 'unknown'}",
            )
            if d.state is DeliveryState.DELIVERED:
                return "already_delivered"
            if d.state in _OPEN:
                updated = replace(
                    d,
                    state=DeliveryState.DELIVERED,
                    receipt=receipt,
                    delivered_at=iso(at or now),
                    next_attempt_at=None,
                    lease_owner=None,
                    lease_until=None,
                    history=[*d.history, replace(event, decision="delivered")],
                )
                outcome = "reconciled"
            else:  # scheduled/queued (cannot have been sent by us), canceled, dead_letter: note only
                updated = replace(d, history=[*d.history, replace(event, decision="noted")])
                outcome = f"noted_{d.state.value}"
            if self.store.save_delivery(reminder_id, updated, d.rev):
                self.telemetry.count("provider_event_reconciled", outcome=outcome)
                self.telemetry.log(
                    "provider_event", reminder_id=reminder_id, delivery_key=delivery_key, outcome=outcome
                )
                return outcome
        return "conflict"
