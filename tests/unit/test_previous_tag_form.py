"""Issue 28's last cross-tenant residual (helper h28t): the account tag grew from the previous build's
8 base32 characters (40 bits: a collision was brute-forced in seconds) to 16 (80 bits). The due index
then holds entries of three forms: untagged (before the tag), the previous build's 8-character tag,
and this build's. Every reader takes all three; ``reminders backfill-tags`` rewrites the two old ones."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from datetime import datetime, timedelta

from reminders.domain.ports import IndexKey
from reminders.domain.schedule import account_tag, sk_tag
from reminders.domain.states import DeliveryState
from reminders.services import support

from tests.unit.fakes import World
from tests.unit.test_review28_hostile import COLLIDING

PREVIOUS_LENGTH = 8  # characters of the previous build's tag


def previous_tag(account_id: str) -> str:
    """The tag the previous build gave an account: base32 of a 40-bit blake2b of its id."""
    digest = hashlib.blake2b(account_id.encode(), digest_size=5).digest()
    return base64.b32encode(digest).decode().lower()


def retag_previous(w: World, rid: str) -> str:
    """Rewrite a row's due-index entry (same partition, same kind) as the previous build wrote it:
    ``<8-char tag><due ISO>#<id hex>``. Returns the new sort key."""
    item = w.store.items[rid]
    sk, watch = str(item["gsk"]), bool(item.get("w", False))
    hex_id = rid.removeprefix("rem_")
    due = sk[: -len(hex_id) - 1][-len("2026-11-29T12:00:00.000000Z") :]
    key = f"{previous_tag(str(item['acct']))}{due}#{hex_id}"
    assert w.store.move_index(rid, IndexKey(str(item["gpk"]), key, watch), from_sk=sk)
    return key


def _ids(out: dict[str, object]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}  # type: ignore[attr-defined]


def test_the_previous_builds_colliding_pair_shares_no_tag() -> None:
    a, b = COLLIDING
    assert previous_tag(a) == previous_tag(b)  # the 40-bit collision found by a birthday search
    assert account_tag(a) != account_tag(b)


def test_backfill_rewrites_an_entry_of_the_previous_builds_tag_to_the_accounts_tag() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("tagged-by-the-previous-build", due_in=7200, account_id="acct-old")
    old = retag_previous(w, r.id)
    from reminders.services.backfill import backfill_tags

    out = backfill_tags(w.store, w.clock.now)
    new = str(w.store.items[r.id]["gsk"])
    assert out.rewritten == 1 and new != old
    assert sk_tag(new) == account_tag(r.account_id) and len(sk_tag(new)) == 16
    preview = support.preview(w.store, w.clock.now(), 130, w.shards, account_id=r.account_id)
    assert r.id in _ids(preview)


def _published(w: World) -> Counter[str]:
    return Counter(m["reminder_id"] for m in w.queued())


def test_an_entry_of_the_previous_builds_tag_is_handed_to_sqs_before_its_due_time_and_sent_once() -> None:
    """Before the backfill: the dispatcher reads whole minutes, whatever the entries' forms."""
    w = World(shards=1)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(4)]
    for r in rs[:2]:
        retag_previous(w, r.id)
    handed: dict[str, datetime] = {}
    while w.clock.now() < rs[-1].due_at + timedelta(minutes=2):
        w.clock.advance(60)
        w.run_shards()
        for rid in _published(w):
            handed.setdefault(rid, w.clock.now())
        w.poll()
    assert all(handed[r.id] < r.due_at for r in rs)
    assert _published(w) == Counter() and len(w.sender.calls) == len(rs)
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in rs)


def test_an_entry_of_the_previous_builds_tag_is_previewed_once_the_backfill_rewrote_it() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("made-by-the-previous-build", due_in=1800, account_id="acct-old")
    retag_previous(w, r.id)
    before = support.preview(w.store, w.clock.now(), 60, w.shards, account_id=r.account_id)
    assert r.id not in _ids(before)  # the upgrade's gap until the backfill (docs/incoming/h28t.md)
    from reminders.services.backfill import backfill_tags

    assert backfill_tags(w.store, w.clock.now).rewritten == 1
    after = support.preview(w.store, w.clock.now(), 60, w.shards, account_id=r.account_id)
    assert r.id in _ids(after)


def test_the_watchdog_requeues_a_lost_message_of_an_entry_of_the_previous_builds_tag() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("lost", due_in=2000)
    retag_previous(w, r.id)
    w.clock.advance(2000 - 780 + 61)
    w.run_shards()
    assert _published(w) == Counter([r.id])
    w.sqs.queues["webhook"].messages.clear()  # the message is lost
    requeued = 0
    for _ in range(40):
        w.clock.advance(60)
        requeued += sum(rep.requeued for rep in w.run_shards())
        w.poll()
    assert requeued == 1 and w.delivery(r.id).state is DeliveryState.DELIVERED


def test_a_late_hand_over_of_a_previous_builds_entry_is_rechecked_under_this_builds_tag() -> None:
    """A paused dispatcher hands an entry of the previous build's tag over after its due time: its
    re-check entry carries this build's tag, read from the row (the account's preview reads that
    range only; rev26w), and the watchdog judges it as any other."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("late", due_in=2000)
    old = retag_previous(w, r.id)
    w.clock.advance(2100)  # the dispatcher was paused past its due time
    w.run_shards()
    item = w.store.items[r.id]
    assert len(sk_tag(old)) == PREVIOUS_LENGTH
    assert item["w"] and sk_tag(str(item["gsk"])) == account_tag(r.account_id)
    w.sqs.queues["webhook"].messages.clear()  # and the message is lost
    for _ in range(40):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert w.delivery(r.id).state is DeliveryState.DELIVERED and len(w.sender.calls) == 1


def test_get_reads_queued_for_entries_of_the_previous_builds_tag_the_dispatcher_handed_mid_minute() -> None:
    w = World(shards=1, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(7)]
    for r in rs[::2]:
        retag_previous(w, r.id)
    assert all(w.reminders.effective_states(w.get(r.id))["webhook-0"] == "scheduled" for r in rs)
    w.clock.advance(2000 - 780 + 61)
    (rep,) = w.run_shards(lambda: 60.0 if w.sqs.size("webhook") < 3 else 0.0)  # the budget ends
    assert rep.more
    handed = {m["reminder_id"] for m in w.queued()}
    assert 0 < len(handed) < len(rs)
    states = {r.id: w.reminders.effective_states(w.get(r.id))["webhook-0"] for r in rs}
    assert {rid for rid, s in states.items() if s == "queued"} == handed


def test_rewind_after_a_rollback_to_the_previous_build_dispatches_what_it_could_not_read() -> None:
    """The previous build reads this build's 16-character entries as bad rows (it slices 8): rolled
    forward, the operator's ``rewind-dispatch`` hands them over; what it sent is not sent twice."""
    from reminders.services.dispatch import rewind_cursors

    from tests.unit.test_dispatch_tagged_index import _old_code_ran_past

    w = World(shards=1)
    w.run_shards()
    rolled_back_at = w.clock.now()
    mine = w.create("this-build", due_in=1000, account_id="acct-a")
    theirs = w.create("previous-build", due_in=1001, account_id="acct-b")
    retag_previous(w, theirs.id)  # written by the previous build during the rollback
    w.clock.advance(1000 - 780 + 61)
    w.run_shards()  # (this build hands both over: the previous build would have handed only theirs)
    w.sqs.queues["webhook"].messages.clear()
    w.run_shards()
    _old_code_ran_past(w, 30)
    w.clock.advance(1800)
    assert rewind_cursors(w.store, 1, rolled_back_at, "operator", w.clock.now()) == [0]
    w.run_shards()
    assert _published(w) == Counter([mine.id, theirs.id])
    w.clock.advance(60)
    while w.poll():
        pass
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in (mine, theirs))
    assert len(w.sender.calls) == 2


def test_a_lagging_backfill_of_the_previous_builds_entries_never_loses_nor_double_sends() -> None:
    """As for untagged entries (test_review28b_hostile): ten minutes behind, the guard lets the
    rewrite touch a minute a dispatcher pass is paging through; the rewrite moves each entry forward
    (this build's tag begins with the previous build's), so it is re-read, never skipped."""
    from reminders.services.backfill import backfill_tags

    w = World(shards=1, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(6)]
    for r in rs:
        retag_previous(w, r.id)
    w.clock.advance(2000 - 780 + 61)  # the minute is wholly inside the horizon
    (rep,) = w.run_shards(lambda: 60.0 if w.sqs.size("webhook") < 3 else 0.0)  # the budget ends
    assert rep.more
    lagging = lambda: w.clock.now() - timedelta(minutes=10)  # noqa: E731
    assert backfill_tags(w.store, lagging).rewritten == len(rs)
    for _ in range(40):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert len(w.sender.calls) == len(rs)
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in rs)
    assert w.telemetry.counts["watchdog_requeued"] == 0  # none skipped then rescued late
