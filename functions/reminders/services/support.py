"""The support desk's read-only views: what fires in the next minutes (``preview``) and the
explanation of one reminder (``explain``). Neither changes anything.

``explain`` works on the API's JSON view of a reminder (``GET /reminders/{id}``), so the CLI gives
the same answer whether it read the table (codec-decoded) or the API of a deployed stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from ..domain.health import EndpointHealth, EndpointState
from ..domain.listing import MAX_PREVIEW_MINUTES as MAX_PREVIEW_MINUTES  # its old home: the CLI, docs
from ..domain.localtime import UnknownZoneError, zone
from ..domain.models import ChannelType, Delivery, Reminder
from ..domain.outlook import Next, outlook
from ..domain.ports import ReminderStore
from ..domain.retention import expires_at
from ..domain.retry import RetryPolicy
from ..domain.schedule import (
    BUCKET_SECONDS,
    SHARD_HIGH_WATER,
    WHOLE_BUCKET,
    account_range,
    bucket_of,
    bucket_start,
    index_pk,
    iso,
    next_bucket,
    sk_due,
)
from .deliver import PARK_RENEW_SECONDS, destination_bucket
from .dispatch import WATCH_LAG_SECONDS
from .health import EndpointHealthGuard

FIRST_IDS = 5
PAGE = 500
#: An account's preview (issue 28 item 1) reads the due index from the watchdog's lag and this much
#: more before now (an entry the watchdog has not yet moved past a delivery's due time, or its
#: retry's) to the lag and a bucket past the horizon, and watch entries on to an hour, the lag and
#: a bucket past now (a park's lease: PARK_RENEW_SECONDS) (this build files a deferred or retrying
#: delivery's re-check entry at its next attempt; the build before issue 26's fix, ``watch_lag``
#: past it, and its entries stay until the watchdog reads them), and reads at most
#: MAX_PREVIEW_ROWS reminder rows (a page: ``truncated`` says it stopped there).
LOOKBACK_MARGIN_SECONDS = 2 * BUCKET_SECONDS
MAX_PREVIEW_ROWS = 1000
#: An account's preview drops the rows of another account whose tag collides with its own (80 bits
#: since helper h28t: a targeted collision is out of reach, a chance one needs ~2^40 accounts; with
#: the previous build's 40 bits one was brute-forced in seconds, issue 28, review rev28b): it reads
#: at most this many such rows, then says ``truncated``. Only the account's own rows count toward
#: ``max_rows``.
MAX_COLLIDING_ROWS = MAX_PREVIEW_ROWS
#: How far back an account's preview follows a dispatcher or watchdog that runs behind (issue 28
#: item 1): one due-index query per minute and shard, so six hours is 360 x shards queries at most.
MAX_LOOKBACK_SECONDS = 6 * 3600
#: The due-index queries one account's preview may issue (issue 28, review): ~16 s at 8 ms a query
#: (bench/LATENCY_MODEL.md), under API Gateway's 29 s. The window's minutes are read first (at 16
#: shards, 60 minutes and the watchdog's lag on either side take ~1,500), then the minutes a lagging
#: dispatcher or watchdog has not passed; where the budget ends the answer says ``truncated``.
MAX_PREVIEW_QUERIES = 2000
#: What every account's preview counts (it reads no reminder row, so it cannot apply the rules).
DUE_INDEX_ENTRIES = "due_index_entries"
#: What an account's preview lists: the consumer's rules applied to each of its deliveries.
CONSUMER_RULES = "consumer_rules"


def preview(
    store: ReminderStore,
    now: datetime,
    minutes: int,
    shards: int,
    *,
    account_id: str | None = None,
    first: int = FIRST_IDS,
    in_flight: Callable[[], dict[str, dict[str, int]]] | None = None,
    max_age_seconds: float = RetryPolicy().max_age_seconds,
    health: EndpointHealthGuard | None = None,
    max_rows: int = MAX_PREVIEW_ROWS,
    watch_lag_seconds: float = WATCH_LAG_SECONDS,
) -> dict[str, Any]:
    """Every account's preview (``account_id`` None): :func:`index_preview`, the due index's counts.
    An account's: :func:`account_preview`, the consumer's rules applied to its deliveries
    (``max_age_seconds``: the consumer's retry policy's; ``health``: its endpoints' holds)."""
    if account_id is None:
        return index_preview(store, now, minutes, shards, first=first, in_flight=in_flight)
    return account_preview(
        store,
        now,
        minutes,
        shards,
        account_id,
        max_age_seconds=max_age_seconds,
        health=health,
        max_rows=max_rows,
        watch_lag_seconds=watch_lag_seconds,
    )


def index_preview(
    store: ReminderStore,
    now: datetime,
    minutes: int,
    shards: int,
    *,
    first: int = FIRST_IDS,
    in_flight: Callable[[], dict[str, dict[str, int]]] | None = None,
) -> dict[str, Any]:
    """Every account's preview (the caller must be the all-accounts principal): counts per minute
    and channel of the due index's entries in [now, now + minutes), labelled as such (entries, not
    what will be attempted: that needs the rows), and the first ids. Reads one due-index query per
    minute bucket and shard (pages of ``PAGE`` entries) and the controls item, never a reminder row;
    ``in_flight`` adds the channel queues' own counts (two ``GetQueueAttributes``)."""
    shards = max(shards, int(store.get_controls().get(SHARD_HIGH_WATER, 0) or 0))
    until = now + timedelta(minutes=minutes)
    per_minute: dict[str, dict[str, int]] = {}
    ids: list[str] = []
    totals = {"to_dispatch": 0, "in_sqs": 0}
    bucket = bucket_of(now)
    end = iso(until)
    while bucket_start(bucket) < until:
        found: list[tuple[str, str, tuple[str, ...], bool]] = []
        for shard in range(shards):
            after = ""
            while True:  # the whole minute (its entries sort by account first)
                entries, more = store.query_index(index_pk(bucket, shard), after, WHOLE_BUCKET, PAGE)
                found += [(sk_due(e.sort_key), e.reminder_id, e.channels, e.watch) for e in entries]
                if not more or not entries:
                    break
                after = entries[-1].sort_key
        for due, rid, channels, watch in sorted(found):
            if not iso(now) <= due <= end:
                continue
            minute = due[:16] + "Z"
            row = per_minute.setdefault(minute, {})
            for cid in channels:
                kind = cid.split("-")[0] + (":in_sqs" if watch else "")
                row[kind] = row.get(kind, 0) + 1
            totals["in_sqs" if watch else "to_dispatch"] += 1
            if len(ids) < first:
                ids.append(rid)
        bucket = next_bucket(bucket)
    out: dict[str, Any] = {
        "from": iso(now),
        "until": end,
        "minutes": minutes,
        "account_id": None,
        "counts_of": DUE_INDEX_ENTRIES,
        "per_minute": dict(sorted(per_minute.items())),
        "totals": totals,
        "first_ids": ids,
    }
    if in_flight is not None:
        out["queues"] = in_flight()
    return out


def account_preview(
    store: ReminderStore,
    now: datetime,
    minutes: int,
    shards: int,
    account_id: str,
    *,
    max_age_seconds: float,
    health: EndpointHealthGuard | None = None,
    max_rows: int = MAX_PREVIEW_ROWS,
    watch_lag_seconds: float = WATCH_LAG_SECONDS,
    max_queries: int = MAX_PREVIEW_QUERIES,
) -> dict[str, Any]:
    """What the consumer will attempt for ``account_id`` in [now, now + minutes), and when, by its
    own rules (domain/outlook.py): each delivery's next attempt with the reason it moved from its due
    time (``attempts``); those whose endpoint is held, which a probe may take (``may_attempt``);
    those the gate will dead-letter unsent in the horizon (``not_attempted``, with the reason). A
    cancelled, delivered or dead-lettered delivery is in none.

    Found through the due index from the watchdog's lag and LOOKBACK_MARGIN_SECONDS before now (or
    from where a shard's dispatcher or watchdog still is, when it runs behind) to the lag and a
    bucket past the horizon — and on to a park's longest lease (an hour), the lag and a bucket past
    now, the watch entries only (a parked delivery's entry sits at its lease's end while its endpoint's probe
    may take it sooner: the explorer's seeds 16 and 40) — each minute's partition read in the
    account's own key
    range (its tag leads the sort key): no other account's entry or row is read, whatever its
    volume, but for an account whose tag collides. The rows it names are read (at most
    ``max_rows`` of the account's own, ``truncated`` when it stopped there); a row of another
    account whose tag collides is dropped and does not count (at most MAX_COLLIDING_ROWS such
    reads, then ``truncated``). At most ``max_queries`` due-index queries: the window's minutes
    first, then those behind it, oldest first (and the rows they name), then the parks' minutes;
    ``truncated`` when it stopped there. Reads only."""
    shards = max(shards, int(store.get_controls().get(SHARD_HIGH_WATER, 0) or 0))
    until = now + timedelta(minutes=minutes)
    # Behind by more than MAX_LOOKBACK_SECONDS: read from there and say the answer may miss some.
    bucket, behind = _first_bucket(store, now, shards, watch_lag_seconds)
    truncated = False
    # The window's minutes first (every entry), then those a lagging dispatcher or watchdog has not
    # passed (every entry), then a parked delivery's (watch entries only, to an hour and a lag past now).
    window = bucket_of(now - timedelta(seconds=watch_lag_seconds + LOOKBACK_MARGIN_SECONDS))
    ahead = _buckets(max(bucket, window), until + timedelta(seconds=watch_lag_seconds + BUCKET_SECONDS))
    # A parked delivery's watch entry sits at its park's lease end, up to PARK_RENEW_SECONDS from the
    # park (so from now), while its endpoint's probe may take it sooner (the explorer's seeds 16 and
    # 40): past the window only watch entries can name a delivery attempted in it (a dispatch entry
    # there is due after it), so only their rows are read. A lag further: the build before issue
    # 26's fix filed a park's re-check entry a watch lag past its lease's end (review rev28g).
    parks_end = now + timedelta(seconds=PARK_RENEW_SECONDS + watch_lag_seconds + BUCKET_SECONDS)
    parks = _buckets(max(bucket, window), parks_end)
    parks = parks[len(ahead) :]
    lagging = _buckets(bucket, bucket_start(window))
    queries = 0
    after_tag, until_tag = account_range(account_id)
    rows: list[Reminder] = []
    seen: dict[str, int] = {}  # reminder id -> its place in the index's order
    pending: list[str] = []  # ids of the range's entries whose row is not read yet
    foreign = 0  # rows of a colliding account (same tag) read and dropped

    def settle() -> bool:
        """Read the pending rows; keep the account's own. True: the page is full (or the colliding
        account's reads hit their bound) and the answer is cut."""
        nonlocal foreign
        for i in range(0, len(pending), 100):  # in the index's order: stop once the page is full
            if len(rows) > max_rows or foreign > MAX_COLLIDING_ROWS:
                break
            for r in store.batch_get(pending[i : i + 100]):
                if r.account_id == account_id:
                    rows.append(r)
                else:
                    foreign += 1
        pending.clear()
        return len(rows) > max_rows or foreign > MAX_COLLIDING_ROWS

    def read(buckets: list[str], *, watch_only: bool = False) -> None:
        nonlocal queries, truncated
        for bucket in buckets:
            for shard in range(shards):
                after = after_tag
                while not truncated:
                    if queries >= max_queries:
                        truncated = True  # the budget is spent: say the answer may miss some
                        break
                    queries += 1
                    entries, more = store.query_index(index_pk(bucket, shard), after, until_tag, PAGE)
                    for e in entries:
                        if e.reminder_id not in seen and (e.watch or not watch_only):
                            seen[e.reminder_id] = len(seen)
                            pending.append(e.reminder_id)
                    if len(rows) + len(pending) > max_rows:
                        truncated = settle()
                    if not more or not entries:
                        break
                    after = entries[-1].sort_key

    read(ahead)
    read(lagging)
    # The rows these name are read now, before the parks' minutes (up to ~90 x shards queries: a
    # slow index would otherwise let the window's reminders be sent before their rows were read).
    truncated = settle() or truncated
    read(parks, watch_only=True)
    truncated = settle() or truncated
    rows.sort(key=lambda r: seen[r.id])  # BatchGetItem answers in any order
    del rows[max_rows:]
    attempts: list[dict[str, Any]] = []
    may: list[dict[str, Any]] = []
    dead: list[dict[str, Any]] = []
    health_read: dict[tuple[str, str], EndpointHealth | None] = {}
    for r in rows:
        tz = _window_zone(r)
        for cid, d in r.deliveries.items():
            h = _endpoint_health(health, r, d, now, health_read)
            hold_until = None
            if health is not None and h is not None and h.state is EndpointState.HELD:
                # As the consumer parks it: until the endpoint's next probe.
                hold_until = datetime.fromtimestamp(h.park_until(now.timestamp(), health.policy), UTC)
            o = outlook(r, d, now, max_age_seconds=max_age_seconds, tz=tz, hold_until=hold_until)
            if o.next is Next.ATTEMPT and h is not None and h.state is EndpointState.DISABLED:
                # The consumer dead-letters it unsent when it comes to send it (endpoint_disabled).
                o = replace(o, next=Next.DEAD_LETTER, reason="endpoint_disabled")
            if o.at is None or not (now <= o.at < until) or o.next in (Next.NONE, Next.IN_FLIGHT):
                continue
            line = {
                "at": iso(o.at),
                "reminder_id": r.id,
                "channel_id": cid,
                "reason": o.reason,
                "shifted_from": iso(o.shifted_from) if o.shifted_from else None,
            }
            {Next.ATTEMPT: attempts, Next.MAY_ATTEMPT: may, Next.DEAD_LETTER: dead}[o.next].append(line)
    for group in (attempts, may, dead):
        group.sort(key=lambda x: (x["at"], x["reminder_id"], x["channel_id"]))
    per_minute: dict[str, dict[str, int]] = {}
    for a in attempts:
        row = per_minute.setdefault(a["at"][:16] + "Z", {})
        kind = a["channel_id"].split("-")[0]
        row[kind] = row.get(kind, 0) + 1
    return {
        "from": iso(now),
        "until": iso(until),
        "minutes": minutes,
        "account_id": account_id,
        "counts_of": CONSUMER_RULES,
        "per_minute": dict(sorted(per_minute.items())),
        "totals": {"attempts": len(attempts), "may_attempt": len(may), "not_attempted": len(dead)},
        "first_ids": list(dict.fromkeys(a["reminder_id"] for a in attempts))[:FIRST_IDS],
        "attempts": attempts,
        "may_attempt": may,
        "not_attempted": dead,
        "truncated": truncated or behind,
    }


def _buckets(first: str, end: datetime) -> list[str]:
    """The minutes from ``first`` that start before ``end``, in order."""
    out = []
    while bucket_start(first) < end:
        out.append(first)
        first = next_bucket(first)
    return out


def _first_bucket(
    store: ReminderStore, now: datetime, shards: int, watch_lag_seconds: float
) -> tuple[str, bool]:
    """Where an account's preview starts reading the due index: the watchdog's lag (and a margin)
    before now, or earlier where a shard's dispatcher or watchdog has not yet passed (it runs behind:
    an entry there still names a delivery the consumer may attempt), at most MAX_LOOKBACK_SECONDS
    back (True: it stopped there). One cursor read per shard."""
    start = now - timedelta(seconds=watch_lag_seconds + LOOKBACK_MARGIN_SECONDS)
    for shard in range(shards):
        cursor = store.get_cursor(shard)
        for b in (cursor.bucket, cursor.watch_bucket) if cursor is not None else ():
            if b:
                start = min(start, bucket_start(b))
    floor = now - timedelta(seconds=MAX_LOOKBACK_SECONDS)
    return bucket_of(max(start, floor)), start < floor


def _window_zone(r: Reminder) -> tzinfo:
    """The send window's zone, as the consumer reads it (UTC without one, or for a dropped zone)."""
    if r.send_window is None or not r.time_zone:
        return UTC
    try:
        return zone(r.time_zone)
    except UnknownZoneError:  # pragma: no cover - a zone a tzdata release dropped: the consumer's UTC
        return UTC


def _endpoint_health(
    health: EndpointHealthGuard | None,
    r: Reminder,
    d: Delivery,
    now: datetime,
    read: dict[tuple[str, str], EndpointHealth | None],
) -> EndpointHealth | None:
    """A webhook delivery's endpoint health as the consumer sees it (None: no item, not a webhook,
    or not this account's: the guard's view is the account's own), read as written once per
    endpoint and preview (``read``: the preview's own memo; rev28g: once per row before)."""
    if health is None or d.type is not ChannelType.WEBHOOK:
        return None
    key = (destination_bucket(d, r.account_id), r.account_id)
    if key not in read:
        read[key] = health.view(*key, now.timestamp(), consistent=True)
    return read[key]


# -- explain ----------------------------------------------------------------------------------------
def reminder_view(r: Reminder, states: dict[str, str] | None = None) -> dict[str, Any]:
    """The API's JSON view of ``r`` (the fields explain reads), built without the API."""
    return {
        "id": r.id,
        "key": r.key,
        "account_id": r.account_id,
        "kind": r.kind,
        "due_at": iso(r.due_at),
        "version": r.version,
        "state": r.state,
        "generation": r.generation,
        "expires_at": expires_at(r),
        "deliveries": [_delivery_view(d, (states or {}).get(cid)) for cid, d in r.deliveries.items()],
    }


def _delivery_view(d: Delivery, state: str | None) -> dict[str, Any]:
    return {
        "channel_id": d.channel_id,
        "type": d.type.value,
        "key": d.key,
        "state": state or d.state.value,
        "attempts": d.attempts,
        "throttles": d.throttles,
        "cycle": d.cycle,
        "lease_owner": d.lease_owner,
        "lease_until": d.lease_until,
        "next_attempt_at": d.next_attempt_at,
        "delivered_at": d.delivered_at,
        "receipt": d.receipt,
        "dead_letter_reason": d.dead_letter_reason,
        "last_error": d.last_error,
        "history": [a.to_dict() for a in d.history],
        "history_dropped": dict(d.dropped),
        "resends": d.resend,
        "may_have_been_accepted": d.may_have_been_accepted(),
    }


#: The history lines that changed what happens next (issue 28 item 2): besides the operators' and the
#: watchdog's, a deferral (quiet hours, a held endpoint's pause: ``defer``), a dead letter the gate
#: decided before any attempt (``gate``: deadline or maximum age) and a suppression. Only ``attempt``
#: lines are attempts.
_CHANGES = {
    "defer",
    "gate",
    "suppressed",
    "reschedule",
    "correct",
    "resend",
    "cancel",
    "redrive",
    "watchdog",
    "lease_expired",
    "provider_event",
}


#: A gate dead letter as rows written before the ``gate`` line recorded it: an ``attempt`` line with
#: no status, ``transient`` and ``dead_letter``, whose detail is the gate's (nothing was sent).
#: A disabled endpoint's unsent dead letter likewise (``permanent``, ``endpoint_disabled``, no status;
#: a receiver's ``disable`` answer after a real send has its status).
_LEGACY_GATE_LINES = frozenset(
    {("transient", "deadline_passed"), ("transient", "expired"), ("permanent", "endpoint_disabled")}
)


def _event(a: dict[str, Any]) -> str | None:
    """The line's event; a pre-``gate`` gate dead letter reads as the ``gate`` line it was."""
    event = a.get("event")
    if (
        event == "attempt"
        and a.get("status") is None
        and a.get("decision") == "dead_letter"
        and (a.get("outcome"), a.get("detail")) in _LEGACY_GATE_LINES
    ):
        return "gate"
    return event


def explain(view: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Who owns each delivery now, why it was retried, why it stopped, what changed, what is next."""
    out: dict[str, Any] = {
        "reminder": {
            k: view.get(k) for k in ("id", "account_id", "kind", "key", "version", "state", "due_at")
        },
        "deliveries": [],
    }
    if view.get("expires_at") is not None:
        out["reminder"]["expires_at"] = view["expires_at"]
    for d in view.get("deliveries", []):
        history = d.get("history", [])
        attempts = [
            {k: a.get(k) for k in ("at", "outcome", "status", "decision", "delay_seconds", "policy_version")}
            | ({"repeat": a["repeat"]} if a.get("repeat") else {})
            for a in history
            if _event(a) == "attempt"
        ]
        changes = [
            {"at": a.get("at"), "event": _event(a), "detail": a.get("detail", "")}
            for a in history
            if _event(a) in _CHANGES
        ]
        out["deliveries"].append(
            {
                "channel_id": d.get("channel_id"),
                "key": d.get("key"),
                "state": d.get("state"),
                "owner": _owner(d, now),
                "attempts": attempts,
                "dropped_lines": d.get("history_dropped") or {},
                # Issue 25: intentional resends (each a new key), and the evidence summary.
                "resends": d.get("resends") or 0,
                "may_have_been_accepted": bool(d.get("may_have_been_accepted")),
                "stopped": _stopped(d),
                "changes": changes,
                "next": _next(d, view, now),
            }
        )
    return out


def _last_decisive(d: dict[str, Any]) -> dict[str, Any] | None:
    """The last history line that set the delivery's next attempt (a deferral or an attempt)."""
    for line in reversed(d.get("history") or []):
        if line.get("event") in ("defer", "attempt"):
            return dict(line)
    return None


def _owner(d: dict[str, Any], now: datetime) -> str:
    state = d.get("state")
    if state == "sending":
        until = d.get("lease_until") or ""
        live = until > iso(now)
        return f"worker {d.get('lease_owner')} (lease {'until' if live else 'expired at'} {until})"
    if state in ("queued", "retryable"):
        return "the channel queue (a message for the current version waits in SQS)"
    if state == "scheduled":
        return "the due index (the dispatcher hands it to SQS within 900 s of its due time)"
    return "nobody (terminal)"


def _stopped(d: dict[str, Any]) -> str | None:
    state = d.get("state")
    if state == "delivered":
        return f"delivered at {d.get('delivered_at')} (receipt {d.get('receipt')})"
    if state == "dead_letter":
        return f"dead-lettered: {d.get('dead_letter_reason')} after {d.get('attempts')} attempt(s)"
    if state == "canceled":
        return "cancelled by a person"
    return None


def _next(d: dict[str, Any], view: dict[str, Any], now: datetime) -> str:
    state = d.get("state")
    if state == "scheduled":
        return f"dispatch near its due time {view.get('due_at')}"
    if state in ("queued", "retryable"):
        at = d.get("next_attempt_at") or view.get("due_at")
        last = _last_decisive(d)
        why = ""
        if last is not None and last.get("event") == "defer":
            why = f" (deferred: {last.get('detail')})"
        elif last is not None and last.get("event") == "attempt":
            why = f" (retry after {last.get('outcome')})"
        if at and at > iso(now):
            return f"next attempt at {at}{why}"
        if last is not None and (last.get("event"), last.get("detail")) == ("defer", "endpoint_hold"):
            # Parked: its message comes back by visibility while the endpoint stays held, writing
            # nothing; the row's time passed, yet no attempt is due.
            return (
                "waits for its held endpoint (endpoint_hold): its parked message looks again at the"
                " endpoint's next probe; it is sent once a probe finds the endpoint answering"
            )
        return f"next attempt now (its message is due){why}"
    if state == "sending":
        until = d.get("lease_until")
        return (
            f"the attempt in flight is recorded, or its lease ends at {until} and another worker takes over"
        )
    if state == "dead_letter":
        return "nothing until an operator redrives it (reminders dlq redrive), or cancels it"
    return "nothing"
