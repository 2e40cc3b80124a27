"""Reconciliation against the provider's own record of a send (SES send events).

SES has no idempotency key. When SES accepted an email but the worker died (or timed out) before
recording it, the SES "Send" event — tagged with the delivery key — marks the delivery delivered,
so the retry that follows finds it delivered and does not send again.

A send event proves a send **whatever the state** the delivery has moved to since (rescheduled
back to ``scheduled``/``queued``, a claim given back to the rate limiter, ``sending`` again, or a
dead letter), as long as it names the delivery's current destination: evidence is scoped to
(delivery key, destination), so an acceptance at an address that has since been corrected does
not stop the corrected send. Only ``canceled`` stays as it is (the event is noted).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..domain.models import Attempt, add_history, destination_tag
from ..domain.ports import Clock, ReminderStore, Telemetry
from ..domain.schedule import iso
from ..domain.states import DeliveryState
from ..domain.suppression import SuppressionEntry, SuppressionList, SuppressionReason

RETRIES = 3
#: States a provider's evidence of acceptance moves to ``delivered``.
_PROVEN = (
    DeliveryState.SCHEDULED,
    DeliveryState.QUEUED,
    DeliveryState.SENDING,
    DeliveryState.RETRYABLE,
    DeliveryState.DEAD_LETTER,
)


#: Provider feedback after acceptance, weakest first: a stronger one replaces a weaker annotation.
FEEDBACK_RANK = {"rejected": 1, "bounced": 2, "complained": 3}


class Reconciler:
    def __init__(
        self,
        *,
        store: ReminderStore,
        clock: Clock,
        telemetry: Telemetry,
        suppressions: SuppressionList | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.telemetry = telemetry
        self.suppressions = suppressions

    def provider_feedback(
        self,
        reminder_id: str,
        channel_id: str,
        delivery_key: str,
        feedback: str,
        receipt: str,
        at: datetime | None = None,
        *,
        recipients: list[str],
        suppress: bool,
        source: str,
        detail: str = "",
    ) -> str:
        """A bounce, complaint or reject SES reported for the send with ``delivery_key``.

        ``suppress`` (a permanent bounce, a complaint): every recipient named is added to the
        reminder's account's suppression list. The delivery is annotated (``feedback``, a history
        line) without regressing it: SES accepted the send, so a delivery not yet recorded as
        delivered becomes delivered (the same evidence as a send event), a delivered one stays
        delivered, a cancelled one stays cancelled."""
        assert feedback in FEEDBACK_RANK, feedback
        reminder = self.store.get(reminder_id)
        d = reminder.deliveries.get(channel_id) if reminder else None
        if reminder is None or d is None or d.key != delivery_key:
            self.telemetry.count("provider_event_unmatched")
            return "unmatched"
        if suppress and self.suppressions is not None:
            reason = SuppressionReason.COMPLAINT if feedback == "complained" else SuppressionReason.BOUNCE
            for address in recipients or [d.destination]:
                added = self.suppressions.add(
                    SuppressionEntry(
                        account_id=reminder.account_id,
                        address_hash=self.suppressions.hash_of(reminder.account_id, address),
                        reason=reason,
                        source=source,
                        at=iso(at or self.clock.now()),
                    )
                )
                self.telemetry.count("suppression_added" if added else "suppression_known", reason=reason)
        for _ in range(RETRIES):
            if reminder is None or d is None:
                return "unmatched"
            here = not recipients or any(
                r.strip().lower() == d.destination.strip().lower() for r in recipients
            )
            if not here:
                return "noted_other_destination"
            stronger = FEEDBACK_RANK[feedback] > FEEDBACK_RANK.get(d.feedback or "", 0)
            line = Attempt(
                at=iso(self.clock.now()),
                event="provider_event",
                outcome=feedback,
                receipt=receipt,
                detail=detail,
                dest=destination_tag(d.destination),
            )
            if d.state in _PROVEN:
                updated = replace(
                    d,
                    state=DeliveryState.DELIVERED,
                    receipt=receipt,
                    delivered_at=iso(at or self.clock.now()),
                    next_attempt_at=None,
                    lease_owner=None,
                    lease_until=None,
                    dlq_pending=False,
                    feedback=feedback if stronger else d.feedback,
                    # the acceptance first (a redrive and a retry look for it), then the feedback
                    **add_history(
                        replace(d, **add_history(d, replace(line, outcome="accepted", decision="delivered"))),
                        replace(line, decision="noted"),
                    ),
                )
                outcome = f"{feedback}_reconciled"
            elif any(
                a.event == "provider_event" and a.outcome == feedback and a.receipt == receipt
                for a in d.history
            ):
                return f"{feedback}_known"  # a duplicate event (EventBridge delivers at least once)
            else:
                updated = replace(
                    d,
                    feedback=feedback if stronger else d.feedback,
                    **add_history(d, replace(line, decision="noted")),
                )
                outcome = f"{feedback}_noted_{d.state.value}"
            if self.store.save_delivery(reminder_id, updated, d.rev):
                self.telemetry.count("provider_feedback", outcome=feedback)
                self.telemetry.log(
                    "provider_feedback", reminder_id=reminder_id, delivery_key=delivery_key, outcome=outcome
                )
                return outcome
            reminder = self.store.get(reminder_id)
            d = reminder.deliveries.get(channel_id) if reminder else None
        return "conflict"

    def provider_accepted(
        self,
        reminder_id: str,
        channel_id: str,
        delivery_key: str,
        receipt: str,
        at: datetime | None = None,
        *,
        destination: str | list[str] | None = None,
    ) -> str:
        """Record that the provider accepted the send with ``delivery_key`` (to ``destination``, the
        recipients the provider names; None when it names none). Order-insensitive: a late event
        never regresses a delivered or canceled delivery; it is added to the audit trail."""
        recipients = [destination] if isinstance(destination, str) else list(destination or [])
        for _ in range(RETRIES):
            reminder = self.store.get(reminder_id)
            d = reminder.deliveries.get(channel_id) if reminder else None
            if reminder is None or d is None or d.key != delivery_key:
                self.telemetry.count("provider_event_unmatched")
                return "unmatched"
            now = self.clock.now()
            here = not recipients or any(
                r.strip().lower() == d.destination.strip().lower() for r in recipients
            )
            event = Attempt(
                at=iso(now),
                event="provider_event",
                outcome="accepted" if here else "accepted_elsewhere",
                receipt=receipt,
                detail=f"provider accepted at {iso(at) if at else 'unknown'}",
                dest=destination_tag(d.destination) if here else destination_tag(recipients[0]),
            )
            if d.state is DeliveryState.DELIVERED:
                return "already_delivered"
            if here and d.state in _PROVEN:
                updated = replace(
                    d,
                    state=DeliveryState.DELIVERED,
                    receipt=receipt,
                    delivered_at=iso(at or now),
                    next_attempt_at=None,
                    lease_owner=None,
                    lease_until=None,
                    dlq_pending=False,
                    **add_history(d, replace(event, decision="delivered")),
                )
                outcome = "reconciled"
            else:  # canceled, or sent to an address the delivery no longer has: note only
                updated = replace(d, **add_history(d, replace(event, decision="noted")))
                outcome = f"noted_{d.state.value}" if here else "noted_other_destination"
            if self.store.save_delivery(reminder_id, updated, d.rev):
                self.telemetry.count("provider_event_reconciled", outcome=outcome)
                self.telemetry.log(
                    "provider_event", reminder_id=reminder_id, delivery_key=delivery_key, outcome=outcome
                )
                return outcome
        return "conflict"
