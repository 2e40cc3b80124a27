"""Retry classification and policy: the control plane of delivery. Pure functions, no I/O.

A provider adapter turns whatever happened into a :class:`SendResult`; :func:`decide` turns that,
the delivery's history and the versioned :class:`RetryPolicy` into a :class:`Decision`.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum


class OutcomeClass(StrEnum):
    """What one attempt amounted to (the same words in history, metrics and logs)."""

    ACCEPTED = "accepted"  # 2xx
    RECONCILED_CONFLICT = "reconciled_conflict"  # 409 confirmed as an earlier acceptance
    CONFLICT_UNCONFIRMED = "conflict_unconfirmed"  # 409 nobody can confirm
    THROTTLED = "throttled"  # 429
    TRANSIENT = "transient"  # 408, 425, 5xx
    TIMEOUT = "timeout"  # read timeout: the provider may have accepted
    CONNECTION = "connection"  # refused/reset before the request was sent
    PERMANENT = "permanent"  # other 4xx
    INVALID_DESTINATION = "invalid_destination"  # malformed address/URL, SSRF-refused target
    CONFIGURATION = "configuration"  # our fault: missing secret, SES paused, sandbox


class Action(StrEnum):
    DELIVER = "delivered"
    RETRY = "retry"
    HOLD = "hold"  # configuration error: retry later without spending the budget
    DEAD_LETTER = "dead_letter"


class DeadLetterReason(StrEnum):
    """The bounded set of reasons (a metric dimension)."""

    PERMANENT = "permanent_failure"
    INVALID_DESTINATION = "invalid_destination"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    EXPIRED = "expired"
    CONFLICT_UNCONFIRMED = "conflict_unconfirmed"
    POISON = "poison_message"
    RECEIVER_ABORTED = "receiver_aborted"  # the receiver answered ``webhook-delivery: abort``
    DEADLINE_PASSED = "deadline_passed"  # deliver_by came before an attempt could start
    SUPPRESSED = "suppressed"  # the address is on the account's suppression list: never sent
    ENDPOINT_DISABLED = "endpoint_disabled"  # its endpoint is disabled (issue 16): redrive after enable


#: Receiver steering (``webhook-delivery`` response header of a non-2xx answer), documented for
#: receiver authors: ``abort`` ends this delivery as a dead letter (``receiver_aborted``);
#: ``disable`` disables its whole endpoint for an operator (``endpoint_disabled``, services/health.py).
STEERING_HEADER = "webhook-delivery"
STEERING_ABORT = "abort"
STEERING_DISABLE = "disable"


RETRYABLE_STATUSES = frozenset({408, 425, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class SendResult:
    """What a provider adapter observed. Never carries a body."""

    outcome: OutcomeClass
    status: int | None = None
    receipt: str | None = None
    retry_after_seconds: float | None = None
    detail: str = ""  # error class name or short provider code; no personal data
    fingerprint: str = ""  # hash of the exact request sent
    metadata: dict[str, str] = field(default_factory=dict)
    steering: str = ""  # the receiver's ``webhook-delivery`` instruction on a non-2xx answer
    #: The failure is on our side (an endpoint lookup, our resolver): it says nothing about the
    #: receiver, so it never counts against the endpoint's health (issue 25 item 9).
    ours: bool = False

    @property
    def ambiguous(self) -> bool:
        """True when the provider may have accepted although we did not see it."""
        return self.outcome in (OutcomeClass.TIMEOUT, OutcomeClass.TRANSIENT)


def classify_http(status: int) -> OutcomeClass:
    """Map an HTTP status of a provider answer to its outcome class (409 is reconciled later)."""
    if 200 <= status < 300:
        return OutcomeClass.ACCEPTED
    if status == 429:
        return OutcomeClass.THROTTLED
    if status in RETRYABLE_STATUSES:
        return OutcomeClass.TRANSIENT
    if status == 409:
        return OutcomeClass.CONFLICT_UNCONFIRMED
    if status >= 500:
        return OutcomeClass.TRANSIENT
    return OutcomeClass.PERMANENT


#: A Retry-After beyond this is read as this (the policy caps it further); keeps arithmetic finite.
RETRY_AFTER_MAX_SECONDS = 7 * 24 * 3600.0
_ASCII_DIGITS = frozenset("0123456789")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds (ASCII digits only, RFC 9110) or an
    HTTP-date; a date in the past is 0. Anything else -> None. Never raises, whatever the bytes
    (``"²".isdigit()`` is true and ``int("²")`` raises: digits are checked as ASCII)."""
    try:
        if not value:
            return None
        value = value.strip()
        if value and len(value) <= 32 and set(value) <= _ASCII_DIGITS:
            return min(RETRY_AFTER_MAX_SECONDS, float(int(value)))
        if len(value) > 64 or not value.isascii():
            return None
        when = parsedate_to_datetime(value)
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return min(RETRY_AFTER_MAX_SECONDS, max(0.0, (when - now).total_seconds()))
    except Exception:  # a malformed header is no Retry-After, never a crash of the consumer
        return None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """One versioned retry configuration; each attempt records ``version``.

    Adaptive (issue 16): a failed send retries fast (the first retry within ``base_seconds``,
    jittered), then each ceiling grows by ``multiplier`` (2, 4, 8, ... 128 s); the
    last budgeted attempt never starts before ``min_exhaust_seconds`` into the cycle, so no delivery
    dead-letters ``attempts_exhausted`` less than 15 minutes after its cycle began (a receiver
    down for 10 minutes still gets its one reminder). 429s keep their own base
    (``throttle_base_seconds``, issue 12).
    """

    # .2: adaptive (fast first retry, 8 attempts, 15-minute exhaust floor); .3: the ambiguous-email wait
    # 120 -> 30 s (issue 32.4)
    version: str = "2026-12-02.3"
    base_seconds: float = 2.0
    multiplier: float = 2.0
    cap_seconds: float = 3600.0
    max_attempts: int = 8
    min_exhaust_seconds: float = 900.0
    throttle_base_seconds: float = 2.0
    max_age_seconds: float = 24 * 3600.0
    retry_after_jitter_seconds: float = 5.0
    retry_after_cap_seconds: float = 12 * 3600.0  # SQS visibility ceiling
    hold_seconds: float = 300.0  # configuration errors: look again in 5 minutes
    lease_seconds: float = 60.0  # > provider timeout, < queue visibility timeout
    provider_timeout_seconds: float = 10.0
    #: After an ambiguous send to a provider without idempotency keys (SES: timeout after the
    #: request left), wait at least this long so the provider's send event can reconcile first.
    #: 30 s (issue 32.4): SES's event comes within ~20 s at p99 when it comes promptly; past that
    #: the late ones are EventBridge's retries (minutes to an hour), which 120 s did not wait out
    #: either (ses_latency.later_than: 2.4 % at 30 s, 2.1 % at 120 s), so each ambiguity now costs
    #: 30 s instead of 120 s for ~+0.005 % of duplicates (the curve: `make verify`, bench/email_residual.py).
    unconfirmed_send_wait_seconds: float = 30.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> RetryPolicy:
        """Overrides from ``REMINDERS_RETRY_*`` (local runs retry in seconds)."""
        env = dict(os.environ) if env is None else env
        d = cls()

        def num(name: str, default: float) -> float:
            raw = env.get(f"REMINDERS_RETRY_{name}")
            return float(raw) if raw not in (None, "") else default

        version = env.get("REMINDERS_RETRY_POLICY_VERSION") or d.version
        return cls(
            version=version,
            base_seconds=num("BASE_SECONDS", d.base_seconds),
            multiplier=num("MULTIPLIER", d.multiplier),
            cap_seconds=num("CAP_SECONDS", d.cap_seconds),
            max_attempts=int(num("MAX_ATTEMPTS", d.max_attempts)),
            min_exhaust_seconds=num("MIN_EXHAUST_SECONDS", d.min_exhaust_seconds),
            throttle_base_seconds=num("THROTTLE_BASE_SECONDS", d.throttle_base_seconds),
            max_age_seconds=num("MAX_AGE_SECONDS", d.max_age_seconds),
            retry_after_jitter_seconds=num("JITTER_SECONDS", d.retry_after_jitter_seconds),
            retry_after_cap_seconds=num("RETRY_AFTER_CAP_SECONDS", d.retry_after_cap_seconds),
            hold_seconds=num("HOLD_SECONDS", d.hold_seconds),
            lease_seconds=num("LEASE_SECONDS", d.lease_seconds),
            provider_timeout_seconds=num("PROVIDER_TIMEOUT_SECONDS", d.provider_timeout_seconds),
            unconfirmed_send_wait_seconds=num("UNCONFIRMED_WAIT_SECONDS", d.unconfirmed_send_wait_seconds),
        )

    def backoff(self, attempts: int, rng: random.Random | None = None) -> float:
        """The wait after the ``attempts``-th failed attempt: full jitter, capped, never under 1 s
        (no hot loop): U(0, c) with c = min(cap, base * multiplier**(n-1)). At the default policy
        the first retry comes 1-2 s after an isolated failure, then within 4, 8, 16, ... s."""
        exponent = max(0, min(attempts, 64) - 1)
        ceiling = min(self.cap_seconds, self.base_seconds * (self.multiplier**exponent))
        r = (rng or random).random()
        return max(1.0, r * ceiling)

    def throttle_backoff(self, consecutive: int, rng: random.Random | None = None) -> float:
        """The wait after the ``consecutive``-th 429 in a row that named no ``Retry-After``.

        429s spend no attempt, so the attempt count cannot grow this delay; the streak does. Equal
        jitter, capped: U(c/2, c) with c = min(cap, base * 2**(n-1)), so the floor doubles with each
        throttle in a row (a receiver that keeps answering 429 sees 30 s, 60 s, ... then one POST per
        30-60 min at the default policy, until the maximum age ends the delivery as ``expired``).
        """
        base = self.throttle_base_seconds
        ceiling = min(self.cap_seconds, base * (2 ** max(0, min(consecutive, 64) - 1)))
        r = (rng or random).random()
        return max(1.0, ceiling / 2 + r * ceiling / 2)


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    delay_seconds: float = 0.0
    reason: DeadLetterReason | None = None
    spends_attempt: bool = True


def decide(
    result: SendResult,
    *,
    attempts: int,
    age_seconds: float,
    policy: RetryPolicy,
    rng: random.Random | None = None,
    throttles: int = 0,
    backoff_attempts: int | None = None,
) -> Decision:
    """What to do after an attempt. ``attempts`` counts budgeted attempts including this one;
    ``throttles`` the 429s in a row before this attempt (the delivery's throttle streak);
    ``backoff_attempts`` the failed attempts the backoff grows with (default ``attempts``): after
    its endpoint resumed from a hold, those since the resume (issue 16: the outage's failures were
    the endpoint's, so the next failure is an isolated one and retries fast; the budget and the
    15-minute floor still count every attempt)."""
    o = result.outcome
    if o in (OutcomeClass.ACCEPTED, OutcomeClass.RECONCILED_CONFLICT):
        return Decision(Action.DELIVER)
    if result.steering == STEERING_ABORT:
        # The receiver answered (non-2xx) and asked us to stop: its word, not our budget.
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.RECEIVER_ABORTED)
    if o is OutcomeClass.CONFIGURATION:
        return Decision(Action.HOLD, delay_seconds=policy.hold_seconds, spends_attempt=False)
    if o is OutcomeClass.INVALID_DESTINATION:
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.INVALID_DESTINATION)
    if o is OutcomeClass.PERMANENT:
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.PERMANENT)
    if o is OutcomeClass.CONFLICT_UNCONFIRMED:
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.CONFLICT_UNCONFIRMED)
    # Retryable from here on.
    if o is OutcomeClass.THROTTLED:
        base = result.retry_after_seconds
        if base is None:
            delay = policy.throttle_backoff(throttles + 1, rng)
        else:
            delay = base + (rng or random).random() * policy.retry_after_jitter_seconds
        delay = min(delay, policy.retry_after_cap_seconds)
        if age_seconds + delay > policy.max_age_seconds:
            return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.EXPIRED, spends_attempt=False)
        return Decision(Action.RETRY, delay_seconds=delay, spends_attempt=False)
    if attempts >= policy.max_attempts:
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.ATTEMPTS_EXHAUSTED)
    delay = policy.backoff(attempts if backoff_attempts is None else min(attempts, backoff_attempts), rng)
    if attempts + 1 >= policy.max_attempts:
        # The next attempt is the last of the budget: not before min_exhaust_seconds into the cycle.
        delay = max(delay, policy.min_exhaust_seconds - age_seconds)
    if age_seconds + delay > policy.max_age_seconds:
        return Decision(Action.DEAD_LETTER, reason=DeadLetterReason.EXPIRED)
    return Decision(Action.RETRY, delay_seconds=delay)
