"""The account-tagged due index (issue 28 item 1) against the dispatcher's timing, the rows and cursors
written before the tag (rollout) and the old code reading what this code wrote (rollback)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import bucket_of, index_pk, iso
from reminders.domain.states import DeliveryState
from reminders.services.dispatch import SAFETY_SECONDS

from tests.unit.fakes import Crash, World

LOCAL_WINDOW = 20  # the local runtime's DELAY_WINDOW_SECONDS


def _published(w: World) -> Counter[str]:
    return Counter(m["reminder_id"] for m in w.queued())


def _windowed(window: int, page_size: int = 100) -> World:
    w = World(shards=1, page_size=page_size)
    w.reminders = w.world.reminders(window_seconds=window)
    w.dispatcher = w.world.dispatcher(
        clock=w.dispatcher_clock, page_size=page_size, worker="dispatch-1", window_seconds=window
    )
    return w


def _untagged_key(due: str, rid: str) -> str:
    """A due-index sort key as written before the tag: ``<due ISO>#<reminder id>``."""
    return f"{due}#{rid}"


def _old_code_reads(position: str) -> bool:
    """What the dispatcher before the tag needs of a cursor's position in a bucket: empty, or an
    untagged key (it queries ``BETWEEN position AND <horizon ISO>#~`` and stops for good on
    anything that sorts after its range, as every tagged key does)."""
    return position == "" or position[4:5] == "-"


# -- timing: a delay window under a minute ---------------------------------------------------------
def test_dispatcher_hands_a_reminder_to_sqs_in_time_when_the_delay_window_is_under_a_minute() -> None:
    w = _windowed(LOCAL_WINDOW, page_size=3)
    w.run_shards()
    # Seven reminders in one minute (12:02:05 ... 12:02:55), two accounts, more than a page.
    rs = [w.create(f"k{i}", due_in=125 + 10 * i, account_id=f"acct-{i % 2}") for i in range(6)] + [
        w.create("k-last", due_in=179, account_id="acct-1")
    ]
    assert all(w.delivery(r.id).state is DeliveryState.SCHEDULED for r in rs)
    handed: dict[str, object] = {}
    while w.clock.now() < rs[-1].due_at + timedelta(seconds=60):
        w.clock.advance(5)  # a local tick every 5 s
        w.run_shards()
        for rid in _published(w):
            handed.setdefault(rid, w.clock.now())
    assert _published(w) == Counter(r.id for r in rs)  # each once, none skipped
    late = {r.key: (handed[r.id] - r.due_at).total_seconds() for r in rs if handed[r.id] > r.due_at}  # type: ignore[operator]
    assert late == {}


def test_a_window_of_a_quarter_hour_still_reads_whole_minutes_only() -> None:
    """The production window (900 s) hands a minute over only once it is whole: the straddling read
    is for windows too short for that (no extra index read in AWS)."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=2000)
    reads = w.store.reads
    w.clock.advance(2000 - 780 + 5)  # the horizon (now + 780 s) is 5 s past its due time, mid-minute
    (rep,) = w.run_shards()
    assert rep.dispatched == 0 and w.store.reads - reads >= 1
    w.clock.advance(60)
    (rep,) = w.run_shards()
    assert rep.dispatched == 1 and _published(w) == Counter([r.id])


# -- rollout: rows and cursors written before the tag -----------------------------------------------
def _untag(w: World, rid: str) -> str:
    """Rewrite a reminder's due-index entry as the code before the tag wrote it."""
    r = w.get(rid)
    key = _untagged_key(iso(r.due_at), rid)
    assert w.store.move_index(rid, IndexKey(index_pk(bucket_of(r.due_at), r.shard), key, False))
    return key


def test_a_row_written_before_the_tag_is_dispatched_once_after_the_upgrade() -> None:
    w = World(shards=1)
    w.run_shards()
    old = [w.create(f"old{i}", due_in=2000 + i) for i in range(3)]
    keys = [_untag(w, r.id) for r in old]
    new = w.create("new", due_in=2001.5)
    # The old code had handed over the first one and checkpointed its key mid-minute.
    cursor = w.store.acquire_cursor(0, "old-dispatcher", w.clock.now(), w.clock.now() + timedelta(seconds=1))
    assert cursor is not None
    cursor.bucket, cursor.after = bucket_of(old[0].due_at), keys[0]
    assert w.store.save_cursor(cursor, release=True)
    w.clock.advance(2000 - 780 + 61)
    w.run_shards()
    assert _published(w) == Counter([old[1].id, old[2].id, new.id])


def test_a_row_written_before_the_tag_reads_as_queued_once_the_dispatcher_passed_it() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("old", due_in=2000)
    key = _untag(w, r.id)
    cursor = w.store.acquire_cursor(0, "old-dispatcher", w.clock.now(), w.clock.now() + timedelta(seconds=1))
    assert cursor is not None
    cursor.bucket, cursor.after = bucket_of(r.due_at), key  # the old code handed it over
    assert w.store.save_cursor(cursor, release=True)
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "queued"}


# -- rollback: the code before the tag reads the cursor this code wrote -----------------------------
def test_a_rollback_finds_shard_cursors_the_code_before_the_tag_reads() -> None:
    w = World(shards=1, page_size=3, watch_lag_seconds=900)
    w.run_shards()
    ids = [w.create(f"k{i:03d}", due_in=1000 + i * 0.01, account_id=f"acct-{i}").id for i in range(10)]
    w.clock.advance(300)
    first = w.dispatcher.run_shard(0, lambda: 60.0 if w.sqs.size("webhook") < 3 else SAFETY_SECONDS - 1)
    assert first.more
    cursor = w.store.get_cursor(0)
    assert cursor is not None and _old_code_reads(cursor.after), cursor.after
    w.dispatcher.run_shard(0, lambda: 60.0)
    assert set(_published(w)) == set(ids)
    w.sqs.queues["webhook"].messages.clear()  # every message lost: the watchdog's turn
    w.clock.advance(1700)
    watch = w.dispatcher.run_shard(0, lambda: 60.0 if w.sqs.size("webhook") < 3 else SAFETY_SECONDS - 1)
    assert watch.more and 0 < watch.requeued < 10
    cursor = w.store.get_cursor(0)
    assert cursor is not None and _old_code_reads(cursor.watch_after), cursor.watch_after
    w.dispatcher.run_shard(0, lambda: 60.0)
    assert set(_published(w)) == set(ids)


def test_a_crash_in_a_straddling_pass_republishes_only_what_the_claim_absorbs() -> None:
    """A pass over the minute straddling the horizon (20 s window) dies after sending two pages and
    before their checkpoint: the next owner sends them again; the ledger's claim sends each key once."""
    w = _windowed(LOCAL_WINDOW, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=161 + 2 * i, account_id=f"acct-{i % 3}") for i in range(7)]
    w.clock.advance(160)  # 12:02:40: the horizon (12:02:55) is inside the minute, past all seven
    crashed = False

    def crash_once_six_are_out() -> bool:
        nonlocal crashed
        crashed = crashed or w.sqs.size("webhook") >= 6
        return crashed

    w.store.fail_save_cursor = crash_once_six_are_out
    with pytest.raises(Crash):
        w.run_shards()
    w.store.fail_save_cursor = None
    w.clock.advance(91)  # the dead owner's lease runs out; another instance takes the shard
    other = w.world.dispatcher(
        clock=w.dispatcher_clock, page_size=3, worker="dispatch-2", window_seconds=LOCAL_WINDOW
    )
    other.run_shard(0, lambda: 600.0)
    counts = _published(w)
    assert set(counts) == {r.id for r in rs}
    duplicates = sum(n - 1 for n in counts.values())
    assert 0 < duplicates <= 3  # the unsaved page, at most
    w.clock.advance(60)
    while w.poll():
        pass
    assert all(w.sender.sends(w.delivery(r.id).key) == 1 for r in rs)
    assert w.telemetry.counts["duplicate_suppressed"] == duplicates


def test_a_straddling_pass_sends_nothing_twice_when_the_horizon_steps_back() -> None:
    w = _windowed(LOCAL_WINDOW)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=125 + 10 * i) for i in range(4)]  # 12:02:05 ... 12:02:35
    w.clock.advance(115)  # 12:01:55: the horizon 12:02:10 covers the first
    w.run_shards()
    assert _published(w) == Counter([rs[0].id])
    w.clock.advance(-20)  # another instance's clock is behind: its horizon is before the cursor
    (rep,) = w.run_shards()
    assert rep.dispatched == 0 and rep.bad_rows == 0
    w.clock.advance(20 + 30)  # 12:02:25: the horizon 12:02:40 covers the rest
    w.run_shards()
    assert _published(w) == Counter(r.id for r in rs)


def test_a_rescheduled_reminder_reads_as_scheduled_in_the_answer_of_its_reschedule() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=2000)
    w.clock.advance(2000 - 780 + 61)  # its minute is handed over
    w.run_shards()
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "queued"}
    moved = w.reminders.reschedule(r.id, r.due_at + timedelta(hours=3))
    assert w.reminders.effective_states(moved) == {"webhook-0": "scheduled"}
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "scheduled"}


def _old_code_ran_past(w: World, minutes: int) -> None:
    """The code before the tag ran ``minutes`` minutes: its dispatcher and watchdog moved the cursor
    past every tagged entry in them without seeing one (they read untagged keys only)."""
    c = w.store.acquire_cursor(0, "old-dispatcher", w.clock.now(), w.clock.now() + timedelta(seconds=1))
    assert c is not None
    c.bucket = bucket_of(w.clock.now() + timedelta(minutes=minutes))
    c.watch_bucket, c.after, c.watch_after, c.page, c.watch_page = c.bucket, "", "", "", ""
    assert w.store.save_cursor(c, release=True)


def test_rewinding_the_cursors_after_a_rollback_dispatches_what_the_old_code_could_not_see() -> None:
    w = World(shards=1)
    w.run_shards()
    rolled_back_at = w.clock.now()
    tagged = w.create("k", due_in=1000)  # written by this code: a tagged entry
    _old_code_ran_past(w, 30)  # the rollback: the old code runs half an hour, blind to it
    w.clock.advance(1800)
    w.run_shards()  # rolled forward again
    assert _published(w) == Counter()  # its minute is behind both cursors: stranded
    from reminders.services.dispatch import rewind_cursors

    assert rewind_cursors(w.store, 1, rolled_back_at, "operator", w.clock.now()) == [0]
    w.run_shards()
    assert _published(w) == Counter([tagged.id])
    w.clock.advance(60)
    while w.poll():
        pass
    assert w.delivery(tagged.id).state is DeliveryState.DELIVERED
    assert len(w.sender.calls) == 1


def test_a_rewind_never_moves_a_cursor_forward_and_leaves_a_busy_shard_to_its_owner() -> None:
    from reminders.services.dispatch import rewind_cursors

    w = World(shards=2)
    w.run_shards()
    before = [w.store.get_cursor(s) for s in range(2)]
    w.store.acquire_cursor(1, "someone", w.clock.now(), w.clock.now() + timedelta(seconds=90))
    assert rewind_cursors(w.store, 2, w.clock.now() + timedelta(hours=1), "operator", w.clock.now()) == [0]
    after = w.store.get_cursor(0)
    assert after is not None and before[0] is not None
    assert (after.bucket, after.watch_bucket) == (before[0].bucket, before[0].watch_bucket)
