"""Delivery of one queue message: claim, send with the stable key, classify, record, then ack.

The SQS message is acknowledged only after the outcome is persisted. A retry never sleeps: the
caller sets the message's visibility to the returned delay and reports the record as failed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from ..domain.errors import MalformedMessageError
from ..domain.models import Attempt, ChannelType, Delivery, Reminder
from ..domain.ports import ClaimResult, Clock, OutMessage, Queues, ReminderStore, Sender, Telemetry
from ..domain.ratelimit import DestinationLimiter
from ..domain.retry import Action, DeadLetterReason, Decision, OutcomeClass, RetryPolicy, SendResult, decide
from ..domain.schedule import SQS_MAX_DELAY_SECONDS, iso, parse_iso, watch_key
from ..domain.states import CLAIMABLE, DeliveryState
from .render import render

MAX_VISIBILITY_SECONDS = 12 * 3600  # SQS ceiling for ChangeMessageVisibility
RACE_BACKOFF_SECONDS = 2  # lost a claim race against a claimable row: look again shortly
SAVE_RETRIES = 5


@dataclass(frozen=True, slots=True)
class DeliveryMessage:
    reminder_id: str
    channel_id: str
    version: int

    @classmethod
    def parse(cls, body: object) -> DeliveryMessage:
        if not isinstance(body, dict):
            raise MalformedMessageError("body is not a JSON object")
        try:
            rid, cid, version = body["reminder_id"], body["channel_id"], body["version"]
        except KeyError as exc:
            raise MalformedMessageError(f"missing {exc.args[0]}") from None
        if not (isinstance(rid, str) and isinstance(cid, str) and isinstance(version, int)):
            raise MalformedMessageError("reminder_id/channel_id must be strings, version an integer")
        return cls(rid, cid, version)


@dataclass(frozen=True, slots=True)
class MessageContext:
    message_id: str
    receipt_handle: str
    receive_count: int = 1
    attributes: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class RecordResult:
    """``ack`` True: delete the message. Otherwise set visibility and report a batch item failure."""

    ack: bool
    visibility_seconds: int = 0
    outcome: str = ""  # what happened, for tests and the local view


def destination_bucket(d: Delivery) -> str:
    """What a rate limit applies to: the webhook's host, or the email channel as a whole."""
    if d.type.value == "webhook":
        return "webhook:" + urlsplit(d.destination).netloc.lower()
    return "email"


def _ack(outcome: str) -> RecordResult:
    return RecordResult(True, 0, outcome)


def _later(seconds: float, outcome: str) -> RecordResult:
    return RecordResult(False, max(0, min(MAX_VISIBILITY_SECONDS, math.ceil(seconds))), outcome)


class Deliverer:
    """Use case: deliver one channel message. Ports are passed in; nothing global."""

    def __init__(
        self,
        *,
        store: ReminderStore,
        queues: Queues,
        senders: dict[str, Sender],
        clock: Clock,
        policy: RetryPolicy,
        telemetry: Telemetry,
        worker: str,
        max_receive_count: int = 20,
        rng: random.Random | None = None,
        limiter: DestinationLimiter | None = None,
    ) -> None:
        self.store = store
        self.queues = queues
        self.senders = senders
        self.clock = clock
        self.policy = policy
        self.telemetry = telemetry
        self.worker = worker
        # Hand a long-lived delivery a fresh message before SQS's backstop moves it to the DLQ.
        self.receive_budget = max(2, max_receive_count - 3)
        self.rng = rng or random.Random()
        self.limiter = limiter

    # -- entry point -------------------------------------------------------------------------
    def process(self, msg: DeliveryMessage, ctx: MessageContext) -> RecordResult:
        now = self.clock.now()
        version = msg.version
        attrs = ctx.attributes or {}
        if "dl_cycle" in attrs:
            version = self._redrive(msg, attrs, now)
        lease_until = now + timedelta(seconds=self.policy.lease_seconds)
        res = self.store.claim(msg.reminder_id, msg.channel_id, version, self.worker, now, lease_until)
        if not res.claimed:
            judged = self._judge_unclaimed(res.reminder, msg, version, ctx, now)
            if isinstance(judged, RecordResult):
                return judged
            res = judged
        assert res.reminder is not None
        return self._attempt(res.reminder, msg, version, ctx, now)

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
            new_lease = now + timedelta(seconds=self.policy.lease_seconds)
            res = self.store.claim_expired(reminder.id, msg.channel_id, delivery, self.worker, now, new_lease)
            if res.claimed:
                tel.count("lease_expired")
                tel.log(
                    "lease_expired",
                    reminder_id=reminder.id,
                    delivery_key=delivery.key,
                    previous=delivery.lease_owner,
                )
                return res
            return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "claim_race")
        if state in CLAIMABLE:
            not_before = reminder.due_at
            if delivery.next_attempt_at:
                not_before = max(not_before, parse_iso(delivery.next_attempt_at))
            wait = (not_before - now).total_seconds()
            if wait > 0:
                tel.count("early_message")
                return self._later(msg, version, ctx, wait, "not_yet_due")
        return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "claim_race")

    def _later(
        self, msg: DeliveryMessage, version: int, ctx: MessageContext, seconds: float, why: str
    ) -> RecordResult:
        """Come back in ``seconds``: by visibility, or by a fresh message when receives run short."""
        if ctx.receive_count >= self.receive_budget:
            delay = min(SQS_MAX_DELAY_SECONDS, math.ceil(seconds))
            self.queues.send(
                msg.channel_id.split("-")[0],
                [OutMessage(msg.reminder_id, msg.channel_id, version, delay_seconds=delay)],
            )
            self.telemetry.count("message_renewed")
            return _ack(f"{why}_renewed")
        return _later(seconds, why)

    # -- operator redrive --------------------------------------------------------------------
    def _redrive(self, msg: DeliveryMessage, attrs: dict[str, str], now: datetime) -> int:
        """A message back from the DLQ: start a fresh, bounded attempt cycle (recorded)."""
        for _ in range(SAVE_RETRIES):
            reminder = self.store.get(msg.reminder_id)
            if reminder is None or msg.channel_id not in reminder.deliveries:
                return msg.version
            d = reminder.deliveries[msg.channel_id]
            if d.state is not DeliveryState.DEAD_LETTER or str(d.cycle) != attrs.get("dl_cycle"):
                return msg.version  # already redriven, or delivered: the claim decides
            fresh = replace(
                d,
                state=DeliveryState.QUEUED,
                attempts=0,
                throttles=0,
                cycle=d.cycle + 1,
                cycle_started_at=iso(now),
                next_attempt_at=None,
                lease_owner=None,
                lease_until=None,
                dead_letter_reason=None,
                dlq_pending=False,
                history=[
                    *d.history,
                    Attempt(at=iso(now), event="redrive", detail=d.dead_letter_reason or ""),
                ],
            )
            # A watch entry first, so a lost redriven message is rescued (a crash in between leaves
            # an entry for a dead letter, which the watchdog ignores).
            self.store.move_index(
                reminder.id, watch_key(reminder.id, reminder.shard, now), version=reminder.version
            )
            if self.store.save_delivery(reminder.id, fresh, d.rev):
                self.telemetry.count("redriven", reason=d.dead_letter_reason or "unknown")
                self.telemetry.log("redrive", reminder_id=reminder.id, delivery_key=d.key, cycle=fresh.cycle)
                return reminder.version
        return msg.version

    # -- the attempt ---------------------------------------------------------------------------
    def _attempt(
        self, reminder: Reminder, msg: DeliveryMessage, version: int, ctx: MessageContext, now: datetime
    ) -> RecordResult:
        delivery = reminder.deliveries[msg.channel_id]
        claimed_rev = delivery.rev
        started = parse_iso(delivery.cycle_started_at) if delivery.cycle_started_at else reminder.due_at
        age = (now - started).total_seconds()
        held = bool(delivery.last_error) and (delivery.last_error or {}).get("class") == "configuration"
        if age > self.policy.max_age_seconds and not held:
            # (a channel held by our own configuration never dead-letters its reminders)
            result = SendResult(OutcomeClass.TRANSIENT, detail="max_age_exceeded")
            decision = Decision(Action.DEAD_LETTER, reason=DeadLetterReason.EXPIRED, spends_attempt=False)
        else:
            wait = self._rate_wait(delivery, now)
            if wait > 0:
                return self._yield_claim(reminder, delivery, msg, version, ctx, wait)
            rendered = render(reminder, delivery)
            if delivery.attempts == 0 and delivery.throttles == 0 and delivery.cycle == 0:
                self.telemetry.observe(
                    "schedule_to_send_lateness_seconds", (now - reminder.due_at).total_seconds()
                )
            self.telemetry.log(
                "send", reminder_id=reminder.id, delivery_key=delivery.key, attempt=delivery.attempts + 1
            )
            result = self.senders[delivery.type.value].send(delivery, reminder, rendered)
            decision = decide(
                result,
                attempts=delivery.attempts + 1,
                age_seconds=age,
                policy=self.policy,
                rng=self.rng,
            )
            if (
                decision.action is Action.RETRY
                and result.outcome is OutcomeClass.TIMEOUT
                and delivery.type is ChannelType.EMAIL
            ):
                # SES has no idempotency key: give its send event time to reconcile before resending.
                wait = max(decision.delay_seconds, self.policy.unconfirmed_send_wait_seconds)
                decision = replace(decision, delay_seconds=wait)
        done = self.clock.now()
        updated = self._apply(delivery, result, decision, done)
        for _ in range(SAVE_RETRIES):
            if self.store.save_delivery(
                reminder.id, updated, claimed_rev, lease_owner=self.worker, version=version
            ):
                return self._after_record(reminder, updated, result, decision, msg, version, ctx)
            # Lost the row while sending: cancelled, rescheduled, or a lease taken over.
            current = self.store.get(reminder.id)
            if current is None:
                return _ack("vanished")
            cur = current.deliveries[msg.channel_id]
            merged = self._merge_after_conflict(current, cur, updated, decision, done)
            if merged is None:
                self.telemetry.log(
                    "outcome_superseded", reminder_id=reminder.id, delivery_key=cur.key, state=cur.state
                )
                return _ack("superseded")
            if self.store.save_delivery(reminder.id, merged, cur.rev):
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

    def _rate_wait(self, d: Delivery, now: datetime) -> float:
        if self.limiter is None:
            return 0.0
        return self.limiter.acquire(destination_bucket(d), now.timestamp())

    def _yield_claim(
        self,
        reminder: Reminder,
        d: Delivery,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
        wait: float,
    ) -> RecordResult:
        """Over the destination's rate: give the claim back unchanged and come back when a token is due."""
        previous = DeliveryState.RETRYABLE if d.attempts or d.throttles else DeliveryState.QUEUED
        released = replace(d, state=previous, lease_owner=None, lease_until=None)
        if not self.store.save_delivery(
            reminder.id, released, d.rev, lease_owner=self.worker, version=version
        ):
            return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "rate_limited_race")
        self.telemetry.count("rate_limited", channel=d.type.value)
        return self._later(msg, version, ctx, wait, "rate_limited")

    def _apply(self, d: Delivery, result: SendResult, decision: Decision, now: datetime) -> Delivery:
        attempt = Attempt(
            at=iso(now),
            event="attempt",
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
        )
        new = replace(
            d,
            attempts=d.attempts + (1 if decision.spends_attempt else 0),
            throttles=d.throttles + (1 if result.outcome is OutcomeClass.THROTTLED else 0),
            lease_owner=None,
            lease_until=None,
            history=[*d.history, attempt],
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
        """Our attempt finished but the row moved on. Record the attempt truthfully, never regress."""
        attempt = mine.history[-1]
        if cur.state in (DeliveryState.DELIVERED, DeliveryState.DEAD_LETTER):
            return None
        if cur.state is DeliveryState.CANCELED:
            # Cancelled while sending: the attempt (even an acceptance, with its receipt) goes into
            # the history, but canceled is terminal and stays (TRANSITIONS has no exit from it).
            return replace(cur, lease_owner=None, lease_until=None, history=[*cur.history, attempt])
        if decision.action is Action.DELIVER:
            return replace(
                cur,
                state=DeliveryState.DELIVERED,
                receipt=mine.receipt,
                delivered_at=mine.delivered_at,
                lease_owner=None if cur.lease_owner in (None, self.worker) else cur.lease_owner,
                lease_until=None if cur.lease_owner in (None, self.worker) else cur.lease_until,
                next_attempt_at=None,
                history=[*cur.history, attempt],
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
        self.store.save_delivery(reminder.id, cleared, d.rev)
        self.telemetry.count("dead_lettered", reason=d.dead_letter_reason or "unknown")
        self.telemetry.log(
            "dead_lettered",
            reminder_id=reminder.id,
            delivery_key=d.key,
            reason=d.dead_letter_reason,
            attempts=d.attempts,
        )
