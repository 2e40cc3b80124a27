"""Delivery of one queue message: claim → attempt → record → hand-off.

- claim: one conditional write (or the judgement of why it did not happen: delivered, stale,
  someone else's live lease, not yet due); a claim whose answer was lost is recognised as ours.
- attempt: the provider call with the delivery's stable key, only if the send and its record fit
  the function's remaining time; classified by the versioned retry policy.
- record: one conditional write of the outcome; a write that landed but whose answer was lost is
  recognised as ours, a row that moved on meanwhile is merged without regressing it (and every
  provider acceptance is kept).
- hand-off: ack, or come back later by visibility (capped at what SQS accepts), or the DLQ.

The SQS message is acknowledged only after the outcome is persisted. A retry never sleeps: the
caller sets the message's visibility to the returned delay and reports the record as failed.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from urllib.parse import urlsplit

from ..domain.endpoints import implicit_endpoint_id, is_endpoint_id
from ..domain.errors import MalformedMessageError
from ..domain.health import EndpointHealth, EndpointState, failures_since
from ..domain.localtime import UnknownZoneError, zone
from ..domain.models import (
    MAYBE_ACCEPTED,
    Attempt,
    ChannelType,
    Delivery,
    Reminder,
    add_history,
    destination_tag,
    with_evidence,
)
from ..domain.policy import Gate, GateDecision, GateReason, decide_gate
from ..domain.ports import ClaimResult, Clock, OutMessage, Queues, ReminderStore, Rendered, Sender, Telemetry
from ..domain.ratelimit import GRANTED, DestinationLimiter, RateGrant, SharedRateLimiter
from ..domain.retry import (
    STEERING_DISABLE,
    Action,
    DeadLetterReason,
    Decision,
    OutcomeClass,
    RetryPolicy,
    SendResult,
    decide,
)
from ..domain.schedule import (
    DUE_ATTRIBUTE,
    PRE_CLAIM_WAIT_MAX_SECONDS,
    SQS_MAX_DELAY_SECONDS,
    iso,
    parse_iso,
    watch_key,
)
from ..domain.states import CLAIMABLE, DeliveryState
from ..domain.suppression import SuppressionEntry, SuppressionList
from ..domain.templates import RenderError
from ..domain.timing import DeliveryTiming, aws_call_worst_seconds, visibility_cap_seconds
from .health import Admission, Admit, EndpointHealthGuard
from .render import render

RACE_BACKOFF_SECONDS = 2  # lost a claim race against a claimable row: look again shortly
#: A parked delivery (its endpoint held) comes back as a fresh message with these attributes: the
#: endpoint, and the epoch second past which its deadline or maximum age ends it (judged by a claim).
PARKED_ENDPOINT_ATTRIBUTE = "ep"
#: The account of the parked delivery: the endpoint's health is read as that account's (issue 24).
PARKED_ACCOUNT_ATTRIBUTE = "acct"
PARKED_LIMIT_ATTRIBUTE = "lim"
PARK_MAX_SECONDS = 900  # SQS's longest DelaySeconds
PARKED_LEASE_ATTRIBUTE = "pu"  # the epoch second the row's ``parked_until`` lease ends (issue 25 item 6)
# A park's lease on the row (issue 25 item 6): ``parked_until`` is at most this far ahead (4x the
# longest park visibility), renewed by the live message within PARK_RENEW_AHEAD_SECONDS of its end, so
# the watchdog re-queues a parked delivery whose message is lost at most this + twice its lag (its
# re-check entry is filed a lag past the lease and read a lag behind now) + a run after the last renewal.
PARK_RENEW_SECONDS = 3600
PARK_RENEW_AHEAD_SECONDS = PARK_MAX_SECONDS + 60  # a live message is back at least once in this span
SAVE_RETRIES = 5
_ACCEPTED = frozenset({"accepted", "reconciled_conflict"})


_MICROSECOND = timedelta(microseconds=1)


def _forever() -> float:
    return math.inf


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
    #: Seconds the function has left (Lambda's context); no record starts that cannot finish.
    remaining_seconds: Callable[[], float] = field(default=_forever)
    #: Seconds since the invocation started (a monotonic count, whatever the service's clock): SQS
    #: caps a visibility at 12 h from *this* receive, which the record does not carry.
    seconds_since_invoked: Callable[[], float] = field(default=lambda: 0.0)
    #: How late the most overdue record of this record's batch was when the invocation started (by
    #: its ``due`` attribute): a second or more and the queue is behind (see ``_wait_until_due``).
    batch_behind_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordResult:
    """``ack`` True: delete the message. Otherwise set visibility and report a batch item failure."""

    ack: bool
    visibility_seconds: int = 0
    outcome: str = ""  # what happened, for tests and the local view


def destination_bucket(d: Delivery, account_id: str = "") -> str:
    """What a rate limit applies to: a webhook's endpoint (the one it names, or for a bare URL its
    account's implicit endpoint of that origin), or the email channel as a whole."""
    if d.type.value == "webhook":
        if is_endpoint_id(d.destination):
            return d.destination
        if account_id:
            return implicit_endpoint_id(account_id, d.destination)
        return "webhook:" + urlsplit(d.destination).netloc.lower()
    return "email"


def batch_behind_seconds(dues: Iterable[str | None], now: datetime) -> float:
    """How late a batch's most overdue record is by the ``due`` attributes of its records (0 if
    none is late; a record without a readable one is not counted)."""
    behind = 0.0
    for due in dues:
        if not due:
            continue
        try:
            behind = max(behind, (now - parse_iso(due)).total_seconds())
        except ValueError:
            continue
    return behind


def _ack(outcome: str) -> RecordResult:
    return RecordResult(True, 0, outcome)


def sent_to(d: Delivery, line: Attempt) -> bool:
    """Whether a history line concerns the delivery's current destination (lines written before
    destinations were tagged concern the only destination there was)."""
    return not line.dest or line.dest == destination_tag(d.destination)


def has_acceptance(d: Delivery) -> bool:
    """The provider's acceptance of this key at this destination is on record (our 2xx, a receiver's
    confirmed 409, a provider's own send event)."""
    return any(a.outcome in _ACCEPTED and sent_to(d, a) for a in d.history)


def may_have_been_accepted(d: Delivery) -> bool:
    """An earlier attempt of this key to this destination could have been accepted (the delivery's
    evidence summary, which history compaction never drops: ``Delivery.may_have_been_accepted``)."""
    return d.may_have_been_accepted(d.destination)


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
        limiter: DestinationLimiter | SharedRateLimiter | None = None,
        timing: DeliveryTiming | None = None,
        sleep: Callable[[float], None] | None = None,
        suppressions: SuppressionList | None = None,
        health: EndpointHealthGuard | None = None,
        endpoints: Callable[[str, str], object | None] | None = None,
        renderer: Callable[[Reminder, Delivery], Rendered] = render,
    ) -> None:
        self.store = store
        #: What is sent (issue 30: ``render.TemplateRenderer``, the account's template version).
        self.renderer = renderer
        self.health = health
        #: ``Endpoints.for_send(account_id, destination)`` (the sender's cached lookup): a delivery
        #: naming an endpoint its account does not own is neither counted in nor paced by that
        #: endpoint's health and rate (issue 24); the sender then refuses it (endpoint_not_found).
        self.endpoints = endpoints
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
        self.suppressions = suppressions
        self._last_lease = datetime.min.replace(tzinfo=UTC)
        # The records of one batch run in threads (handlers/delivery.py): the lease nonce, the rate
        # limiter's buckets and the random generator are shared by them and guarded by this lock.
        self._lock = threading.Lock()
        self.sleep: Callable[[float], None] = sleep or getattr(clock, "sleep", None) or time.sleep
        self.timing = timing or DeliveryTiming(
            attempt_deadline_seconds=policy.provider_timeout_seconds,
            lease_seconds=policy.lease_seconds,
            store_call_worst_seconds=aws_call_worst_seconds(),
        )

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
        res = self.store.claim(msg.reminder_id, msg.channel_id, version, self.worker, now, lease_until)
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
        cap = visibility_cap_seconds(ctx.seconds_since_invoked())
        return RecordResult(False, max(0, min(cap, math.ceil(seconds))), why)

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
                reminder.id, watch_key(reminder.id, reminder.shard, now), version=reminder.version
            )
            if self._save(reminder.id, fresh, d.rev):
                self.telemetry.count("redriven", reason=d.dead_letter_reason or "unknown")
                self.telemetry.log("redrive", reminder_id=reminder.id, delivery_key=d.key, cycle=fresh.cycle)
                return reminder.version
        return msg.version

    # -- the attempt ---------------------------------------------------------------------------
    def _attempt(
        self,
        reminder: Reminder,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
        now: datetime,
        *,
        taken_over: bool = False,
        leased: EndpointHealth | None = None,
    ) -> RecordResult:
        delivery = reminder.deliveries[msg.channel_id]
        started = parse_iso(delivery.cycle_started_at) if delivery.cycle_started_at else reminder.due_at
        age = (now - started).total_seconds()
        suppressed: SuppressionEntry | None = None
        held = bool(delivery.last_error) and (delivery.last_error or {}).get("class") == "configuration"
        if has_acceptance(delivery):
            # The provider's acceptance is already on record (a stale worker's 2xx, a send event
            # that arrived while the delivery was elsewhere): never send it again.
            result = SendResult(OutcomeClass.ACCEPTED, detail="accepted_before", receipt=delivery.receipt)
            decision = Decision(Action.DELIVER, spends_attempt=False)
        elif (gate := self._gate(reminder, now, started, held)).gate is Gate.DEAD_LETTER:
            # deliver_by passed, or the maximum age (a channel held by our own configuration never
            # dead-letters its reminders by age): no attempt starts.
            expired = gate.reason is GateReason.EXPIRED
            result = SendResult(OutcomeClass.TRANSIENT, detail="max_age_exceeded" if expired else gate.reason)
            reason = DeadLetterReason.EXPIRED if expired else DeadLetterReason.DEADLINE_PASSED
            decision = Decision(Action.DEAD_LETTER, reason=reason, spends_attempt=False)
        elif (suppressed := self._suppression(reminder, delivery)) is not None:
            # The address is on the account's suppression list (a hard bounce, a complaint, an
            # unsubscribe): end at once, unsent, no attempt spent (no waiting for a send window
            # either). A redrive comes here again.
            result = SendResult(OutcomeClass.PERMANENT, detail=DeadLetterReason.SUPPRESSED.value)
            decision = Decision(Action.DEAD_LETTER, reason=DeadLetterReason.SUPPRESSED, spends_attempt=False)
        elif gate.gate is Gate.DEFER:
            assert gate.until is not None
            return self._defer(reminder, delivery, msg, version, ctx, now, gate.until, gate.reason)
        else:
            endpoint = self._endpoint_of(reminder, delivery)
            admit: Admit | None = None
            own = (endpoint, reminder.account_id)
            if leased is not None and (leased.endpoint_id, leased.account_id) == own:
                admit = Admit(Admission.PROBE, health=leased)  # the lease is on this delivery's own item
            elif self.health is not None and endpoint:
                admit = self.health.admit(endpoint, reminder.account_id, now.timestamp())
            probe = admit.health if admit is not None and admit.kind is Admission.PROBE else None
            if admit is not None and admit.kind is Admission.PARK:
                assert admit.until is not None
                # At least a second ahead: a hold is a deferral (SQS visibility is whole seconds), and
                # an "until" at now (a probe in flight with no probe wait) must not read as "proceed",
                # which the branch below would take for a hold past the deadline.
                until = max(datetime.fromtimestamp(admit.until, UTC), now + timedelta(seconds=1))
                parked = self._gate(reminder, now, started, held, hold_until=until)
                if parked.gate is Gate.DEFER and parked.until is not None:
                    limit = self._limit(reminder, started)
                    return self._defer(
                        reminder,
                        delivery,
                        msg,
                        version,
                        ctx,
                        now,
                        parked.until,
                        parked.reason,
                        park=(endpoint, reminder.account_id, limit),
                    )
                # Held past the deadline or the maximum age: the hold counts toward them.
                expired = parked.reason is GateReason.EXPIRED
                result = SendResult(OutcomeClass.TRANSIENT, detail="endpoint_hold")
                reason = DeadLetterReason.EXPIRED if expired else DeadLetterReason.DEADLINE_PASSED
                decision = Decision(Action.DEAD_LETTER, reason=reason, spends_attempt=False)
            elif admit is not None and admit.kind is Admission.DISABLED:
                result = SendResult(OutcomeClass.PERMANENT, detail=DeadLetterReason.ENDPOINT_DISABLED.value)
                decision = Decision(
                    Action.DEAD_LETTER, reason=DeadLetterReason.ENDPOINT_DISABLED, spends_attempt=False
                )
            else:
                # One probe at a time is far inside any endpoint's rate: it does not queue for it.
                grant = (
                    GRANTED
                    if probe is not None
                    else self._rate_grant(delivery, now, reminder.account_id, endpoint)
                )
                if grant.reserved and ctx.remaining_seconds() - grant.wait >= self.timing.send_budget_seconds:
                    # The destination's next send slot is ours, under a second away: wait in the lane
                    # (a timer, not a retry) rather than give the claim back for whole seconds.
                    self.telemetry.count("rate_reserved", channel=delivery.type.value)
                    self.sleep(grant.wait)
                    now = self.clock.now()
                elif not grant.now:
                    return self._give_back(reminder, delivery, msg, version, ctx, grant.wait, "rate_limited")
                if not self._send_fits(ctx):
                    return self._give_back(reminder, delivery, msg, version, ctx, 0, "no_time_left")
                result, decision = self._send(
                    reminder, delivery, age, now, taken_over=taken_over, endpoint=endpoint, probe=probe
                )
        if suppressed is not None:
            updated = self._apply_suppressed(delivery, suppressed, self.clock.now())
        else:
            updated = self._apply(delivery, result, decision, self.clock.now())
        return self._record(reminder, delivery.rev, updated, result, decision, msg, version, ctx)

    # -- the gate: deadline > maximum age > endpoint hold > quiet hours (domain/policy.py) --------
    def _gate(
        self,
        reminder: Reminder,
        at: datetime,
        started: datetime,
        held: bool,
        hold_until: datetime | None = None,
    ) -> GateDecision:
        """May an attempt of ``reminder`` start at ``at``? (``held``: our configuration holds the
        channel, so no maximum age applies.)"""
        tz: tzinfo = UTC
        if reminder.send_window is not None and reminder.time_zone:
            try:
                tz = zone(reminder.time_zone)
            except UnknownZoneError:  # pragma: no cover - a zone a tzdata release dropped: UTC
                self.telemetry.log("unknown_time_zone", reminder_id=reminder.id)
        return decide_gate(
            at=at,
            cycle_started=started,
            max_age_seconds=None if held else self.policy.max_age_seconds,
            deliver_by=reminder.deliver_by,
            hold_until=hold_until,  # the endpoint's hold (issue 16): park until its next probe
            window=reminder.send_window,
            tz=tz,
        )

    def _defer(
        self,
        reminder: Reminder,
        d: Delivery,
        msg: DeliveryMessage,
        version: int,
        ctx: MessageContext,
        now: datetime,
        until: datetime,
        reason: GateReason,
        park: tuple[str, str, float] | None = None,
    ) -> RecordResult:
        """Outside the send window (or held): give the claim back unsent, no attempt spent, next
        attempt at ``until`` (the claim refuses it earlier), one history line. ``park`` (endpoint,
        limit): its endpoint is held; the message comes back as a fresh one naming the endpoint."""
        previous = DeliveryState.RETRYABLE if d.attempts or d.throttles else DeliveryState.QUEUED
        wait = (until - now).total_seconds()
        lease = None if park is None else _park_lease(now, park[-1])
        if park is not None:
            wait = float(min(PARK_MAX_SECONDS, max(1, math.ceil(wait))))
            until = now + timedelta(seconds=wait)
        line = Attempt(at=iso(now), event="defer", detail=reason.value, delay_seconds=round(wait, 3))
        released = replace(
            d,
            state=previous,
            lease_owner=None,
            lease_until=None,
            next_attempt_at=iso(until),
            parked_until=None if lease is None else iso(datetime.fromtimestamp(lease, UTC)),
            **add_history(d, line),
        )
        if not self._save(reminder.id, released, d.rev, lease_owner=self.worker, version=version):
            return self._later(msg, version, ctx, RACE_BACKOFF_SECONDS, "deferred_race")
        self.telemetry.count(f"deferred_{reason.value}", channel=d.type.value)
        self.telemetry.log(
            f"deferred_{reason.value}", reminder_id=reminder.id, delivery_key=d.key, until=iso(until)
        )
        if park is not None:
            assert lease is not None
            return self._park(msg, version, wait, park, ctx, lease)
        return self._later(msg, version, ctx, wait, f"deferred_{reason.value}")

    # -- endpoint holds (issue 16): parked deliveries --------------------------------------------
    def _endpoint_of(self, reminder: Reminder, d: Delivery) -> str:
        """The endpoint whose health and rate govern a webhook delivery: "" for email, and for a
        delivery naming an endpoint that is not its account's (or whose lookup failed now): the
        sender's own lookup then refuses it or reports the failure, and no endpoint counts it."""
        if d.type is not ChannelType.WEBHOOK:
            return ""
        if self.endpoints is not None and is_endpoint_id(d.destination):
            try:
                if self.endpoints(reminder.account_id, d.destination) is None:
                    return ""
            except Exception:
                return ""
        return destination_bucket(d, reminder.account_id)

    def _limit(self, reminder: Reminder, started: datetime) -> float:
        """The epoch second at which the deadline or the maximum age ends the delivery."""
        limit = started.timestamp() + self.policy.max_age_seconds
        if reminder.deliver_by is not None:
            limit = min(limit, reminder.deliver_by.timestamp())
        return limit

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

    def _send_fits(self, ctx: MessageContext) -> bool:
        """Checked immediately before the provider call (issue 25 item 10): the health and limiter
        calls since the claim took time, and a send that no longer fits with its record is handed
        back unsent (a held probe lease then expires; the next probe is due after it)."""
        return ctx.remaining_seconds() >= self.timing.send_budget_seconds

    def _suppression(self, reminder: Reminder, delivery: Delivery) -> SuppressionEntry | None:
        """The check point before an email send: the account's entry for this address and kind."""
        if self.suppressions is None or delivery.type is not ChannelType.EMAIL:
            return None
        return self.suppressions.find(reminder.account_id, delivery.destination, reminder.kind)

    def _apply_suppressed(self, d: Delivery, entry: SuppressionEntry, now: datetime) -> Delivery:
        """Dead letter ``suppressed``: a history line that is no attempt (nothing was sent)."""
        line = Attempt(
            at=iso(now),
            event="suppressed",
            decision=Action.DEAD_LETTER.value,
            detail=f"{entry.reason.value}@{entry.scope}",
            worker=self.worker,
        )
        return replace(
            d,
            state=DeliveryState.DEAD_LETTER,
            dead_letter_reason=DeadLetterReason.SUPPRESSED.value,
            dlq_pending=True,
            next_attempt_at=None,
            lease_owner=None,
            lease_until=None,
            last_error={"class": "suppressed", "status": None, "detail": entry.reason.value},
            **add_history(d, line),
        )

    def _send(
        self,
        reminder: Reminder,
        delivery: Delivery,
        age: float,
        now: datetime,
        *,
        taken_over: bool,
        endpoint: str = "",
        probe: EndpointHealth | None = None,
    ) -> tuple[SendResult, Decision]:
        """The provider call with the stable key, and the policy's decision about its outcome."""
        try:
            rendered: Rendered | None = self.renderer(reminder, delivery)
        except RenderError:  # the version cannot render this data: no send can succeed
            rendered = None
        if delivery.attempts == 0 and delivery.throttles == 0 and delivery.cycle == 0:
            self.telemetry.observe(
                "schedule_to_send_lateness_seconds", (now - reminder.due_at).total_seconds()
            )
        self.telemetry.log(
            "send", reminder_id=reminder.id, delivery_key=delivery.key, attempt=delivery.attempts + 1
        )
        result = (
            self.senders[delivery.type.value].send(delivery, reminder, rendered)
            if rendered is not None
            else SendResult(OutcomeClass.PERMANENT, detail="template_render_failed")
        )
        if (
            result.outcome is OutcomeClass.RECONCILED_CONFLICT
            and not taken_over
            and not may_have_been_accepted(delivery)
        ):
            # A 409 confirms an earlier acceptance only if an earlier attempt of this key to this
            # destination could have been accepted; a first attempt's 409 is the receiver's own error.
            result = replace(
                result, outcome=OutcomeClass.CONFLICT_UNCONFIRMED, receipt=None, detail="409_first_attempt"
            )
        resumed = (
            self.health.resumed_at(endpoint, reminder.account_id, now.timestamp())
            if self.health is not None and endpoint
            else None
        )
        with self._lock:  # the shared generator: one draw at a time
            decision = decide(
                result,
                attempts=delivery.attempts + (0 if probe is not None else 1),  # a probe spends none
                age_seconds=age,
                policy=self.policy,
                rng=self.rng,
                throttles=delivery.throttle_streak,  # issue 12: consecutive 429s grow their backoff
                # Issue 16: failures before its endpoint's resume do not grow the backoff.
                backoff_attempts=None if resumed is None else failures_since(delivery.history, resumed) + 1,
            )
        if self.health is not None and endpoint:
            decision = self._health_decision(reminder, endpoint, result, decision, probe)
        if decision.action is Action.RETRY and result.ambiguous and delivery.type is ChannelType.EMAIL:
            # SES has no idempotency key: after any outcome that may hide an acceptance (timeout,
            # 5xx, a connection closed after the request left) give its send event time to
            # reconcile before resending.
            wait = max(decision.delay_seconds, self.policy.unconfirmed_send_wait_seconds)
            decision = replace(decision, delay_seconds=wait)
        if decision.action in (Action.RETRY, Action.HOLD):
            # The same gate judges the retry's start: past the deadline it dead-letters now; inside
            # quiet hours it waits for the opening (no second claim to find the window closed).
            held = decision.action is Action.HOLD
            started = now - timedelta(seconds=age)
            retry_at = now + timedelta(seconds=decision.delay_seconds)
            gate = self._gate(reminder, retry_at, started, held)
            if gate.gate is Gate.DEAD_LETTER and gate.reason is GateReason.DEADLINE_PASSED:
                decision = Decision(
                    Action.DEAD_LETTER,
                    reason=DeadLetterReason.DEADLINE_PASSED,
                    spends_attempt=decision.spends_attempt,
                )
            elif gate.gate is Gate.DEFER and gate.until is not None:
                self.telemetry.count(f"deferred_{gate.reason.value}", channel=delivery.type.value)
                decision = replace(decision, delay_seconds=(gate.until - now).total_seconds())
        return result, decision

    def _health_decision(
        self,
        reminder: Reminder,
        endpoint: str,
        result: SendResult,
        decision: Decision,
        probe: EndpointHealth | None,
    ) -> Decision:
        """Tell the endpoint's health this outcome; a failure while it is held waits for the next
        probe without spending an attempt; ``webhook-delivery: disable`` dead-letters this delivery
        ``endpoint_disabled`` (its endpoint is disabled for an operator)."""
        assert self.health is not None
        done = self.clock.now().timestamp()
        h = self.health.observe(endpoint, reminder.account_id, result, done, probe)
        if result.steering == STEERING_DISABLE and decision.action is not Action.DELIVER:
            return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.ENDPOINT_DISABLED)
        if decision.action is not Action.RETRY or result.outcome is OutcomeClass.THROTTLED:
            return decision
        if h is not None and h.state is EndpointState.HELD:
            wait = max(1.0, h.park_until(done, self.health.policy) - done)
            if probe is not None:
                return replace(decision, delay_seconds=wait, spends_attempt=False)
            return replace(decision, delay_seconds=max(decision.delay_seconds, wait))
        if probe is not None:  # the probe's answer was lost to a concurrent change: no attempt spent
            return replace(decision, spends_attempt=False)
        return decision

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

    def _save(self, reminder_id: str, d: Delivery, expected_rev: int, **conditions: object) -> bool:
        """``save_delivery``, recognising our own write when its answer was lost: botocore retried the
        conditional update and the retry failed its own condition. The row then holds exactly what we
        wrote: revision + 1, the same state, lease and next attempt, its history ending with our line."""
        if self.store.save_delivery(reminder_id, d, expected_rev, **conditions):  # type: ignore[arg-type]
            return True
        current = self.store.get(reminder_id)
        cur = current.deliveries.get(d.channel_id) if current else None
        if cur is None or cur.rev != expected_rev + 1:
            return False
        same = (
            cur.state is d.state
            and cur.lease_owner == d.lease_owner
            and cur.lease_until == d.lease_until
            and cur.next_attempt_at == d.next_attempt_at
            and cur.dlq_pending == d.dlq_pending
            and cur.cycle == d.cycle
            and len(cur.history) == len(d.history)
            and (not d.history or _same_line(cur.history[-1], d.history[-1]))
        )
        if same:
            d.rev = cur.rev
            self.telemetry.count("own_write_recognised")
        return same

    def _rate_grant(self, d: Delivery, now: datetime, account_id: str = "", endpoint: str = "") -> RateGrant:
        """``endpoint``: the webhook delivery's own endpoint (:meth:`_endpoint_of`); "" for one naming
        an endpoint its account does not own (refused by the sender: it takes no slot of that one)."""
        if self.limiter is None:
            return GRANTED
        if d.type is ChannelType.WEBHOOK and is_endpoint_id(d.destination) and not endpoint:
            return GRANTED
        bucket = destination_bucket(d, account_id)
        if isinstance(self.limiter, SharedRateLimiter):  # its slots are thread-safe: no lock held
            return self.limiter.acquire(bucket, now.timestamp())  # across its conditional writes
        with self._lock:
            return RateGrant(self.limiter.acquire(bucket, now.timestamp()))

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

    def _apply(self, d: Delivery, result: SendResult, decision: Decision, now: datetime) -> Delivery:
        maybe_sent = result.outcome.value in MAYBE_ACCEPTED
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


def _park_lease(now: datetime, limit: float) -> float:
    """What a parking deferral writes as ``parked_until`` (epoch whole seconds): a lease of
    PARK_RENEW_SECONDS, never past the park's limit (its deadline or maximum age); any other
    deferral ends a park."""
    return float(min(math.ceil(limit), int(now.timestamp()) + PARK_RENEW_SECONDS))


def _still_parked_until(d: Delivery, decision: Decision) -> str | None:
    """An attempt keeps the park only when it was a failed probe of a held endpoint (a retry that
    spends no attempt: its message parks again by visibility, writing nothing)."""
    if decision.action is Action.RETRY and not decision.spends_attempt:
        return d.parked_until
    return None


def _same_line(a: Attempt, b: Attempt) -> bool:
    return (a.at, a.event, a.outcome, a.worker) == (b.at, b.event, b.outcome, b.worker)
