"""Hand-off: what becomes of the message once the delivery's row says what happened."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime

from ...domain.health import EndpointHealth
from ...domain.models import Delivery, Reminder
from ...domain.ports import OutMessage
from ...domain.retry import Action, DeadLetterReason, Decision, SendResult
from ...domain.schedule import SQS_MAX_DELAY_SECONDS
from ...domain.states import DeliveryState
from ...domain.timing import visibility_cap_seconds
from .base import DelivererBase
from .messages import (
    PARK_MAX_SECONDS,
    PARK_RENEW_AHEAD_SECONDS,
    PARKED_ACCOUNT_ATTRIBUTE,
    PARKED_ENDPOINT_ATTRIBUTE,
    PARKED_LEASE_ATTRIBUTE,
    PARKED_LIMIT_ATTRIBUTE,
    RACE_BACKOFF_SECONDS,
    DeliveryMessage,
    MessageContext,
    RecordResult,
    _ack,
)

_PARK_ATTRIBUTES = (
    PARKED_ENDPOINT_ATTRIBUTE,
    PARKED_ACCOUNT_ATTRIBUTE,
    PARKED_LIMIT_ATTRIBUTE,
    PARKED_LEASE_ATTRIBUTE,
)


class HandOffStep(DelivererBase):
    """Hand-off: ack, come back later by visibility (capped at what SQS accepts), park behind a held
    endpoint, hand back unfinished, or the DLQ."""

    def _later(
        self, msg: DeliveryMessage, version: int, ctx: MessageContext, seconds: float, why: str
    ) -> RecordResult:
        """Come back in ``seconds``: by visibility, or by a fresh message when receives run short."""
        if ctx.receive_count >= self.receive_budget:
            delay = min(SQS_MAX_DELAY_SECONDS, math.ceil(seconds))
            # A parked message's successor is the parked message: it names the park (its lease above
            # all), or the row, still parked under that lease, would refuse it as a copy.
            attrs = ctx.attributes or {}
            parked = {k: attrs[k] for k in _PARK_ATTRIBUTES if k in attrs}
            self.queues.send(
                msg.channel_id.split("-")[0],
                [
                    OutMessage(
                        msg.reminder_id, msg.channel_id, version, delay_seconds=delay, attributes=parked
                    )
                ],
            )
            self.telemetry.count("message_renewed")
            return _ack(f"{why}_renewed")
        cap = visibility_cap_seconds(ctx.seconds_since_invoked())
        return RecordResult(False, max(0, min(cap, math.ceil(seconds))), why)

    def _park(
        self,
        msg: DeliveryMessage,
        version: int,
        wait: float,
        park: tuple[str, str, float],
        ctx: MessageContext,
        lease: float,
    ) -> RecordResult:
        """Park a delivery of a held endpoint for ``wait`` seconds. A message that already names the
        endpoint comes back by visibility (like a retry: no new message, so duplicates cannot
        multiply with every probe interval); otherwise, or when its receives run short, a fresh
        message (DelaySeconds <= 900 s) naming the endpoint and the delivery's limit replaces it.
        Back while the endpoint is still held and no probe is due, it is parked again without
        touching the delivery's row (``_still_parked``). ``park``: (endpoint, account, limit); ``lease``:
        the row's ``parked_until`` (epoch seconds), named by the message — a renewed lease (a new
        ``parked_until`` written by a claim's ``defer``) takes a fresh message naming it."""
        endpoint, account_id, limit = park
        with self._lock:
            jitter = self.rng.random()
        delay = min(PARK_MAX_SECONDS, max(1, math.ceil(wait + jitter)))
        self.telemetry.count("endpoint_parked")
        attrs = ctx.attributes or {}
        parked_as = (attrs.get(PARKED_ENDPOINT_ATTRIBUTE), attrs.get(PARKED_ACCOUNT_ATTRIBUTE))
        named = parked_as == (endpoint, account_id)  # one parked before issue 24 is replaced (its account)
        named = named and attrs.get(PARKED_LEASE_ATTRIBUTE) == str(int(lease))
        if named and ctx.receive_count < self.receive_budget:
            cap = visibility_cap_seconds(ctx.seconds_since_invoked())
            return RecordResult(False, max(1, min(cap, delay)), "endpoint_parked")
        attributes = {
            PARKED_ENDPOINT_ATTRIBUTE: endpoint,
            PARKED_ACCOUNT_ATTRIBUTE: account_id,
            PARKED_LIMIT_ATTRIBUTE: str(int(limit)),
            PARKED_LEASE_ATTRIBUTE: str(int(lease)),
        }
        self.queues.send(
            msg.channel_id.split("-")[0],
            [
                OutMessage(
                    msg.reminder_id, msg.channel_id, version, delay_seconds=delay, attributes=attributes
                )
            ],
        )
        return _ack("endpoint_parked")

    def _still_parked(
        self, msg: DeliveryMessage, ctx: MessageContext, now: datetime
    ) -> RecordResult | EndpointHealth | None:
        """A parked message back, before any claim: parked again while its endpoint stays held and
        its deadline or maximum age is not reached; when a probe is due and this message wins its
        lease, the lease (the claim then sends the probe); None: the claim judges it as usual — also
        when the row's park lease (``pu``) ends within PARK_RENEW_AHEAD_SECONDS: the claim's
        ``defer`` then renews it and the message is replaced by one naming the new lease."""
        attrs = ctx.attributes or {}
        if self.health is None:
            return None
        try:
            limit = float(attrs.get(PARKED_LIMIT_ATTRIBUTE) or "inf")
            lease = float(attrs.get(PARKED_LEASE_ATTRIBUTE) or "-inf")
        except ValueError:
            return None
        endpoint = attrs[PARKED_ENDPOINT_ATTRIBUTE]
        account_id = attrs.get(PARKED_ACCOUNT_ATTRIBUTE, "")
        t = now.timestamp()
        if t >= limit or not account_id:  # parked with no account (before issue 24): a claim judges it
            return None
        if lease < limit and t >= lease - PARK_RENEW_AHEAD_SECONDS:  # the claim renews the row's lease
            return None
        kept = self.health.parked(endpoint, account_id, t)
        if kept is None or isinstance(kept, EndpointHealth):
            return kept
        if kept >= limit:
            return None
        return self._park(msg, msg.version, kept - t, (endpoint, account_id, limit), ctx, lease)

    def _give_back(
        self,
        reminder: Reminder,
        d: Delivery,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
        wait: float,
        why: str,
    ) -> RecordResult:
        """Give the claim back unsent and unchanged (over the destination's rate, or no time left to
        send and record) and come back in ``wait`` seconds. No attempt is spent."""
        previous = DeliveryState.RETRYABLE if d.attempts or d.throttles else DeliveryState.QUEUED
        released = replace(d, state=previous, lease_owner=None, lease_until=None)
        if not self._save(reminder.id, released, d.rev, lease_owner=self.worker, version=version):
            return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, f"{why}_race")
        if why == "rate_limited":
            self.telemetry.count("rate_limited", channel=d.type.value)
        else:
            self.telemetry.count("handed_back", reason=why)
            return RecordResult(False, 0, why)
        return self._later(msg, version, ctx, wait, why)

    def _after_record(
        self,
        reminder: Reminder,
        d: Delivery,
        result: SendResult,
        decision: Decision,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
    ) -> RecordResult:
        tel = self.telemetry
        if decision.action is Action.DELIVER:
            tel.count("delivered")  # one function per channel: the function is the channel
            tel.observe("attempts_to_deliver", d.attempts, unit="Count")
            tel.log(
                "delivered",
                reminder_id=reminder.id,
                delivery_key=d.key,
                outcome=result.outcome,
                status=result.status,
            )
            return _ack("delivered")
        if decision.action is Action.DEAD_LETTER:
            self._finish_dead_letter(reminder, d)
            if decision.reason is DeadLetterReason.SUPPRESSED:
                return _ack("suppressed")
            return _ack("dead_lettered")
        reason = result.outcome.value
        if decision.action is Action.HOLD:
            tel.count("configuration_hold", channel=d.type.value)
        tel.count("retry_scheduled", reason=reason)
        tel.log(
            "retry_scheduled",
            reminder_id=reminder.id,
            delivery_key=d.key,
            reason=reason,
            status=result.status,
            delay_seconds=round(decision.delay_seconds, 3),
            attempts=d.attempts,
        )
        return self._later(msg, version, ctx, decision.delay_seconds, "retry_scheduled")

    def _finish_dead_letter(self, reminder: Reminder, d: Delivery) -> None:
        last = d.last_error or {}
        self.queues.dead_letter(
            d.type.value,
            OutMessage(
                reminder.id,
                d.channel_id,
                reminder.version,
                attributes={
                    "reason": d.dead_letter_reason or "unknown",
                    "attempts": str(d.attempts),
                    "last_error": str(last.get("class") or ""),
                    "last_status": str(last.get("status") or ""),
                    "dl_cycle": str(d.cycle),
                    "delivery_key": d.key,
                },
            ),
        )
        cleared = replace(d, dlq_pending=False)
        self._save(reminder.id, cleared, d.rev)
        self.telemetry.count("dead_lettered", reason=d.dead_letter_reason or "unknown")
        self.telemetry.log(
            "dead_lettered",
            reminder_id=reminder.id,
            delivery_key=d.key,
            reason=d.dead_letter_reason,
            attempts=d.attempts,
        )
