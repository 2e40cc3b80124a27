"""Attempt: gate, pace and send one delivery with its stable key; classify the answer."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo

from ...domain.endpoints import is_endpoint_id
from ...domain.health import EndpointHealth, EndpointState, failures_since
from ...domain.localtime import UnknownZoneError, zone
from ...domain.models import Attempt, ChannelType, Delivery, Reminder, add_history
from ...domain.policy import Gate, GateDecision, GateReason, configuration_held, cycle_started, decide_gate
from ...domain.ports import Rendered
from ...domain.ratelimit import GRANTED, RateGrant, SharedRateLimiter
from ...domain.retry import (
    STEERING_DISABLE,
    Action,
    DeadLetterReason,
    Decision,
    OutcomeClass,
    SendResult,
    decide,
)
from ...domain.schedule import iso
from ...domain.states import DeliveryState
from ...domain.suppression import SuppressionEntry
from ...domain.templates import RenderError
from ..health import Admission, Admit
from .messages import (
    PARK_MAX_SECONDS,
    RACE_BACKOFF_SECONDS,
    DeliveryMessage,
    MessageContext,
    RecordResult,
    _park_lease,
    destination_bucket,
    has_acceptance,
    may_have_been_accepted,
)
from .record import RecordStep


class AttemptStep(RecordStep):
    """Attempt: the gate (deadline, maximum age, endpoint hold, quiet hours), the rate limit, then the
    provider call with the delivery's stable key, only if the send and its record fit the function's
    remaining time; classified by the versioned retry policy."""

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
        started = cycle_started(reminder.due_at, delivery.cycle_started_at)
        age = (now - started).total_seconds()
        suppressed: SuppressionEntry | None = None
        unsent = False  # the gate ended it before any attempt (issue 28 item 2): a "gate" line
        held = configuration_held(delivery.last_error)
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
            unsent = True
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
                unsent = True
            elif admit is not None and admit.kind is Admission.DISABLED:
                result = SendResult(OutcomeClass.PERMANENT, detail=DeadLetterReason.ENDPOINT_DISABLED.value)
                decision = Decision(
                    Action.DEAD_LETTER, reason=DeadLetterReason.ENDPOINT_DISABLED, spends_attempt=False
                )
                unsent = True  # nothing was sent: a "gate" line, as the preview's not_attempted says
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
            updated = self._apply(delivery, result, decision, self.clock.now(), unsent=unsent)
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
