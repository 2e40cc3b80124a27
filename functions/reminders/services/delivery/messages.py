"""What a delivery message carries and answers, the constants of parking, and the facts read off a
delivery's history (acceptance on record) that every step shares."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ...domain.endpoints import implicit_endpoint_id, is_endpoint_id
from ...domain.errors import MalformedMessageError
from ...domain.models import Attempt, Delivery, destination_tag
from ...domain.retry import Action, Decision
from ...domain.schedule import iso, parse_iso

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


def destination_bucket(d: Delivery, account_id: str) -> str:
    """What a rate limit applies to: a webhook's endpoint (the one it names, or for a bare URL its
    account's implicit endpoint of that origin: never a bucket without its account), or the email
    channel as a whole (``runtime.rate_of`` gives it SES's quota)."""
    if d.type.value == "webhook":
        if is_endpoint_id(d.destination):
            return d.destination
        return implicit_endpoint_id(account_id, d.destination)
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


def _park_lease(now: datetime, limit: float) -> float:
    """What a parking deferral writes as ``parked_until`` (epoch whole seconds): a lease of
    PARK_RENEW_SECONDS, never past the park's limit (its deadline or maximum age); any other
    deferral ends a park."""
    return float(min(math.ceil(limit), int(now.timestamp()) + PARK_RENEW_SECONDS))


def _copy_of_parked(d: Delivery, ctx: MessageContext, now: datetime) -> bool:
    """The row is parked by another message (its lease ``parked_until`` ahead, named by that message's
    ``pu``): this one is a copy — an SQS duplicate, a re-send queued before the park — and ends (issue
    26). The parked message, or the watchdog once the lease has passed, carries the delivery on."""
    if not d.parked_until:
        return False
    lease = parse_iso(d.parked_until)
    if lease <= now:
        return False
    return (ctx.attributes or {}).get(PARKED_LEASE_ATTRIBUTE) != str(int(lease.timestamp()))


def named_park_lease(attrs: dict[str, str] | None) -> str | None:
    """The row's ``parked_until`` a message names (its ``pu``), as the row writes it; None if none."""
    try:
        return iso(datetime.fromtimestamp(int((attrs or {})[PARKED_LEASE_ATTRIBUTE]), UTC))
    except (KeyError, ValueError, OverflowError, OSError):
        return None


def _still_parked_until(d: Delivery, decision: Decision) -> str | None:
    """An attempt keeps the park only when it was a failed probe of a held endpoint (a retry that
    spends no attempt: its message parks again by visibility, writing nothing)."""
    if decision.action is Action.RETRY and not decision.spends_attempt:
        return d.parked_until
    return None


def _same_line(a: Attempt, b: Attempt) -> bool:
    return (a.at, a.event, a.outcome, a.worker) == (b.at, b.event, b.outcome, b.worker)
