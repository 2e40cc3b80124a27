"""Record: the outcome of an attempt, written once, merged without regressing a row that moved on."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta

from ...domain.models import (
    MAYBE_ACCEPTED,
    Attempt,
    Delivery,
    Reminder,
    add_history,
    destination_tag,
    with_evidence,
)
from ...domain.ports import OutMessage
from ...domain.retry import Action, DeadLetterReason, Decision, OutcomeClass, SendResult
from ...domain.schedule import SQS_MAX_DELAY_SECONDS, iso, parse_iso
from ...domain.states import DeliveryState
from .handoff import HandOffStep
from .messages import SAVE_RETRIES, DeliveryMessage, MessageContext, RecordResult, _ack, _still_parked_until


class RecordStep(HandOffStep):
    """Record: one conditional write of the outcome; a write that landed but whose answer was lost is
    recognised as ours, a row that moved on meanwhile is merged without regressing it (and every
    provider acceptance is kept)."""

    def _record(
        self,
        reminder: Reminder,
        claimed_rev: int,
        updated: Delivery,
        result: SendResult,
        decision: Decision,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
    ) -> RecordResult:
        """Persist the outcome (conditional on our lease and the version), then hand off."""
        done = self.clock.now()
        for _ in range(SAVE_RETRIES):
            if self._save(reminder.id, updated, claimed_rev, lease_owner=self.worker, version=version):
                return self._after_record(reminder, updated, result, decision, msg, version, ctx)
            # Lost the row while sending: cancelled, rescheduled, or a lease taken over.
            current = self.store.get(reminder.id)
            if current is None:
                return _ack("vanished")
            cur = current.deliveries[msg.channel_id]
            merged = self._merge_after_conflict(current, cur, updated, decision, done)
            if merged is not None and cur.key == updated.key:
                # Never drop evidence in a merge: ours (this attempt, a take-over) and the row's.
                merged = replace(merged, maybe_accepted=with_evidence(cur, *updated.maybe_accepted))
            if merged is None:
                self.telemetry.log(
                    "outcome_superseded", reminder_id=reminder.id, delivery_key=cur.key, state=cur.state
                )
                return _ack("superseded")
            if self._save(reminder.id, merged, cur.rev):
                if merged.state is DeliveryState.DEAD_LETTER and merged.dlq_pending:
                    self._finish_dead_letter(current, merged)
                elif merged.state is DeliveryState.RETRYABLE and current.version != version:
                    assert merged.next_attempt_at is not None
                    wait = (parse_iso(merged.next_attempt_at) - done).total_seconds()
                    self.queues.send(
                        merged.type.value,
                        [
                            OutMessage(
                                reminder.id,
                                merged.channel_id,
                                current.version,
                                min(SQS_MAX_DELAY_SECONDS, max(0, math.ceil(wait))),
                            )
                        ],
                    )
                return _ack(f"recorded_after_conflict_{merged.state}")
            claimed_rev = -1  # retry the merge from a fresh read
        raise RuntimeError("could not record outcome")  # the message returns; the lease expires

    def _apply(
        self, d: Delivery, result: SendResult, decision: Decision, now: datetime, *, unsent: bool = False
    ) -> Delivery:
        """The delivery after ``result``; ``unsent``: nothing was sent (the gate ended it), so its
        history line is a ``gate`` line, neither an attempt nor evidence of a possible acceptance."""
        maybe_sent = result.outcome.value in MAYBE_ACCEPTED and not unsent
        attempt = Attempt(
            at=iso(now),
            event="gate" if unsent else "attempt",
            outcome=result.outcome.value,
            status=result.status,
            decision=decision.action.value,
            delay_seconds=round(decision.delay_seconds, 3)
            if decision.action in (Action.RETRY, Action.HOLD)
            else None,
            policy_version=self.policy.version,
            receipt=result.receipt,
            fingerprint=result.fingerprint,
            detail=decision.reason.value if decision.reason else result.detail,
            worker=self.worker,
            dest=destination_tag(d.destination) if maybe_sent else "",
        )
        new = replace(
            d,
            attempts=d.attempts + (1 if decision.spends_attempt else 0),
            throttles=d.throttles + (1 if result.outcome is OutcomeClass.THROTTLED else 0),
            throttle_streak=d.throttle_streak + 1 if result.outcome is OutcomeClass.THROTTLED else 0,
            lease_owner=None,
            lease_until=None,
            parked_until=_still_parked_until(d, decision),
            **add_history(d, attempt),
        )
        if decision.action is Action.DELIVER:
            new.state = DeliveryState.DELIVERED
            new.receipt = result.receipt
            new.delivered_at = iso(now)
            new.next_attempt_at = None
        else:
            new.last_error = {"class": result.outcome.value, "status": result.status, "detail": result.detail}
            if decision.action is Action.DEAD_LETTER:
                new.state = DeliveryState.DEAD_LETTER
                new.dead_letter_reason = (decision.reason or DeadLetterReason.PERMANENT).value
                new.dlq_pending = True
                new.next_attempt_at = None
            else:
                new.state = DeliveryState.RETRYABLE
                new.next_attempt_at = iso(now + timedelta(seconds=decision.delay_seconds))
        return new

    def _merge_after_conflict(
        self, current: Reminder, cur: Delivery, mine: Delivery, decision: Decision, now: datetime
    ) -> Delivery | None:
        """Our attempt finished but the row moved on. Record the attempt truthfully, never regress,
        and never drop a provider acceptance: a redrive or a retry must find it."""
        attempt = mine.history[-1]
        if decision.action is Action.DELIVER and cur.state in (
            DeliveryState.DELIVERED,
            DeliveryState.DEAD_LETTER,
        ):
            # A stale worker's 2xx (its lease had expired and another worker finished): the send
            # happened. A dead letter it contradicts becomes delivered (the provider has it).
            if cur.state is DeliveryState.DELIVERED:
                return replace(cur, **add_history(cur, attempt))
            return replace(
                cur,
                state=DeliveryState.DELIVERED,
                receipt=mine.receipt,
                delivered_at=mine.delivered_at,
                dlq_pending=False,
                **add_history(cur, attempt),
            )
        if cur.state in (DeliveryState.DELIVERED, DeliveryState.DEAD_LETTER):
            return None
        if cur.state is DeliveryState.CANCELED:
            # Cancelled while sending: the attempt (even an acceptance, with its receipt) goes into
            # the history, but canceled is terminal and stays (TRANSITIONS has no exit from it).
            return replace(cur, lease_owner=None, lease_until=None, **add_history(cur, attempt))
        if decision.action is Action.DELIVER:
            return replace(
                cur,
                state=DeliveryState.DELIVERED,
                receipt=mine.receipt,
                delivered_at=mine.delivered_at,
                lease_owner=None if cur.lease_owner in (None, self.worker) else cur.lease_owner,
                lease_until=None if cur.lease_owner in (None, self.worker) else cur.lease_until,
                next_attempt_at=None,
                **add_history(cur, attempt),
            )
        if cur.state is DeliveryState.SENDING and cur.lease_owner != self.worker:
            return None  # another worker owns it now; its own message carries on
        if cur.state is DeliveryState.SENDING:
            # Rescheduled while we were sending: retry no earlier than the new due time.
            if decision.action is Action.DEAD_LETTER:
                return replace(mine, rev=cur.rev)
            assert mine.next_attempt_at is not None
            not_before = max(parse_iso(mine.next_attempt_at), current.due_at)
            return replace(mine, rev=cur.rev, next_attempt_at=iso(not_before))
        return None
