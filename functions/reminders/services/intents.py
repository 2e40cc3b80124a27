"""Use cases of the reminder intent: create, get, find, reschedule, cancel.

A create returns as soon as the intent is durable (one conditional put). Reminders due inside the
SQS delay window are handed to SQS at once with the exact delay; later ones wait in the due index.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from ..domain.corrections import Data, Destination, DueAt, FieldChange, TemplateVersion, resend_generation
from ..domain.errors import (
    ConflictError,
    NotFoundError,
    PossibleAcceptanceError,
    PreconditionFailedError,
    ProducersPausedError,
    StoreConflictError,
    ValidationError,
)
from ..domain.localtime import (
    SendWindow,
    UnknownZoneError,
    format_wall,
    parse_wall,
    resolve,
    rules_version,
    zone,
)
from ..domain.models import (
    Attempt,
    ChannelType,
    Delivery,
    Reminder,
    add_history,
    delivery_key,
    fingerprint,
    reminder_id,
)
from ..domain.ports import Clock, IndexKey, OutMessage, Queues, ReminderStore, Telemetry
from ..domain.retention import DEFAULT_RETENTION_DAYS, generation_of, retain_seconds
from ..domain.retry import RetryPolicy
from ..domain.schedule import (
    CURSOR_CREATE_MARGIN_SECONDS,
    SQS_MAX_DELAY_SECONDS,
    bucket_of,
    delay_seconds,
    due_attributes,
    index_pk,
    index_sk,
    iso,
    parse_iso,
    shard_of,
    sk_due,
    untagged_position,
    within_window,
)
from ..domain.states import CANCELABLE, DeliveryState
from .skew import StoreCorrectedClock

CONTROLS_TTL_SECONDS = 15.0  # how long a function instance trusts its copy of the operator controls
WRITE_RETRIES = 3


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    type: ChannelType
    destination: str


@dataclass(frozen=True, slots=True)
class NewReminder:
    account_id: str
    key: str
    kind: str
    due_at: datetime
    channels: tuple[ChannelSpec, ...]
    template_id: str
    template_version: int
    data: dict[str, Any]
    #: Issue 17. With ``due_local``, ``due_at`` is what it resolved to in ``time_zone``
    #: (:func:`resolve_local`); ``time_zone`` alone is the send window's zone.
    due_local: str | None = None
    time_zone: str | None = None
    send_window: SendWindow | None = None
    deliver_by: datetime | None = None
    locale: str | None = None  # BCP 47 (issue 30)

    def fingerprint(self) -> str:
        body: dict[str, Any] = {
            "account_id": self.account_id,
            "key": self.key,
            "kind": self.kind,
            "due_at": iso(self.due_at),
            "channels": [[c.type.value, c.destination] for c in self.channels],
            "template": [self.template_id, self.template_version],
            "data": self.data,
        }
        # Only when present: the fingerprints of reminders stored before issue 17 stay the same.
        if self.due_local is not None:
            body["due_local"] = self.due_local
        if self.time_zone is not None:
            body["time_zone"] = self.time_zone
        if self.send_window is not None:
            body["send_window"] = self.send_window.encode()
        if self.deliver_by is not None:
            body["deliver_by"] = iso(self.deliver_by)
        if self.locale is not None:
            body["locale"] = self.locale
        return fingerprint(body)


def zone_of(time_zone: str, zones: Callable[[str], tzinfo] = zone) -> tzinfo:
    """The IANA zone, or a :class:`ValidationError` naming ``time_zone``."""
    try:
        return zones(time_zone)
    except UnknownZoneError as exc:
        raise ValidationError("time_zone", str(exc)) from None


def resolve_local(
    due_local: str, time_zone: str, zones: Callable[[str], tzinfo] = zone
) -> tuple[datetime, str]:
    """(the UTC instant, the normalised wall time) of ``due_local`` in ``time_zone``; a
    :class:`ValidationError` naming the field that is wrong."""
    tz = zone_of(time_zone, zones)
    try:
        wall = parse_wall(due_local)
    except ValueError as exc:
        raise ValidationError("due_local", str(exc)) from None
    try:
        return resolve(wall, tz).instant, format_wall(wall)
    except OverflowError:  # 9999-12-31T23:59 west of Greenwich is in the year 10000
        raise ValidationError("due_local", "outside the calendar once converted to UTC") from None


@dataclass(slots=True)
class ReresolveReport:
    rules: str  # the tzdata release now in force
    examined: int = 0
    unchanged: int = 0
    moved: list[str] = field(default_factory=list)
    failed: int = 0
    more: bool = False  # the limit stopped it: run again with the rest


def is_own_write(stored: Reminder, written: Reminder) -> bool:
    """Whether ``stored`` holds the write ``written``: its version and fields, and on every delivery
    the line the write appended (its instant to the microsecond, event and detail) — wherever it
    now stands, as a worker may have recorded an attempt since (a concurrent change of the fields
    or the version is someone else's write)."""
    if (stored.version, stored.due_at, stored.data, stored.template_version, stored.deliver_by) != (
        written.version,
        written.due_at,
        written.data,
        written.template_version,
        written.deliver_by,
    ) or set(stored.deliveries) != set(written.deliveries):
        return False
    for cid, d in written.deliveries.items():
        s = stored.deliveries[cid]
        if s.destination != d.destination:
            return False
        if d.history:
            ours = (d.history[-1].at, d.history[-1].event, d.history[-1].detail)
            if ours not in {(a.at, a.event, a.detail) for a in s.history}:
                return False
    return True


def index_key(reminder: Reminder, shards: int, *, watch: bool, now: datetime | None = None) -> IndexKey:
    """A dispatch entry sits at the due time. A watch entry (already handed to SQS) sits at the due
    time or ``now``, whichever is later: the watchdog's cursor only moves forward and never reads
    behind ``now - watch_lag``, so an entry filed in the past would never be checked."""
    at = reminder.due_at if now is None else max(reminder.due_at, now)
    return IndexKey(
        index_pk(bucket_of(at), reminder.shard), index_sk(at, reminder.id, reminder.account_id), watch
    )


class Reminders:
    def __init__(
        self,
        *,
        store: ReminderStore,
        queues: Queues,
        clock: Clock,
        telemetry: Telemetry,
        shards: int,
        window_seconds: int = SQS_MAX_DELAY_SECONDS,
        check_destination: Callable[[ChannelSpec], None] | None = None,
        max_age_seconds: float | None = None,
        zones: Callable[[str], tzinfo] = zone,
        rules: Callable[[], str] = rules_version,
        retention_days: int | None = DEFAULT_RETENTION_DAYS,
        use_endpoint: Callable[..., None] | None = None,
        check_template: Callable[..., bool | None] | None = None,
    ) -> None:
        self.store = store
        self.queues = queues
        # A writer's slow clock must not file a due time behind the dispatcher (issue 25 item 7).
        self.clock: Clock = StoreCorrectedClock(clock, store)
        self.telemetry = telemetry
        self.shards = shards
        self.window_seconds = window_seconds
        self.check_destination = check_destination
        #: ``Endpoints.use``: a correction naming an endpoint (issue 24) runs the ownership check a
        #: create runs (the endpoint is the reminder's account's; its use recorded); None: refused.
        self.use_endpoint = use_endpoint
        #: ``Templates.check_reminder`` (issue 30): the template version a create or a correction
        #: names exists for the account and renders with the data (422 naming the field); None: none.
        self.check_template = check_template
        #: A reminder whose due time is already further back than the deliveries' maximum age would
        #: dead-letter as ``expired`` without a send: it is refused instead (422 naming ``due_at``).
        self.max_age_seconds = max_age_seconds
        #: Where IANA zones come from and which tzdata release that is (tests substitute a zone).
        self.zones = zones
        self.rules = rules
        #: Terminal reminders expire this long after their terminal state (None: never).
        self.retain_seconds = (
            retain_seconds(retention_days, max_age_seconds or RetryPolicy().max_age_seconds)
            if retention_days is not None
            else 0
        )
        self._controls: tuple[float, dict[str, Any]] | None = None
        self._high_water_raised = False
        self._cursors_ensured: set[int] = set()

    # -- create ----------------------------------------------------------------------------
    def create(self, cmd: NewReminder, *, internal: bool = False) -> tuple[Reminder, bool]:
        """Returns (reminder, created). The same key with the same body returns the existing one.
        ``internal``: made by the system itself (an operational event, issue 16), not a producer's
        request: an operator's producer pause does not refuse it (the outcome it reports happened)."""
        if not internal and self.controls().get("producers_paused"):
            raise ProducersPausedError("producers are paused by an operator; retry later")
        rid = reminder_id(cmd.account_id, cmd.key)
        too_old = self._beyond_max_age(cmd.due_at)
        if too_old:
            existing = self.store.get(rid)  # an identical create retried later still answers 200
            if (
                existing is not None
                and (existing.account_id, existing.key) == (cmd.account_id, cmd.key)
                and existing.fingerprint == cmd.fingerprint()
            ):
                self.telemetry.count("create_duplicate")
                return existing, False
            raise ValidationError("due_local" if cmd.due_local is not None else "due_at", too_old)
        if self.check_destination is not None:
            for ch in cmd.channels:
                self.check_destination(ch)
        registered: bool | None = None  # what every send of it renders by (Reminder.template_registered)
        if self.check_template is not None and not internal:
            try:
                registered = self.check_template(
                    cmd.account_id, cmd.template_id, cmd.template_version, cmd.data, cmd.locale
                )
            except ValidationError:
                # The same create, accepted before its account registered the version it names, is
                # answered as every identical create is (its record keeps what it was checked against).
                existing = self.store.get(rid)
                if (
                    existing is not None
                    and (existing.account_id, existing.key) == (cmd.account_id, cmd.key)
                    and existing.fingerprint == cmd.fingerprint()
                ):
                    self.telemetry.count("create_duplicate")
                    self._enqueue_unattempted(existing, self.clock.now())
                    return existing, False
                raise
        now = self.clock.now()
        in_window = within_window(cmd.due_at, now, self.window_seconds)
        state = DeliveryState.QUEUED if in_window else DeliveryState.SCHEDULED
        deliveries: dict[str, Delivery] = {}
        counters: dict[str, int] = {}
        generation = generation_of(now)
        for ch in cmd.channels:
            n = counters.get(ch.type.value, 0)
            counters[ch.type.value] = n + 1
            cid = f"{ch.type.value}-{n}"
            deliveries[cid] = Delivery(
                channel_id=cid,
                type=ch.type,
                destination=ch.destination,
                key=delivery_key(cmd.account_id, cmd.key, cid, generation),
                state=state,
                cycle_started_at=iso(cmd.due_at),
            )
        reminder = Reminder(
            id=rid,
            account_id=cmd.account_id,
            key=cmd.key,
            kind=cmd.kind,
            due_at=cmd.due_at,
            template_id=cmd.template_id,
            template_version=cmd.template_version,
            data=cmd.data,
            version=1,
            created_at=now,
            fingerprint=cmd.fingerprint(),
            deliveries=deliveries,
            shard=shard_of(rid, self.shards),
            due_local=cmd.due_local,
            time_zone=cmd.time_zone,
            tz_rules=self.rules() if cmd.due_local is not None else None,
            send_window=cmd.send_window,
            deliver_by=cmd.deliver_by,
            generation=generation,
            retain_seconds=self.retain_seconds,
            locale=cmd.locale,
            template_registered=registered,
        )
        entry = index_key(reminder, self.shards, watch=in_window, now=now if in_window else None)
        self._ensure_shard(reminder.shard, now)
        if not self.store.put_new(reminder, entry):
            existing = self.store.get(rid)
            if existing is None:  # pragma: no cover - a put lost to a row that vanished
                raise StoreConflictError("reminder changed concurrently; retry")
            if existing.account_id != cmd.account_id or existing.key != cmd.key:
                raise ConflictError("key collision")  # pragma: no cover - 128-bit hash
            if existing.fingerprint != reminder.fingerprint:
                raise ConflictError(
                    "a reminder with this key already exists with a different body; "
                    "use PATCH to reschedule or DELETE to cancel"
                )
            self.telemetry.count("create_duplicate")
            self._enqueue_unattempted(existing, now)
            return existing, False
        if in_window:
            self._enqueue(reminder, now)
        self.telemetry.count("created", window="queued" if in_window else "scheduled")
        self.telemetry.log("created", reminder_id=rid, channels=len(deliveries), state=state.value)
        return reminder, True

    def _beyond_max_age(self, due_at: datetime) -> str | None:
        """Why ``due_at`` is too far in the past to be delivered, or None."""
        if self.max_age_seconds is None:
            return None
        overdue = (self.clock.now() - due_at).total_seconds()
        if overdue <= self.max_age_seconds:
            return None
        return (
            f"is {overdue / 3600:.1f} h in the past, beyond the maximum age of a delivery "
            f"({self.max_age_seconds / 3600:g} h): it would expire unsent"
        )

    def _ensure_shard(self, shard: int, now: datetime) -> None:
        """Before this process's first entry in a shard: the shard's cursor exists (created
        ``CURSOR_CREATE_MARGIN_SECONDS`` before now, so the dispatcher's and the watchdog's first run
        start behind every entry, however late that run comes) and the shard high-water mark covers
        this process's shard count. Conditional writes, once per shard per process: ~0 per reminder."""
        if not self._high_water_raised:
            self.store.raise_shard_high_water(self.shards)
            self._high_water_raised = True
        if shard not in self._cursors_ensured:
            self.store.ensure_cursor(shard, now - timedelta(seconds=CURSOR_CREATE_MARGIN_SECONDS))
            self._cursors_ensured.add(shard)

    def _enqueue_unattempted(self, existing: Reminder, now: datetime) -> None:
        """A repeated create may be the client's retry after our SendMessage failed (the row was
        written first): enqueue again every in-window delivery never attempted. A message too many
        is absorbed by the claim (one conditional write per delivery and version)."""
        if not within_window(existing.due_at, now, self.window_seconds):
            return  # beyond the window: the dispatcher hands it to SQS
        fresh = [
            cid
            for cid, d in existing.deliveries.items()
            if d.state is DeliveryState.QUEUED and not (d.attempts or d.throttles or d.cycle)
        ]
        if fresh:
            self._enqueue(existing, now, only=fresh)
            self.telemetry.count("create_reenqueued", len(fresh))
            self.telemetry.log("create_reenqueued", reminder_id=existing.id, channels=len(fresh))

    def _enqueue(self, reminder: Reminder, now: datetime, only: list[str] | None = None) -> None:
        delay = delay_seconds(reminder.due_at, now)
        by_type: dict[str, list[OutMessage]] = {}
        for cid, d in reminder.deliveries.items():
            if only is not None and cid not in only:
                continue
            by_type.setdefault(d.type.value, []).append(
                OutMessage(reminder.id, cid, reminder.version, delay, due_attributes(reminder.due_at))
            )
        for channel_type, messages in by_type.items():
            self.queues.send(channel_type, messages)

    # -- read -------------------------------------------------------------------------------
    def get(self, rid: str) -> Reminder:
        reminder = self.store.get(rid)
        if reminder is None:
            raise NotFoundError(f"reminder {rid} not found")
        return reminder

    def find(self, account_id: str, key: str) -> Reminder:
        reminder = self.store.get(reminder_id(account_id, key))
        if reminder is None or reminder.account_id != account_id or reminder.key != key:
            raise NotFoundError("no reminder with this account_id and key")
        return reminder

    def effective_states(self, reminder: Reminder, *, just_created: bool = False) -> dict[str, str]:
        """``scheduled`` rows already handed to SQS by the dispatcher (per-page checkpoint) read as
        ``queued``: the dispatcher does not write every reminder it enqueues. ``just_created``: the
        reminder this request created, which no checkpoint can have passed yet (a tick hands off what
        falls due within the window of its own time; a scheduled reminder is due beyond the window of
        now, which is later): no cursor read, so a create costs no read unit."""
        states = {cid: d.state.value for cid, d in reminder.deliveries.items()}
        if not just_created and DeliveryState.SCHEDULED.value in states.values():
            cursor = self.store.get_cursor(reminder.shard)
            if cursor is not None:
                # The stored key, of either form (issue 28 item 2), as the dispatcher's position.
                gsk = reminder.index_sort_key or index_sk(reminder.due_at, reminder.id, reminder.account_id)
                bucket = bucket_of(parse_iso(sk_due(gsk)))
                at = untagged_position(gsk, reminder.id)
                passed = cursor.bucket > bucket or (
                    cursor.bucket == bucket and (cursor.after >= at or cursor.in_pass_done(gsk, at))
                )
                if passed:
                    for cid, s in states.items():
                        if s == DeliveryState.SCHEDULED.value:
                            states[cid] = DeliveryState.QUEUED.value
        return states

    # -- change -----------------------------------------------------------------------------
    def reschedule(
        self,
        rid: str,
        due_at: datetime | None,
        *,
        due_local: str | None = None,
        time_zone: str | None = None,
        if_match: int | None = None,
    ) -> Reminder:
        """A new due time: an instant (``due_at``), or a wall time ``due_local`` in ``time_zone``
        (default: the reminder's own zone, which a local reschedule keeps). A correction of the due
        time alone (``correct`` with one ``DueAt``)."""
        change = self.due_change(rid, due_at, due_local=due_local, time_zone=time_zone)
        return self.correct(rid, [change], if_match=if_match)

    def due_change(
        self,
        rid: str,
        due_at: datetime | None,
        *,
        due_local: str | None = None,
        time_zone: str | None = None,
    ) -> DueAt:
        """The ``DueAt`` change of a reschedule, resolved and checked against the reminder as it is
        (422 naming the field before anything is written)."""
        current = self.get(rid)
        zone_name = time_zone or current.time_zone
        if due_local is not None:
            if zone_name is None:
                raise ValidationError("time_zone", "required with due_local (the reminder has no zone)")
            due_at, due_local = resolve_local(due_local, zone_name, self.zones)
        elif time_zone is not None:
            zone_of(time_zone, self.zones)
        if due_at is None:
            raise ValidationError("due_at", "give due_at or due_local")
        if current.deliver_by is not None and due_at >= current.deliver_by:
            raise ValidationError(
                "due_local" if due_local is not None else "due_at",
                "must be before the reminder's deliver_by",
            )
        return DueAt(
            due_at,
            due_local=due_local,
            time_zone=zone_name,
            tz_rules=self.rules() if due_local is not None else None,
        )

    def correct(
        self,
        rid: str,
        changes: Sequence[FieldChange],
        *,
        if_match: int | None = None,
        resend: bool = False,
    ) -> Reminder:
        """Apply ``changes`` together under one version bump (messages of the old version become
        no-ops; every open delivery is planned again under the new one). ``if_match``: the version
        the caller read (412 when stale); None applies to whatever version is current.

        Refused (ConflictError, 409) while any delivery is ``sending``, or when any earlier attempt
        of an affected delivery may have been accepted (409 ``correction_after_possible_acceptance``,
        see domain/corrections.py) unless ``resend``: then each such delivery is sent again as a new
        generation with a new key, recorded as intentional (a ``resend`` line, ``Delivery.resend``)."""
        if not changes:
            raise ValidationError("body", "names nothing to change")
        for ch in changes:
            if isinstance(ch, DueAt):
                too_old = self._beyond_max_age(ch.due_at)
                if too_old:
                    raise ValidationError(ch.field, too_old)
        names = ",".join(dict.fromkeys(ch.field for ch in changes))
        only_due = all(isinstance(ch, DueAt) for ch in changes)
        for _ in range(WRITE_RETRIES):
            current = self.get(rid)
            if if_match is not None and current.version != if_match:
                raise PreconditionFailedError(
                    f"If-Match: version {if_match} is stale; the reminder is at version {current.version}"
                )
            affected = list(dict.fromkeys(cid for ch in changes for cid in ch.channels(current)))
            self._check_correctable(current, changes, affected, resend=resend)
            updated = current
            for ch in changes:
                updated = ch.apply(updated)
            if self.check_template is not None and any(
                isinstance(ch, TemplateVersion | Data) for ch in changes
            ):
                registered = self.check_template(
                    updated.account_id,
                    updated.template_id,
                    updated.template_version,
                    updated.data,
                    updated.locale,
                    # a reminder pinned to a retired version keeps it: its data stays correctable
                    allow_retired=updated.template_version == current.template_version,
                )
                if registered is not None:  # a correction changes the bytes anyway (its own rules)
                    updated = replace(updated, template_registered=registered)
            now = self.clock.now()
            in_window = within_window(updated.due_at, now, self.window_seconds)
            new_state = DeliveryState.QUEUED if in_window else DeliveryState.SCHEDULED
            due_changed = updated.due_at != current.due_at
            expected: dict[str, int] = {"version": current.version}
            deliveries = dict(updated.deliveries)
            movable: list[str] = []
            for cid, d in updated.deliveries.items():
                expected[cid] = d.rev
                if d.state.terminal and cid not in affected:
                    continue
                line = (
                    Attempt(at=iso(now), event="reschedule", detail=iso(updated.due_at))
                    if only_due
                    else Attempt(at=iso(now), event="correct", detail=names)
                )
                d = replace(d, **add_history(d, line))
                if resend and cid in affected and d.may_have_been_accepted():
                    d = resend_generation(updated, d, iso(max(now, updated.due_at)))
                if d.state.terminal:  # a dead letter: corrected for its redrive, not re-planned
                    deliveries[cid] = d
                    continue
                movable.append(cid)
                deliveries[cid] = replace(
                    d,
                    state=new_state,
                    next_attempt_at=None,
                    parked_until=None,  # re-planned: a parked message of the old version is stale
                    cycle_started_at=iso(updated.due_at) if due_changed else d.cycle_started_at,
                )
            updated = replace(updated, version=current.version + 1, deliveries=deliveries)
            entry = (
                index_key(updated, self.shards, watch=in_window, now=now if in_window else None)
                if movable
                else None
            )
            if entry is not None:  # the answer carries the key it writes (effective_states reads it)
                updated = replace(updated, index_sort_key=None if entry.watch else entry.sk)
            if self._save(updated, expected, entry):
                if in_window and movable:
                    self._enqueue(updated, now, only=movable)
                self.telemetry.count("rescheduled" if only_due else "corrected")
                self.telemetry.log(
                    "rescheduled" if only_due else "corrected",
                    reminder_id=rid,
                    version=updated.version,
                    fields=names,
                )
                return updated
        raise StoreConflictError("reminder changed concurrently; retry")

    def _save(self, updated: Reminder, expected: dict[str, int], entry: IndexKey | None) -> bool:
        """``save_reminder``, recognising our own write when its answer was lost: botocore retried
        the conditional update and the retry failed its own condition (as the consumer's ``_save``
        does). The row then holds what we wrote: our version and fields, our line on every delivery
        (a worker may have recorded an attempt since)."""
        if self.store.save_reminder(updated, expected, entry):
            return True
        stored = self.store.get(updated.id)
        if stored is None or not is_own_write(stored, updated):
            return False
        for cid, d in updated.deliveries.items():
            d.rev = expected[cid] + 1
        self.telemetry.count("own_write_recognised")
        return True

    def reresolve_local_times(self, candidates: Iterable[str], *, limit: int = 500) -> ReresolveReport:
        """After a tzdata bump: re-read at most ``limit`` of ``candidates`` and move every future
        local-time reminder whose wall time now resolves to another instant, as a local reschedule
        does (version + 1, so a message queued for the old instant is stale; the due-index entry
        moves from the old instant's bucket to the new one; in-window ones are enqueued again).
        Reminders resolved under the current release, past ones and terminal ones are left alone."""
        report = ReresolveReport(rules=self.rules())
        now = self.clock.now()
        for rid in candidates:
            if report.examined >= limit:
                report.more = True
                break
            report.examined += 1
            r = self.store.get(rid)
            if r is None or r.due_local is None or r.time_zone is None or r.tz_rules == report.rules:
                continue
            if r.due_at <= now or all(d.state.terminal for d in r.deliveries.values()):
                continue
            instant, _ = resolve_local(r.due_local, r.time_zone, self.zones)
            if instant == r.due_at:
                report.unchanged += 1
                continue
            try:
                self.reschedule(rid, None, due_local=r.due_local, time_zone=r.time_zone)
            except (ConflictError, ValidationError, StoreConflictError):
                report.failed += 1  # became terminal meanwhile, or now too far in the past
                continue
            report.moved.append(rid)
            self.telemetry.count("local_time_reresolved")
            self.telemetry.log("local_time_reresolved", reminder_id=rid, rules=report.rules)
        return report

    def set_deadline(self, rid: str, deliver_by: datetime) -> Reminder:
        """A new ``deliver_by`` (what a redrive of a ``deadline_passed`` dead letter needs first). It
        must lie ahead; the version stays (queued and dead-lettered messages remain valid)."""
        now = self.clock.now()
        if deliver_by <= now:
            raise ValidationError("deliver_by", "must lie in the future")
        for _ in range(WRITE_RETRIES):
            current = self.get(rid)
            if deliver_by <= current.due_at:
                raise ValidationError("deliver_by", "must be after the due time")
            expected: dict[str, int] = {"version": current.version}
            expected.update({cid: d.rev for cid, d in current.deliveries.items()})
            updated = replace(current, deliver_by=deliver_by)
            if self._save(updated, expected, None):
                self.telemetry.count("deadline_set")
                self.telemetry.log("deadline_set", reminder_id=rid, deliver_by=iso(deliver_by))
                return updated
        raise StoreConflictError("reminder changed concurrently; retry")

    def _check_correctable(
        self, current: Reminder, changes: Sequence[FieldChange], affected: list[str], *, resend: bool = False
    ) -> None:
        for ch in changes:
            if isinstance(ch, Destination):
                d = current.deliveries.get(ch.channel_id)
                if d is None:
                    raise ValidationError("channels", f"{ch.channel_id}: no such channel on this reminder")
                if d.type is not ch.type:
                    raise ValidationError("channels", f"{ch.channel_id}: is a {d.type.value} channel")
                if d.state.terminal and d.state is not DeliveryState.DEAD_LETTER:
                    raise ConflictError(f"{ch.channel_id} is {d.state.value}: its destination cannot change")
                if ch.endpoint_id is not None:
                    self._check_endpoint(current, ch)
                elif self.check_destination is not None:
                    self.check_destination(ChannelSpec(ch.type, ch.destination))
        if not affected:
            raise ConflictError("every delivery is already terminal (delivered, dead_letter or canceled)")
        sending = [cid for cid, d in current.deliveries.items() if d.state is DeliveryState.SENDING]
        if sending:
            raise ConflictError(
                f"{', '.join(sending)} is sending: the attempt in flight was made from this version;"
                " retry once it is recorded"
            )
        if resend:
            return
        for cid in affected:
            if current.deliveries[cid].may_have_been_accepted():  # any attempt, any destination
                raise PossibleAcceptanceError(
                    f"{cid}: an earlier attempt may have been accepted (ambiguous: the receiver may hold"
                    " the current payload under the same key); send it again with resend: true (a new"
                    " webhook-id), or cancel"
                )

    def _check_endpoint(self, current: Reminder, ch: Destination) -> None:
        """Another account's endpoint is refused exactly as a missing one (no existence leak)."""
        assert ch.endpoint_id is not None
        if self.use_endpoint is None:
            raise ValidationError(ch.request_field, "no such endpoint for this account")
        field = ch.request_field
        self.use_endpoint(ch.endpoint_id, current.account_id, current.id, ch.channel_id, field=field)

    def cancel(self, rid: str) -> Reminder:
        for _ in range(WRITE_RETRIES):
            current = self.get(rid)
            now = self.clock.now()
            expected: dict[str, int] = {"version": current.version}
            deliveries = dict(current.deliveries)
            changed = 0
            for cid, d in current.deliveries.items():
                expected[cid] = d.rev
                if d.state not in CANCELABLE:
                    continue
                changed += 1
                deliveries[cid] = replace(
                    d,
                    state=DeliveryState.CANCELED,
                    next_attempt_at=None,
                    dlq_pending=False,  # a cancelled dead letter needs no DLQ message
                    **add_history(d, Attempt(at=iso(now), event="cancel", detail=d.state.value)),
                )
            if not changed:
                raise ConflictError("nothing to cancel: every delivery is terminal (delivered or canceled)")
            updated = replace(current, deliveries=deliveries)
            if self._save(updated, expected, None):
                self.telemetry.count("canceled", value=changed)
                self.telemetry.log("canceled", reminder_id=rid, deliveries=changed)
                return updated
        raise StoreConflictError("reminder changed concurrently; retry")

    # -- operator controls ------------------------------------------------------------------
    def controls(self) -> dict[str, Any]:
        mono = time.monotonic()
        if self._controls is None or mono - self._controls[0] > CONTROLS_TTL_SECONDS:
            self._controls = (mono, self.store.get_controls())
        return self._controls[1]
