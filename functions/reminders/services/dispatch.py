"""The dispatcher and its watchdog, one index shard at a time.

Dispatch: read the shard's due index from its checkpoint up to ``now + window - margin`` in bounded
pages; publish ids + version with the remaining delay (whole seconds rounded down, the due time in
an attribute: the consumer waits out the rest before it claims, never early); checkpoint
per page (no per-reminder write). A crash between publish and checkpoint republishes one page: the
ledger's claim absorbs that duplicate. A paused rule catches up: the checkpoint only moves forward.

Watchdog: a second cursor ``watch_lag`` behind now re-reads the same index and finds deliveries
whose message was lost (``queued`` long past due, ``retryable`` long past its next attempt,
``sending`` with a long-expired lease) and re-enqueues them; deliveries still legitimately in
flight get a re-check entry further ahead. An entry sits at the instant its delivery is expected by
(the due time, a retry's or a deferral's next attempt, a park's or a lease's end) and the cursor
reads it ``watch_lag`` after its minute: a lost message is re-queued within the lag, a minute and a
tick of that instant (issue 26: the re-check entry sat a lag past it, two lags in all). Nothing
stays non-terminal forever.

Clock skew: every time the dispatcher compares or publishes is read from its own clock corrected
by the store's (``ReminderStore.reference_now``: DynamoDB's ``Date`` header), measured on every
run. An offset up to ``SKEW_TOLERANCE_SECONDS`` is ignored (the header has whole seconds); a larger
one is applied, so a skewed host adds at most ~1.5 s (tolerance + half the header's resolution +
half a round trip) to a reminder's lateness instead of the whole skew, and is never early (the
claim checks the due time on the consumer's clock). The measured offset is the
``clock_skew_seconds`` metric.

One bad row (a value this code cannot decode, an unknown channel type) never stops a pass: it is
skipped, counted (metric ``bad_row``, alarmed), logged by reminder id (no personal data) and the
cursor moves past it, so it is counted once, not on every run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..domain.models import ChannelType, Reminder
from ..domain.ports import (
    ROW_ERRORS,
    Clock,
    Cursor,
    IndexEntry,
    OutMessage,
    Queues,
    ReminderStore,
    Telemetry,
)
from ..domain.schedule import (
    BUCKET_SECONDS,
    PHASE_MIN_AHEAD_SECONDS,
    SHARD_HIGH_WATER,
    SQS_MAX_DELAY_SECONDS,
    WHOLE_BUCKET,
    account_tag,
    bucket_of,
    bucket_start,
    delay_seconds,
    dispatch_horizon,
    due_attributes,
    index_pk,
    next_bucket,
    parse_iso,
    phase_wait,
    position_upto,
    sk_current,
    sk_due,
    sk_tag,
    tagged_watch_key,
    untagged_position,
    watch_key,
)
from ..domain.states import DeliveryState

PAGE_SIZE = 100
SAFETY_SECONDS = 5.0  # stop this long before the time budget ends
SHARD_LEASE_SECONDS = 90.0  # > the dispatch worker's timeout
WATCH_LAG_SECONDS = 900.0  # how long past its expected time a delivery may wait before rescue
CHANNEL_TYPES = frozenset(t.value for t in ChannelType)
#: How much later than a minute after the last one a tick of the one-minute rule may come (its
#: jitter, the fan-out's queue and the worker's start) with whole-minute reads still on time.
RULE_LATE_SECONDS = BUCKET_SECONDS // 2
#: A delay window (past its margin) shorter than this cannot wait for whole minutes and stay on time
#: with a one-minute rule: a minute is handed over at the first tick after the horizon passed its
#: end, up to a minute + RULE_LATE_SECONDS later, and must still be ahead of the minute's start.
#: The minute straddling the horizon is then read too (see ``Dispatcher._pass``). Was 2 minutes
#: flat: ticks 59 s and 62 s apart handed a 161 s window's minute over after its start (issue 28).
STRADDLE_BELOW_SECONDS = 2 * BUCKET_SECONDS + RULE_LATE_SECONDS
#: A dispatch pass reads at most this many pages of its minute before it hands them over (see
#: ``Dispatcher._read``): a larger minute is handed over in parts, each in due order.
MAX_PASS_PAGES = 50
#: Joins, in a cursor's ``page``, its ``after`` with what a run stopped by its time budget handed over
#: of a part: ``<after>>K1>X`` (the part's last key read, its last position handed over). The code
#: before this reads such a page as stale and starts the pass again from ``after`` (sends again).
PART_MARK = ">"
SKEW_TOLERANCE_SECONDS = 1.0  # a smaller offset from the store's clock is within its Date header's resolution


@dataclass(slots=True)
class ShardReport:
    shard: int
    busy: bool = False
    dispatched: int = 0
    pages: int = 0
    requeued: int = 0
    rechecks: int = 0
    more: bool = False  # stopped on the time budget with work left
    oldest_due_age_seconds: float = 0.0
    bad_rows: int = 0  # rows skipped because this code cannot read them
    by_reason: dict[str, int] = field(default_factory=dict)
    phase_wait_seconds: float = 0.0  # waited for the send moment (see _publish)


class Dispatcher:
    def __init__(
        self,
        *,
        store: ReminderStore,
        queues: Queues,
        clock: Clock,
        telemetry: Telemetry,
        shards: int,
        window_seconds: int = SQS_MAX_DELAY_SECONDS,
        page_size: int = PAGE_SIZE,
        watch_lag_seconds: float = WATCH_LAG_SECONDS,
        worker: str | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.sleep: Callable[[float], None] = sleep or getattr(clock, "sleep", None) or time.sleep
        self.queues = queues
        self.clock = clock
        self.telemetry = telemetry
        self.shards = shards
        self.window_seconds = window_seconds
        self.page_size = page_size
        self.watch_lag = timedelta(seconds=watch_lag_seconds)
        self.worker = worker or f"dispatch-{uuid.uuid4().hex[:8]}"
        self._skew = timedelta(0)  # store clock - local clock, as applied (see _measure_skew)

    def _now(self) -> datetime:
        return self.clock.now() + self._skew

    def _measure_skew(self) -> None:
        reference = self.store.reference_now()
        if reference is None:
            return  # no reference yet: keep the last measurement
        skew = (reference - self.clock.now()).total_seconds()
        self.telemetry.observe("clock_skew_seconds", round(skew, 3))
        if abs(skew) > SKEW_TOLERANCE_SECONDS:
            if abs(skew - self._skew.total_seconds()) > SKEW_TOLERANCE_SECONDS:
                self.telemetry.log("clock_skew", skew_seconds=round(skew, 3))
            self._skew = timedelta(seconds=skew)
        else:
            self._skew = timedelta(0)

    def shard_span(self) -> int:
        """How many shards to walk: the highest shard count ever used (the control item's high-water
        mark, raised by every writer before its first entry and by this dispatcher), never fewer than
        the configured count. Lowering ``due_shards`` only stops new entries going to the shards
        above it; their existing reminders are still dispatched and watched."""
        high_water = int(self.store.get_controls().get(SHARD_HIGH_WATER) or 0)
        if high_water < self.shards:
            self.store.raise_shard_high_water(self.shards)
        return max(high_water, self.shards)

    def tick(self) -> list[int]:
        """The scheduled rule's job: fan out one message per shard to the dispatch queue."""
        shards = list(range(self.shard_span()))
        self.queues.send_dispatch(shards)
        self.telemetry.log("dispatch_tick", shards=len(shards))
        return shards

    def run_shard(self, shard: int, remaining_seconds: Callable[[], float]) -> ShardReport:
        report = ShardReport(shard)
        now = self._now()
        cursor = self.store.acquire_cursor(
            shard, self.worker, now, now + timedelta(seconds=SHARD_LEASE_SECONDS)
        )
        self._measure_skew()  # against the Date of the response just received
        if cursor is None:
            report.busy = True
            self.telemetry.log("shard_busy", shard=shard)
            return report
        handed_late: set[str] = set()
        try:
            ok = self._dispatch(cursor, report, remaining_seconds, handed_late)
            if ok:
                self._watch(cursor, report, remaining_seconds, handed_late)
        finally:
            self.store.save_cursor(cursor, release=True)
        horizon = dispatch_horizon(self._now(), self.window_seconds)
        report.oldest_due_age_seconds = max(
            0.0, (horizon - bucket_start(cursor.bucket)).total_seconds() - BUCKET_SECONDS
        )
        tel = self.telemetry
        tel.observe("oldest_due_age_seconds", report.oldest_due_age_seconds)
        if report.dispatched:
            tel.count("dispatched", report.dispatched)
        if report.bad_rows:
            tel.count("bad_row", report.bad_rows)
        for reason, n in report.by_reason.items():
            tel.count("watchdog_requeued", n, reason=reason)
        tel.log(
            "dispatch_shard",
            shard=shard,
            dispatched=report.dispatched,
            pages=report.pages,
            requeued=report.requeued,
            rechecks=report.rechecks,
            more=report.more,
        )
        return report

    # -- dispatch pass ---------------------------------------------------------------------------
    def _dispatch(
        self, cursor: Cursor, report: ShardReport, remaining: Callable[[], float], handed_late: set[str]
    ) -> bool:
        while True:
            if remaining() < SAFETY_SECONDS:
                report.more = True
                return True
            now = self._now()
            span = self._pass(cursor, now)
            if span is None:
                return True
            upto, page_after, mark = span
            fresh, resume = self._read(cursor, upto, page_after, mark, report, remaining)
            whole = upto == WHOLE_BUCKET
            # Handed over in due order, a page at a time; the cursor's ``after`` moves to each
            # page's last position, an untagged one (the form the code before the tag reads).
            for start in range(0, len(fresh), self.page_size):
                group = fresh[start : start + self.page_size]
                published = self._publish(group, report, snap=start == 0)
                self._recheck_late(published, cursor.shard, now, handed_late)
                report.dispatched += sum(len(e.channels) for e in published)
                if start + self.page_size >= len(fresh):
                    break  # checkpointed below with the pass
                low = remaining() < SAFETY_SECONDS
                if resume:
                    # A part read is not a due-order prefix of the minute: keep what was handed over
                    # of it after each send (a run may also end mid-send, on the worker's timeout), or
                    # a part longer to hand over than a run is sent again forever (review rev28d: a
                    # flooded minute held the shard until its reminders were due).
                    kept = PART_MARK.join((cursor.after, resume, _position(group[-1])))
                    cursor.page = "|".join((cursor.bucket, kept, upto, page_after))
                else:
                    cursor.after, cursor.page = _position(group[-1]), ""
                if not self.store.save_cursor(cursor):
                    self.telemetry.log("shard_lease_lost", shard=cursor.shard)
                    return False
                if low:
                    report.more = True
                    return True
            if resume:
                # Read in part (a minute over MAX_PASS_PAGES, or the time budget): what was read is
                # handed over; the pass resumes its read after the last key (a crash republishes it).
                cursor.page = "|".join((cursor.bucket, cursor.after, upto, resume))
            elif whole:
                # A finished bucket: checkpoint and go on with the next one (a paused rule catches up
                # within this run's time budget, not one minute per run).
                cursor.bucket, cursor.after, cursor.page = next_bucket(cursor.bucket), "", ""
            else:
                cursor.after, cursor.page = upto, ""
            if not self.store.save_cursor(cursor):
                self.telemetry.log("shard_lease_lost", shard=cursor.shard)
                return False
            if not resume and not whole:
                return True  # the minute straddling the horizon: read again on the next run

    def _read(
        self,
        cursor: Cursor,
        upto: str,
        page_after: str,
        mark: str,
        report: ShardReport,
        remaining: Callable[[], float],
    ) -> tuple[list[IndexEntry], str]:
        """The pass's entries to hand over (positions after ``cursor.after`` up to ``upto``) in due
        order, and the sort key to resume the read after ('' when read to the minute's end).

        The minute's partition sorts by account (issue 28 item 1); SQS counts a SendMessageBatch's
        delays from when it receives that call, so messages due in the same second turn visible
        together, and reach the consumer in one batch, only if they are sent together: the pass
        reads its minute whole (up to ``MAX_PASS_PAGES``) before it hands over. Handed over in
        account order, the simulator's consumer took 0.62 invocations per reminder instead of 0.37.

        ``mark`` (``<last key>><position>``, or ''): a part a run began to hand over, read again up to
        its last key without the entries it handed over (positions up to ``position``)."""
        pk = index_pk(cursor.bucket, cursor.shard)
        until, done = mark.split(PART_MARK, 1) if mark else (WHOLE_BUCKET, "")
        fresh: list[IndexEntry] = []
        pages = 0
        while True:
            entries, more = self.store.query_index(pk, page_after, until, self.page_size)
            pages += 1
            fresh += [e for e in entries if not e.watch and max(cursor.after, done) < _position(e) <= upto]
            # Read to a kept part's last key: the next part reads on after it.
            page_after = entries[-1].sort_key if more else ("" if until == WHOLE_BUCKET else until)
            if not more or pages >= MAX_PASS_PAGES or remaining() < SAFETY_SECONDS:
                break
        report.pages += pages
        fresh.sort(key=_position)
        return fresh, page_after

    def _pass(self, cursor: Cursor, now: datetime) -> tuple[str, str, str] | None:
        """The next page's range in ``cursor.bucket``: (hand over entries up to this untagged
        position, read after this sort key), or None when there is nothing to hand over yet.

        Inside a minute the entries sort by account (issue 28 item 1), so a pass reads the minute
        whole. A minute wholly inside the horizon is handed over whole; with a delay window too
        short for that to be on time (under ``STRADDLE_BELOW_SECONDS`` past the margin: the local
        runtime's 20 s), the minute straddling the horizon is read whole too and its entries due by
        the horizon handed over, the cursor's ``after`` then marking the instant covered."""
        resumed = cursor.page.split("|", 3)
        if len(resumed) == 4:
            after, _, mark = resumed[1].partition(PART_MARK)
            if [resumed[0], after] == [cursor.bucket, cursor.after]:
                return resumed[2], resumed[3], mark  # a pass in progress: its range, from its last page
        cursor.page = ""
        horizon = dispatch_horizon(now, self.window_seconds)
        start = bucket_start(cursor.bucket)
        if start + timedelta(seconds=BUCKET_SECONDS) <= horizon:
            return WHOLE_BUCKET, "", ""
        if start > horizon or (horizon - now).total_seconds() >= STRADDLE_BELOW_SECONDS:
            return None
        upto = position_upto(horizon)
        if cursor.after >= upto:
            return None  # nothing new, or the horizon stepped back behind the cursor (issue 25.15)
        return upto, "", ""

    def _publish(
        self, entries: list[IndexEntry], report: ShardReport, *, snap: bool = True
    ) -> list[IndexEntry]:
        """Publish the entries' messages; returns the entries published (bad ones are skipped).

        Messages due within ``PHASE_MIN_AHEAD_SECONDS`` go at once; the rest wait (under a second)
        for the moment that makes them turn visible just before their due time
        (:func:`phase_wait`), so the consumer's wait before its claim is short. In the entries' order
        (the pass's due order: see ``_read``)."""
        ready: list[tuple[datetime, list[tuple[str, str]], IndexEntry]] = []
        for e in entries:
            try:
                ready.append((_due_of(e), [(_channel_type(cid), cid) for cid in e.channels], e))
            except ROW_ERRORS as exc:
                self._bad_row(report, "dispatch", e.reminder_id, exc)
        now = self._now()  # the query took time: delays count from the send
        soon: list[tuple[datetime, list[tuple[str, str]], IndexEntry]] = []
        later: list[tuple[datetime, list[tuple[str, str]], IndexEntry]] = []
        for r in ready:
            (later if (r[0] - now).total_seconds() >= PHASE_MIN_AHEAD_SECONDS else soon).append(r)
        self._send(soon, now)
        if later:
            wait = phase_wait([(due - now).total_seconds() for due, _, _ in later], snap=snap)
            if wait > 0:
                self.sleep(wait)
                report.phase_wait_seconds += wait
                now = self._now()
            self._send(later, now)
        return [e for _, _, e in ready]

    def _send(self, ready: list[tuple[datetime, list[tuple[str, str]], IndexEntry]], now: datetime) -> None:
        by_type: dict[str, list[OutMessage]] = {}
        for due, channels, e in ready:
            delay = delay_seconds(due, now)
            for channel_type, cid in channels:
                by_type.setdefault(channel_type, []).append(
                    OutMessage(e.reminder_id, cid, e.version, delay, due_attributes(due))
                )
        for channel_type, out in by_type.items():
            self.queues.send(channel_type, out)

    def _bad_row(self, report: ShardReport, step: str, reminder_id: str, exc: Exception) -> None:
        report.bad_rows += 1
        self.telemetry.log(
            "bad_row", reminder_id=reminder_id, shard=report.shard, step=step, error=type(exc).__name__
        )

    def _recheck_late(
        self, entries: list[IndexEntry], shard: int, now: datetime, handed_late: set[str]
    ) -> None:
        """An entry handed to SQS after its due time (a paused rule catching up) moves to a re-check
        entry at now, the hand-over: the watchdog reads it ``watch_lag`` later, so it judges it by
        when it was handed to SQS, not by its due time, or it re-enqueues what the dispatcher has
        just published. Only late entries pay this write; on time, the dispatcher publishes ahead of
        the due time. Now is ahead of the watchdog's cursor (``watch_lag`` behind it)."""
        at = now
        late = [e for e in entries if _due_of(e) < now]
        # An entry an earlier build wrote (rollout: no tag, or the previous 8-character one) does not
        # carry this build's tag: its row names the account (one read), or the account's preview,
        # which reads its tag's range only, would miss a retry it promises.
        older = [e.reminder_id for e in late if not sk_current(e.sort_key)]
        rows = self.store.batch_get(older, unreadable=[]) if older else []
        tags = {r.id: account_tag(r.account_id) for r in rows}
        for e in late:
            tag = (
                sk_tag(e.sort_key) if sk_current(e.sort_key) else tags.get(e.reminder_id, sk_tag(e.sort_key))
            )
            # Conditional on the version the index showed: a reschedule since wrote its own entry.
            self.store.move_index(
                e.reminder_id, tagged_watch_key(e.reminder_id, shard, at, tag), version=e.version
            )
            handed_late.add(e.reminder_id)

    # -- watchdog pass ---------------------------------------------------------------------------
    def _watch(
        self, cursor: Cursor, report: ShardReport, remaining: Callable[[], float], handed_late: set[str]
    ) -> None:
        now = self._now()
        limit = now - self.watch_lag
        if not cursor.watch_bucket:
            cursor.watch_bucket, cursor.watch_after = bucket_of(limit), ""
        while True:
            if remaining() < SAFETY_SECONDS:
                report.more = True
                return
            if bucket_start(cursor.watch_bucket) + timedelta(seconds=BUCKET_SECONDS) > limit:
                return  # whole minutes only (issue 28 item 1), as the dispatch pass
            resumed = cursor.watch_page.split("|", 1)
            page_after = resumed[1] if resumed[0] == cursor.watch_bucket and len(resumed) == 2 else ""
            entries, more = self.store.query_index(
                index_pk(cursor.watch_bucket, cursor.shard), page_after, WHOLE_BUCKET, self.page_size
            )
            if entries:
                ids = [e.reminder_id for e in entries if e.reminder_id not in handed_late]
                unreadable: list[str] = []
                for reminder in self.store.batch_get(ids, unreadable=unreadable) if ids else []:
                    try:
                        self._rescue(reminder, now, report)
                    except ROW_ERRORS as exc:
                        self._bad_row(report, "watch", reminder.id, exc)
                for rid in unreadable:
                    self._bad_row(report, "watch", rid, ValueError("undecodable row"))
            # ``watch_after`` stays empty: the code before the tag reads it as an untagged key and
            # would stop for good at a tagged one (issue 28 item 3); the page is in ``watch_page``.
            cursor.watch_after = ""
            if more:
                cursor.watch_page = f"{cursor.watch_bucket}|{entries[-1].sort_key}"
            else:
                cursor.watch_bucket, cursor.watch_page = next_bucket(cursor.watch_bucket), ""
            if not self.store.save_cursor(cursor):
                return

    def _rescue(self, reminder: Reminder, now: datetime, report: ShardReport) -> None:
        lag = self.watch_lag
        lost: list[tuple[str, str]] = []
        recheck: datetime | None = None
        for cid, d in reminder.deliveries.items():
            if d.state.terminal:
                continue
            if d.state in (DeliveryState.SCHEDULED, DeliveryState.QUEUED):
                expected = reminder.due_at
                if d.next_attempt_at:  # deferred by quiet hours (issue 17): not lost before then
                    expected = max(expected, parse_iso(d.next_attempt_at))
            elif d.state is DeliveryState.RETRYABLE:
                expected = parse_iso(d.next_attempt_at) if d.next_attempt_at else reminder.due_at
            else:  # sending
                expected = parse_iso(d.lease_until) if d.lease_until else now
            if d.parked_until and d.state is not DeliveryState.SENDING:
                # Parked at a held endpoint (issue 25 item 6): its message comes back by visibility
                # without writing the row; it is lost only if still here past its lease, which the live
                # message renews (services/deliver.py, PARK_RENEW_SECONDS): a lost one is re-queued.
                expected = max(expected, parse_iso(d.parked_until))
            # The re-check entry sits at the expected instant: the cursor reads it ``lag`` after its
            # minute (issue 26: filed a lag past it, a lost message waited two lags).
            if expected + lag <= now:
                lost.append((cid, d.state.value))
            else:
                recheck = expected if recheck is None else min(recheck, expected)
        if lost:
            by_type: dict[str, list[OutMessage]] = {}
            for cid, state in lost:
                by_type.setdefault(_channel_type(cid), []).append(
                    OutMessage(reminder.id, cid, reminder.version, 0)
                )
                report.by_reason[state] = report.by_reason.get(state, 0) + 1
                self.telemetry.log("watchdog_requeue", reminder_id=reminder.id, channel_id=cid, state=state)
            for channel_type, messages in by_type.items():
                self.queues.send(channel_type, messages)
            report.requeued += len(lost)
            recheck = now if recheck is None else min(recheck, now)  # judged again a lag from now
        if recheck is not None:
            # Never behind the cursor's limit (``now - lag``): its minute is not read yet. An instant
            # not lost is past it already; the guard keeps a re-check from being skipped for good.
            at = max(recheck, now - lag)
            # Conditional on the version read: a concurrent reschedule's entry must win over ours.
            if self.store.move_index(
                reminder.id,
                watch_key(reminder.id, reminder.shard, at, reminder.account_id),
                version=reminder.version,
            ):
                report.rechecks += 1


def rewind_cursors(store: ReminderStore, shards: int, to: datetime, owner: str, now: datetime) -> list[int]:
    """Set each shard's dispatch and watchdog positions back to the minute of ``to`` (never forward):
    the operator's step after rolling forward from a rollback to the code before the account tag,
    which could not see the tagged entries and moved its cursors past them (issue 28 item 3). The
    dispatcher then hands over those minutes again; what was handed over meanwhile is sent again to
    SQS and the ledger's claim sends each key once. Each cursor under its lease, as the dispatcher;
    a busy shard is left (run it again). Returns the shards rewound or already behind ``to``."""
    target = bucket_of(to)
    done: list[int] = []
    for shard in range(shards):
        cursor = store.acquire_cursor(shard, owner, now, now + timedelta(seconds=SHARD_LEASE_SECONDS))
        if cursor is None:
            continue
        # At or after the target minute: to its start (a cursor inside it may have passed its
        # tagged entries mid-minute).
        if cursor.bucket >= target:
            cursor.bucket, cursor.after, cursor.page = target, "", ""
        if cursor.watch_bucket >= target:
            cursor.watch_bucket, cursor.watch_after, cursor.watch_page = target, "", ""
        if store.save_cursor(cursor, release=True):
            done.append(shard)
    return done


def _position(entry: IndexEntry) -> str:
    return untagged_position(entry.sort_key, entry.reminder_id)


def _due_of(entry: IndexEntry) -> datetime:
    return parse_iso(sk_due(entry.sort_key))


def _channel_type(channel_id: str) -> str:
    channel_type = channel_id.split("-")[0]
    if channel_type not in CHANNEL_TYPES:
        raise ValueError("unknown channel type")
    return channel_type
