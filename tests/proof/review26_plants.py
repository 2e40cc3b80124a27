"""Planted product defects for the hostile review of the explorer (rev26): each ``plant_*`` takes a
``pytest.MonkeyPatch`` and breaks one promise of MISSION.md in one part of the product. The tests in
``test_review26_hostile.py`` run the explorer on each and expect the violation kind named here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest


def plant_ses_throttle_dead_letters(mp: pytest.MonkeyPatch) -> None:
    """SES events / record: SES throttling (a 429: 'retry, never spend the budget') is classified as
    a permanent refusal: the email dead-letters ``permanent_failure`` though SES never refused it."""
    from reminders.adapters.ses import SesEmailSender
    from reminders.domain.retry import OutcomeClass

    real = SesEmailSender._classify

    def classify(exc: Any, fp: str) -> Any:
        result = real(exc, fp)
        if result.outcome is OutcomeClass.THROTTLED:
            return replace(result, outcome=OutcomeClass.PERMANENT)
        return result

    mp.setattr(SesEmailSender, "_classify", staticmethod(classify))


def plant_cancel_answers_without_writing(mp: pytest.MonkeyPatch) -> None:
    """Cancel: the API answers 200 with every delivery ``canceled`` but writes nothing; the queued
    message is sent afterwards (a cancelled reminder delivered)."""
    from reminders.domain.states import CANCELABLE, DeliveryState
    from reminders.services.intents import Reminders

    def cancel(self: Any, rid: str) -> Any:
        current = self.get(rid)
        deliveries = {
            cid: replace(d, state=DeliveryState.CANCELED) if d.state in CANCELABLE else d
            for cid, d in current.deliveries.items()
        }
        return replace(current, deliveries=deliveries)

    mp.setattr(Reminders, "cancel", cancel)


def plant_suppressions_listed_across_accounts(mp: pytest.MonkeyPatch) -> None:
    """Tenancy / suppression list: ``GET /suppressions?account_id=A`` lists every account's entries
    (each entry names its own account: another account's address hashes are shown to A)."""
    from reminders.adapters.suppression import MemorySuppressionList, entry_from_item

    def list_all(self: Any, account_id: str, limit: int = 100) -> list[Any]:
        with self.lock:
            return [entry_from_item(self.items[k]) for k in sorted(self.items)[:limit]]

    mp.setattr(MemorySuppressionList, "list", list_all)


def plant_dispatch_hands_over_early(mp: pytest.MonkeyPatch) -> None:
    """Dispatch: the dispatcher hands SQS a delay 45 s short and no due attribute (the consumer has
    nothing to wait out): reminders are sent before they are due."""
    from reminders.services import dispatch

    real = dispatch.delay_seconds
    mp.setattr(dispatch, "delay_seconds", lambda due, now: max(0, real(due, now) - 45))
    mp.setattr(dispatch, "due_attributes", lambda due: {})


def plant_redrive_keeps_the_spent_budget(mp: pytest.MonkeyPatch) -> None:
    """Redrive: a redriven dead letter does not get a fresh attempt cycle: its spent attempts stay
    (an ``attempts_exhausted`` redrive dead-letters again after one send)."""
    from reminders.services.delivery import claim

    real_replace = claim.replace

    def keep_attempts(obj: Any, **changes: Any) -> Any:
        if changes.get("attempts") == 0 and "cycle" in changes:
            changes["attempts"] = obj.attempts
        return real_replace(obj, **changes)

    mp.setattr(claim, "replace", keep_attempts)


def plant_correction_takes_a_foreign_endpoint(mp: pytest.MonkeyPatch) -> None:
    """Corrections / tenancy: ``PATCH`` of a channel to an endpoint id skips the ownership check:
    account X's reminder is corrected onto account A's endpoint (signed with A's secret)."""
    from reminders.services.intents import Reminders

    mp.setattr(Reminders, "_check_endpoint", lambda self, current, ch: None)


def plant_event_endpoint_of_another_account(mp: pytest.MonkeyPatch) -> None:
    """Operational events / tenancy: ``PUT /accounts/X/event-endpoint`` accepts another account's
    endpoint id: X's events would go to A's receiver signed with A's secret."""
    from reminders.domain.errors import ValidationError
    from reminders.domain.opevents import EVENT_TYPES, EventEndpoint
    from reminders.domain.schedule import iso
    from reminders.services.opevents import OpEvents

    def register(self: Any, account_id: str, endpoint_id: str, event_types: Any = ()) -> Any:
        if self.endpoints.store.get(endpoint_id) is None:
            raise ValidationError("endpoint_id", "no such endpoint for this account")
        registration = EventEndpoint(
            account_id=account_id,
            endpoint_id=endpoint_id,
            event_types=tuple(sorted(set(event_types) or EVENT_TYPES)),
            registered_at=iso(self.clock.now()),
        )
        self.registrations.put(registration)
        return registration

    mp.setattr(OpEvents, "register", register)


def plant_receipt_verified_with_any_account(mp: pytest.MonkeyPatch) -> None:
    """Receipts / tenancy: a receiver receipt verifies with the secret of any endpoint in the store,
    not only the one the delivery was sent through (a forged receipt lands)."""
    from reminders import runtime
    from reminders.adapters.endpoints_store import endpoint_from_item
    from reminders.adapters.receipts import EndpointReceiverSecrets

    def secrets_for(self: Any, account_id: str, destination: str) -> list[str]:
        store = runtime.endpoint_store()
        out: list[str] = []
        for raw in list(store.items.values()):
            endpoint = endpoint_from_item(raw, store.sealer, store.deployment_key)
            out.extend(endpoint.signing_secrets(self.now()))
        return out

    mp.setattr(EndpointReceiverSecrets, "secrets_for", secrets_for)


def plant_ses_event_reconciles_any_destination(mp: pytest.MonkeyPatch) -> None:
    """SES events: a send event for an email to an address the delivery no longer has (a correction
    moved it) reconciles the delivery as delivered to its new address."""
    from reminders.services.reconcile import Reconciler

    real = Reconciler.provider_accepted

    def accepted(self: Any, *args: Any, destination: Any = None, **kwargs: Any) -> str:
        return str(real(self, *args, destination=None, **kwargs))

    mp.setattr(Reconciler, "provider_accepted", accepted)


def plant_claim_ignores_a_live_lease(mp: pytest.MonkeyPatch) -> None:
    """Claim: a ``sending`` delivery under another worker's live lease is claimed again (two workers
    send one key at once)."""
    from reminders.adapters import memory

    mp.setattr(memory, "_CLAIMABLE", {*memory._CLAIMABLE, "sending"})


PLANTS = {
    name.removeprefix("plant_"): fn for name, fn in dict(globals()).items() if name.startswith("plant_")
}
