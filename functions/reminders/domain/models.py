"""Plain domain records. No I/O; adapters map them to and from storage."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from .localtime import SendWindow
from .states import DeliveryState


class ChannelType(StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"


@dataclass(slots=True)
class Attempt:
    """One line of a delivery's audit trail (no bodies, no addresses)."""

    at: str  # ISO UTC
    event: str  # attempt | skip | redrive | cancel | watchdog | reschedule | lease_expired
    outcome: str = ""  # OutcomeClass value for attempts
    status: int | None = None
    decision: str = ""  # delivered | retry | hold | dead_letter | ...
    delay_seconds: float | None = None
    policy_version: str = ""
    receipt: str | None = None
    fingerprint: str = ""
    detail: str = ""
    worker: str = ""
    dest: str = ""  # destination_tag() of where an accepted or ambiguous send went (evidence scope)
    repeat: int = 0  # consecutive identical throttles folded into this line (0: just this one)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in _asdict(self).items() if v not in (None, "")}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Attempt:
        return cls(**{k: d[k] for k in d if k in cls.__slots__})


def _asdict(a: Attempt) -> dict[str, Any]:
    return {k: getattr(a, k) for k in a.__slots__}


@dataclass(slots=True)
class Delivery:
    """One channel of a reminder: its own key, state, budget and history."""

    channel_id: str  # "webhook-0", "email-0"
    type: ChannelType
    destination: str  # URL or email address (stored, never logged)
    key: str  # the stable idempotency key (webhook-id, SES tag)
    state: DeliveryState = DeliveryState.SCHEDULED
    attempts: int = 0  # budgeted attempts in the current cycle
    throttles: int = 0
    throttle_streak: int = 0  # 429s in a row (any other outcome resets it): grows the 429 backoff
    cycle: int = 0  # incremented by each operator redrive
    cycle_started_at: str | None = None
    lease_owner: str | None = None
    lease_until: str | None = None
    next_attempt_at: str | None = None
    last_error: dict[str, Any] | None = None
    receipt: str | None = None
    dead_letter_reason: str | None = None
    delivered_at: str | None = None
    dlq_pending: bool = False  # dead-lettered in the ledger, DLQ message not yet confirmed sent
    rev: int = 0  # optimistic-concurrency revision of this delivery (every write bumps it)
    history: list[Attempt] = field(default_factory=list)
    #: Lines dropped from the middle of a long history, counted by outcome (or event): the kept
    #: history is the first HISTORY_HEAD and the last HISTORY_TAIL lines (an item stays bounded).
    dropped: dict[str, int] = field(default_factory=dict)
    #: What the provider reported after accepting the send (``bounced``, ``complained``,
    #: ``rejected``): an annotation of the outcome, never a state change. None: nothing reported.
    feedback: str | None = None
    #: The receiver's standing receipt (``<p|r>|<event time>|<event id>``, domain/receipts.py): the
    #: order-insensitive merge of every signed receipt; never a state regression. None: none yet.
    receiver_receipt: str | None = None
    #: The evidence that decides behaviour (issue 25), apart from the display history and never
    #: compacted: the destination tags to which an attempt of this delivery's current key may have
    #: been accepted (an acceptance, a timeout, a transient error, an expired lease). The correction
    #: rule and the 409 reconcile rule read it. One short tag per destination (a correction of a
    #: flagged delivery needs an explicit resend, which starts a new key with none), so it stays small.
    maybe_accepted: list[str] = field(default_factory=list)
    #: Intentional resends (issue 25: ``PATCH`` with ``resend: true``): each one a new delivery
    #: generation with its own key (webhook-id); 0: the key as created.
    resend: int = 0

    #: Parked at a held endpoint (issue 25 item 6): its message comes back by visibility without
    #: writing the row, at the latest until this time (the deadline or the maximum age). The
    #: watchdog takes it for lost only after then. None: not parked.
    parked_until: str | None = None

    def may_have_been_accepted(self, destination: str | None = None) -> bool:
        """An attempt of this key to ``destination`` (None: to any destination) may have been
        accepted by the provider or receiver."""
        if destination is None:
            return bool(self.maybe_accepted)
        return destination_tag(destination) in self.maybe_accepted


#: Outcomes of an attempt after which the provider may hold the send although we did not see it
#: accepted (and the acceptances themselves).
MAYBE_ACCEPTED = frozenset({"accepted", "reconciled_conflict", "timeout", "transient"})


def evidence_tag(d: Delivery, line: Attempt) -> str | None:
    """The destination tag a history line is evidence for (an attempt of this key there may have
    been accepted), or None. Lines written before destinations were tagged concern the only
    destination there was: the delivery's own."""
    maybe = line.event == "lease_expired" or (
        line.event in ("attempt", "provider_event") and line.outcome in MAYBE_ACCEPTED
    )
    if not maybe:
        return None
    return line.dest or destination_tag(d.destination)


def with_evidence(d: Delivery, *tags: str | None) -> list[str]:
    """``d.maybe_accepted`` with ``tags`` added (sorted, each once)."""
    return sorted(set(d.maybe_accepted) | {t for t in tags if t})


#: A history keeps its first lines (how it started) and its last lines (what happens now).
HISTORY_HEAD = 2
HISTORY_TAIL = 8


def add_history(d: Delivery, line: Attempt) -> dict[str, Any]:
    """``history`` and ``dropped`` of ``d`` with ``line`` appended, compacted: a throttle that
    repeats the previous line folds into it (a counter, not a line per 429), and a history longer
    than HISTORY_HEAD + HISTORY_TAIL drops its oldest middle line into ``dropped``. Use as
    ``replace(d, ..., **add_history(d, line))``. A line that is evidence of a possible acceptance
    also sets its destination's flag in ``maybe_accepted``, which compaction never touches."""
    evidence = with_evidence(d, evidence_tag(d, line))
    history = list(d.history)
    dropped = dict(d.dropped)
    last = history[-1] if history else None
    if (
        last is not None
        and line.event == "attempt"
        and line.outcome == "throttled"
        and (last.event, last.outcome, last.status, last.decision)
        == ("attempt", "throttled", line.status, line.decision)
        and len(history) > HISTORY_HEAD
    ):
        history[-1] = replace(line, repeat=(last.repeat or 1) + 1)
        return {"history": history, "dropped": dropped, "maybe_accepted": evidence}
    history.append(line)
    while len(history) > HISTORY_HEAD + HISTORY_TAIL:
        gone = history.pop(HISTORY_HEAD)
        name = gone.outcome or gone.event
        dropped[name] = dropped.get(name, 0) + max(1, gone.repeat)
    return {"history": history, "dropped": dropped, "maybe_accepted": evidence}


def destination_tag(destination: str) -> str:
    """A short, non-reversible tag of a destination: scopes provider evidence to where it was sent."""
    return hashlib.sha256(destination.strip().lower().encode()).hexdigest()[:8]


@dataclass(slots=True)
class Reminder:
    id: str
    account_id: str
    key: str
    kind: str
    due_at: datetime
    template_id: str
    template_version: int
    data: dict[str, Any]
    version: int
    created_at: datetime
    fingerprint: str
    deliveries: dict[str, Delivery]
    shard: int = 0
    #: Local time (issue 17): the wall time as written (``2027-03-28T09:00``) and its IANA zone;
    #: ``due_at`` is then the instant they resolved to under the tzdata release ``tz_rules``.
    due_local: str | None = None
    time_zone: str | None = None  # also the send window's zone (UTC when absent)
    tz_rules: str | None = None
    send_window: SendWindow | None = None
    deliver_by: datetime | None = None  # no attempt starts at or after it (``deadline_passed``)
    #: The key generation (domain/retention.py): 0 for items written before generations.
    generation: int = 0
    #: Maximum age + retention period; 0 (items written before retention): never expires.
    retain_seconds: int = 0
    locale: str | None = None  # BCP 47, canonical: the locale its template renders in (issue 30)
    #: Whether its account had registered the template version it names when the create (or the
    #: last correction naming a version or data) was checked: every attempt renders by this record,
    #: so a version registered later never changes the bytes sent under a delivery key. None:
    #: stored before it was recorded (or made without the check): looked up at each send, as before.
    template_registered: bool | None = None
    #: Its dispatch entry's due-index sort key as stored (read only, never written from here): tagged,
    #: or untagged for an entry written before the account tag (issue 28 item 2). None for a
    #: watchdog entry, or when not read from a row.
    index_sort_key: str | None = field(default=None, compare=False)

    @property
    def state(self) -> str:
        """The reminder's summary state: the least advanced of its deliveries' states."""
        order = [
            DeliveryState.SENDING,
            DeliveryState.RETRYABLE,
            DeliveryState.QUEUED,
            DeliveryState.SCHEDULED,
            DeliveryState.DEAD_LETTER,
            DeliveryState.DELIVERED,
            DeliveryState.CANCELED,
        ]
        states = {d.state for d in self.deliveries.values()}
        for s in order:
            if s in states:
                return s.value
        return DeliveryState.CANCELED.value


def reminder_id(account_id: str, key: str) -> str:
    """Deterministic id of a logical reminder: one conditional put enforces key uniqueness."""
    digest = hashlib.sha256(f"{account_id}\x1f{key}".encode()).hexdigest()
    return f"rem_{digest[:32]}"


def delivery_key(account_id: str, key: str, channel_id: str, generation: int = 0, resend: int = 0) -> str:
    """The stable idempotency key of one channel delivery (webhook-id, SES tag, Message-ID).
    Generation 0 is the key as it always was; a later generation (a new life of the business key
    after the old one expired, domain/retention.py) gets a different key, and so does each
    intentional resend (issue 25)."""
    text = f"{account_id}\x1f{key}\x1f{channel_id}" + (f"\x1f{generation}" if generation else "")
    text += f"\x1fresend{resend}" if resend else ""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"dlv_{digest[:32]}"


def fingerprint(payload: dict[str, Any]) -> str:
    """Hash of a canonical JSON form: the same request always hashes the same."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def redact(value: str) -> str:
    """A stable, non-reversible handle for an address or URL in logs."""
    return "h_" + hashlib.sha256(value.encode()).hexdigest()[:12]
