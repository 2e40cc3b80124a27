"""Delivery of one queue message: claim → attempt → record → hand-off.

- claim: one conditional write (or the judgement of why it did not happen: delivered, stale,
  someone else's live lease, not yet due); a claim whose answer was lost is recognised as ours.
- attempt: the provider call with the delivery's stable key, only if the send and its record fit
  the function's remaining time; classified by the versioned retry policy.
- record: one conditional write of the outcome; a write that landed but whose answer was lost is
  recognised as ours, a row that moved on meanwhile is merged without regressing it (and every
  provider acceptance is kept).
- hand-off: ack, or come back later by visibility (capped at what SQS accepts), or the DLQ.

Each step is a module of services/delivery/ (claim.py, attempt.py, record.py, handoff.py);
``Deliverer`` here composes them.

The SQS message is acknowledged only after the outcome is persisted. A retry never sleeps: the
caller sets the message's visibility to the returned delay and reports the record as failed.
"""

from __future__ import annotations

from ..domain.health import EndpointHealth
from ..domain.ports import ClaimResult
from ..domain.schedule import DUE_ATTRIBUTE
from .delivery.attempt import AttemptStep
from .delivery.claim import ClaimStep
from .delivery.messages import (
    PARK_MAX_SECONDS,
    PARK_RENEW_AHEAD_SECONDS,
    PARK_RENEW_SECONDS,
    PARKED_ACCOUNT_ATTRIBUTE,
    PARKED_ENDPOINT_ATTRIBUTE,
    PARKED_LEASE_ATTRIBUTE,
    PARKED_LIMIT_ATTRIBUTE,
    RACE_BACKOFF_SECONDS,
    SAVE_RETRIES,
    DeliveryMessage,
    MessageContext,
    RecordResult,
    batch_behind_seconds,
    destination_bucket,
    has_acceptance,
    may_have_been_accepted,
    named_park_lease,
    sent_to,
)

__all__ = [
    "PARKED_ACCOUNT_ATTRIBUTE",
    "PARKED_ENDPOINT_ATTRIBUTE",
    "PARKED_LEASE_ATTRIBUTE",
    "PARKED_LIMIT_ATTRIBUTE",
    "PARK_MAX_SECONDS",
    "PARK_RENEW_AHEAD_SECONDS",
    "PARK_RENEW_SECONDS",
    "RACE_BACKOFF_SECONDS",
    "SAVE_RETRIES",
    "Deliverer",
    "DeliveryMessage",
    "MessageContext",
    "RecordResult",
    "batch_behind_seconds",
    "destination_bucket",
    "has_acceptance",
    "may_have_been_accepted",
    "sent_to",
]


class Deliverer(ClaimStep, AttemptStep):
    """Use case: deliver one channel message. Ports are passed in; nothing global. Each step is a unit
    of services/delivery/ (claim, attempt, record, hand-off); ``process`` runs them in order."""

    # -- entry point -------------------------------------------------------------------------
    def process(self, msg: DeliveryMessage, ctx: MessageContext) -> RecordResult:
        if ctx.remaining_seconds() < self.timing.record_budget_seconds:
            # The claim, the send and its record might not finish before the function is stopped:
            # hand the message back at once (visibility 0) for another invocation.
            self.telemetry.count("handed_back", reason="no_time_left")
            return RecordResult(False, 0, "no_time_left")
        now = self.clock.now()
        version = msg.version
        attrs = ctx.attributes or {}
        leased: EndpointHealth | None = None  # the probe lease a parked message took before its claim
        if "dl_cycle" in attrs:
            version = self._redrive(msg, attrs, now)
        elif PARKED_ENDPOINT_ATTRIBUTE in attrs:
            kept = self._still_parked(msg, ctx, now)
            if isinstance(kept, RecordResult):
                return kept
            leased = kept
        elif DUE_ATTRIBUTE in attrs:
            waited = self._wait_until_due(attrs[DUE_ATTRIBUTE], now, ctx, msg, version)
            if isinstance(waited, RecordResult):
                return waited
            now = waited
        lease_until = self._new_lease(now)
        # A row parked under another message's lease refuses the claim (its copy ends as judged below).
        parked_lease = named_park_lease(attrs)
        res = self.store.claim(
            msg.reminder_id, msg.channel_id, version, self.worker, now, lease_until, parked_lease=parked_lease
        )
        taken_over = False
        if not res.claimed and self._own_claim(res.reminder, msg.channel_id, lease_until):
            res = ClaimResult(True, res.reminder)  # our claim landed; its answer was lost
        if not res.claimed:
            judged = self._judge_unclaimed(res.reminder, msg, version, ctx, now)
            if isinstance(judged, RecordResult):
                return judged
            res, taken_over = judged, True
        assert res.reminder is not None
        if ctx.remaining_seconds() < self.timing.send_budget_seconds:
            d = res.reminder.deliveries[msg.channel_id]
            return self._give_back(res.reminder, d, msg, version, ctx, 0, "no_time_left")
        return self._attempt(res.reminder, msg, version, ctx, now, taken_over=taken_over, leased=leased)
