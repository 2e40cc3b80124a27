"""Claim: take the delivery (one conditional write with a lease), or judge why it was not taken."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ...domain.models import Attempt, Reminder, add_history, destination_tag
from ...domain.outlook import not_before
from ...domain.ports import ClaimResult
from ...domain.schedule import PRE_CLAIM_WAIT_MAX_SECONDS, iso, parse_iso, watch_key
from ...domain.states import CLAIMABLE, DeliveryState
from .handoff import HandOffStep
from .messages import (
    _MICROSECOND,
    RACE_BACKOFF_SECONDS,
    SAVE_RETRIES,
    DeliveryMessage,
    MessageContext,
    RecordResult,
    _ack,
    _copy_of_parked,
    has_acceptance,
)


class ClaimStep(HandOffStep):
    """Claim: one conditional write (or the judgement of why it did not happen: delivered, stale,
    someone else's live lease, not yet due); a claim whose answer was lost is recognised as ours."""

    def _wait_until_due(
        self, due: str, now: datetime, ctx: MessageContext, msg: DeliveryMessage, version: int
    ) -> datetime | RecordResult:
        """SQS delays in whole seconds, rounded down: the message may arrive up to a second before
        its due time. Wait out that sub-second rest before claiming (a bounded timer, not a retry);
        the claim's ``due <= now`` stays the guard. Returns the time after the wait.

        Unless the batch is behind (a record of it a second or more overdue): the invocation ends
        with its slowest record, so this one's wait would hold the slot of records already late.
        It comes back by visibility instead (whole seconds: on time or after, never early)."""
        try:
            due_at = parse_iso(due)
        except ValueError:
            return now  # a hint we cannot read: the claim decides
        wait = (due_at - now).total_seconds()
        if 0 < wait < PRE_CLAIM_WAIT_MAX_SECONDS <= ctx.batch_behind_seconds:
            self.telemetry.count("handed_back", reason="batch_behind")
            return self._later(msg, version, ctx, wait, "not_yet_due_batch_behind")
        if not (0 < wait < PRE_CLAIM_WAIT_MAX_SECONDS) or (
            ctx.remaining_seconds() - wait < self.timing.record_budget_seconds
        ):
            return now
        self.telemetry.count("waited_before_claim")
        for _ in range(2):  # a timer may wake a hair early: top it up once
            self.sleep(wait)
            now = self.clock.now()
            wait = (due_at - now).total_seconds()
            if wait <= 0:
                break
            wait = min(wait + 0.001, PRE_CLAIM_WAIT_MAX_SECONDS)
        return now

    def _new_lease(self, now: datetime) -> datetime:
        """The lease's expiry, strictly increasing per worker and unique across the threads of one
        worker: it doubles as the claim's nonce, so a claim whose answer was lost is told apart from
        an earlier claim of this same worker."""
        with self._lock:
            lease_until = max(
                now + timedelta(seconds=self.policy.lease_seconds), self._last_lease + _MICROSECOND
            )
            self._last_lease = lease_until
        return lease_until

    def _own_claim(self, reminder: Reminder | None, channel_id: str, lease_until: datetime) -> bool:
        d = reminder.deliveries.get(channel_id) if reminder else None
        return (
            d is not None
            and d.state is DeliveryState.SENDING
            and d.lease_owner == self.worker
            and d.lease_until == iso(lease_until)
        )

    # -- a claim that did not happen ---------------------------------------------------------
    def _judge_unclaimed(
        self,
        reminder: Reminder | None,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
        now: datetime,
    ) -> RecordResult | ClaimResult:
        tel = self.telemetry
        delivery = reminder.deliveries.get(msg.channel_id) if reminder else None
        if reminder is None or delivery is None:
            tel.count("stale_skipped", reason="unknown")
            tel.log("skip_unknown", reminder_id=msg.reminder_id, channel_id=msg.channel_id)
            return _ack("stale_unknown")
        state = delivery.state
        if state is DeliveryState.DELIVERED:
            tel.count("duplicate_suppressed", reason="delivered")
            tel.log("duplicate_suppressed", reminder_id=reminder.id, delivery_key=delivery.key, state=state)
            return _ack("duplicate_suppressed")
        if state is DeliveryState.CANCELED:
            tel.count("stale_skipped", reason="canceled")
            tel.log("skip_canceled", reminder_id=reminder.id, delivery_key=delivery.key)
            return _ack("canceled_skipped")
        if state is DeliveryState.DEAD_LETTER:
            if delivery.dlq_pending:
                self._finish_dead_letter(reminder, delivery)
                return _ack("dead_letter_resent")
            tel.count("duplicate_suppressed", reason="dead_letter")
            return _ack("duplicate_suppressed")
        if reminder.version != version:
            tel.count("stale_skipped", reason="stale_version")
            tel.log(
                "skip_stale_version",
                reminder_id=reminder.id,
                message_version=version,
                version=reminder.version,
            )
            return _ack("stale_skipped")
        if state is DeliveryState.SENDING:
            lease_until = parse_iso(delivery.lease_until) if delivery.lease_until else now
            if lease_until > now:
                tel.count("lease_busy")
                tel.log("lease_busy", reminder_id=reminder.id, delivery_key=delivery.key)
                return self._later(msg, version, ctx, (lease_until - now).total_seconds() + 1, "lease_busy")
            new_lease = self._new_lease(now)
            res = self.store.claim_expired(reminder.id, msg.channel_id, delivery, self.worker, now, new_lease)
            if res.claimed and res.reminder is not None:
                tel.count("lease_expired")
                tel.log(
                    "lease_expired",
                    reminder_id=reminder.id,
                    delivery_key=delivery.key,
                    previous=delivery.lease_owner,
                )
                # The previous owner may have sent before it died. Its evidence goes into the
                # delivery now, so every write that ends this claim keeps it (the outcome's record,
                # a deferral, a give-back): a later 409 is confirmed by it, a correction refused.
                taken = res.reminder.deliveries[msg.channel_id]
                line = Attempt(
                    at=iso(now),
                    event="lease_expired",
                    detail=delivery.lease_owner or "",
                    dest=destination_tag(taken.destination),
                )
                deliveries = dict(res.reminder.deliveries)
                deliveries[msg.channel_id] = replace(taken, **add_history(taken, line))
                return ClaimResult(True, replace(res.reminder, deliveries=deliveries), lease_expired=True)
            return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "claim_race")
        if state in CLAIMABLE:
            if _copy_of_parked(delivery, ctx, now):
                tel.count("duplicate_suppressed", reason="parked")
                return _ack("parked_copy_dropped")
            wait = (not_before(reminder, delivery) - now).total_seconds()
            if wait > 0:
                tel.count("early_message")
                return self._later(msg, version, ctx, wait, "not_yet_due")
        return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "claim_race")

    # -- operator redrive --------------------------------------------------------------------
    def _redrive(self, msg: DeliveryMessage, attrs: dict[str, str], now: datetime) -> int:
        """A message back from the DLQ: start a fresh, bounded attempt cycle (recorded)."""
        for _ in range(SAVE_RETRIES):
            reminder = self.store.get(msg.reminder_id)
            if reminder is None or msg.channel_id not in reminder.deliveries:
                return msg.version
            d = reminder.deliveries[msg.channel_id]
            if not d.state.terminal and str(d.cycle - 1) == attrs.get("dl_cycle"):
                # This message's redrive already started the delivery's current cycle (its own
                # retry, a hand-back, a crash before the ack): it carries the DLQ message's version,
                # which a correction before the redrive made stale. The row is current: go on under it.
                return reminder.version
            if d.state is not DeliveryState.DEAD_LETTER or str(d.cycle) != attrs.get("dl_cycle"):
                return msg.version  # already redriven, or delivered: the claim decides
            if has_acceptance(d):
                # The provider accepted this key at this destination (a late send event, a stale
                # worker's 2xx): the redrive must not send it again. It was delivered.
                delivered = replace(
                    d,
                    state=DeliveryState.DELIVERED,
                    dlq_pending=False,
                    delivered_at=d.delivered_at or iso(now),
                    **add_history(
                        d,
                        Attempt(at=iso(now), event="redrive", decision="delivered", detail="accepted_before"),
                    ),
                )
                if self._save(reminder.id, delivered, d.rev):
                    self.telemetry.count("duplicate_suppressed", reason="redrive_of_accepted")
                    return reminder.version
                continue
            fresh = replace(
                d,
                state=DeliveryState.QUEUED,
                attempts=0,
                throttles=0,
                throttle_streak=0,
                cycle=d.cycle + 1,
                cycle_started_at=iso(now),
                next_attempt_at=None,
                lease_owner=None,
                lease_until=None,
                dead_letter_reason=None,
                dlq_pending=False,
                **add_history(d, Attempt(at=iso(now), event="redrive", detail=d.dead_letter_reason or "")),
            )
            # A watch entry first, so a lost redriven message is rescued (a crash in between leaves
            # an entry for a dead letter, which the watchdog ignores).
            self.store.move_index(
                reminder.id,
                watch_key(reminder.id, reminder.shard, now, reminder.account_id),
                version=reminder.version,
            )
            if self._save(reminder.id, fresh, d.rev):
                self.telemetry.count("redriven", reason=d.dead_letter_reason or "unknown")
                self.telemetry.log("redrive", reminder_id=reminder.id, delivery_key=d.key, cycle=fresh.cycle)
                return reminder.version
        return msg.version
