"""Review rev28 (hostile review of issue 28's account-tagged due index): each test a failure case
found by trying to break the change; strict xfail until fixed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from reminders.domain import schedule
from reminders.domain.schedule import bucket_of, iso
from reminders.services import support
from reminders.services.dispatch import rewind_cursors

from tests.unit.fakes import World


def _ids(out: dict[str, Any]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}


def test_preview_still_promises_a_queued_reminder_when_a_shard_cursor_is_more_than_six_hours_behind() -> None:
    """A dispatcher paused for seven hours (its rule disabled): a reminder created within SQS's window
    goes to SQS at once and the consumer sends it; the account's preview must still list it (it read no
    minute at all: ``_first_bucket``'s truncated stopped the read loop before its first minute)."""
    w = World(shards=1)
    w.run_shards()  # the shard's cursor exists; then no dispatcher run for seven hours
    w.clock.advance(7 * 3600)
    r, _ = w.reminders.create(w.new("due-in-5-min", due_in=300))
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=r.account_id)
    w.clock.advance(300)
    assert [x.outcome for x in w.poll()] == ["delivered"]  # what then happens
    assert r.id in _ids(out), out
    assert out["truncated"]  # it read from six hours back only: it says it may miss some


def test_rewind_dispatches_a_stranded_reminder_when_the_cursor_is_still_in_the_rollbacks_minute() -> None:
    """Local runtime (20 s window): the rollback began at 12:15:10; the old code handed over its
    (untagged) entries of that minute up to 12:15:50 and left ``after`` there, blind to a tagged entry
    due 12:15:30; rolled forward at 12:15:40, the operator rewinds to 12:15:10 at once."""
    w = World(shards=1)
    w.run_shards()
    r, _ = w.reminders.create(w.new("tagged", due_in=930))  # 12:15:30, written by this build
    rolled_back_at = r.due_at - timedelta(seconds=20)
    c = w.store.acquire_cursor(0, "old-dispatcher", w.clock.now(), w.clock.now() + timedelta(seconds=1))
    assert c is not None
    c.bucket = c.watch_bucket = bucket_of(r.due_at)
    c.after = f"{iso(r.due_at + timedelta(seconds=20))}#rem_{'f' * 32}"  # an untagged key, past r
    c.watch_after = c.page = c.watch_page = ""
    assert w.store.save_cursor(c, release=True)
    w.clock.advance(930 - 20)  # 12:15:40: rolled forward
    assert rewind_cursors(w.store, 1, rolled_back_at, "operator", w.clock.now()) == [0]
    w.clock.advance(60)
    w.run_shards()
    assert r.id in {m["reminder_id"] for m in w.queued()}


#: Two account ids whose tags collided in the previous build, whose tag had 40 bits (found in 7 s by
#: a birthday search over "acct-<n>"). This build's 80-bit tags differ (test_previous_tag_form.py);
#: the tests of a collision force one (``_collide``).
COLLIDING = ("acct-1493128", "acct-1675534")


def _collide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force COLLIDING's two accounts to share one tag (as 40 bits let them): every other account
    keeps its own."""
    a, b = COLLIDING
    real = schedule.account_tag
    monkeypatch.setattr(schedule, "account_tag", lambda acct: real(a if acct == b else acct))


def test_an_accounts_preview_is_unaffected_when_a_colliding_accounts_reminders_fill_its_tag_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = COLLIDING
    _collide(monkeypatch)
    assert schedule.account_tag(a) == schedule.account_tag(b)
    w = World(shards=1)
    for i in range(3):  # the other tenant's reminders, due first, in the same key range
        w.reminders.create(w.new(f"other-{i}", due_in=60, account_id=a))
    mine, _ = w.reminders.create(w.new("mine", due_in=120, account_id=b))
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=b, max_rows=2)
    assert (_ids(out), out["truncated"]) == ({mine.id}, False)


def test_get_reads_queued_when_the_dispatcher_stopped_mid_minute_after_handing_it_to_sqs() -> None:
    w = World(shards=1, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(7)]
    w.clock.advance(2000 - 780 + 61)  # the minute is wholly inside the horizon
    (rep,) = w.run_shards(lambda: 60.0 if w.sqs.size("webhook") < 3 else 0.0)  # the budget ends
    assert rep.more
    handed = {m["reminder_id"] for m in w.queued()}
    assert 0 < len(handed) < len(rs)
    states = {r.id: w.reminders.effective_states(w.get(r.id))["webhook-0"] for r in rs}
    assert {rid for rid, s in states.items() if s == "queued"} == handed


def test_preview_promises_a_reminder_created_before_the_upgrade_when_it_comes_due() -> None:
    from tests.unit.test_dispatch_tagged_index import _untag

    w = World(shards=1)
    w.run_shards()
    r, _ = w.reminders.create(w.new("made-before-the-tag", due_in=1200))
    _untag(w, r.id)  # its entry as the build before the tag wrote it
    from reminders.services.backfill import backfill_tags

    backfill_tags(w.store, w.clock.now)  # the upgrade's step (docs/incoming/h28b.md)
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=r.account_id)
    for _ in range(30):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert w.delivery(r.id).state.value == "delivered"  # what happens
    assert r.id in _ids(out)


def test_an_accounts_preview_reads_a_colliding_accounts_rows_only_up_to_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows of a colliding account are read to be dropped: at most MAX_COLLIDING_ROWS, then the
    answer says ``truncated`` (it may miss some of the account's own)."""
    a, b = COLLIDING
    _collide(monkeypatch)
    monkeypatch.setattr(support, "MAX_COLLIDING_ROWS", 2)
    w = World(shards=1)
    for i in range(4):
        w.reminders.create(w.new(f"other-{i}", due_in=60, account_id=a))
    mine, _ = w.reminders.create(w.new("mine", due_in=120, account_id=b))
    asked: list[str] = []
    batch_get = w.store.batch_get
    monkeypatch.setattr(w.store, "batch_get", lambda ids, **kw: asked.extend(ids) or batch_get(ids, **kw))
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=b)
    assert out["truncated"] and not _ids(out) - {mine.id}
    assert len(asked) == 5  # read once each (all in one page here); no row of another tag
