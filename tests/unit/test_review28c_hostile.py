"""Review rev28c (hostile review of helper h28t: the 16-character account tag in the due index, issue
28): each failure case found by trying to break the change is a test, strict xfail until fixed; what
was tried and held is kept as a passing test where it was cheap."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import (
    account_range,
    account_tag,
    index_sk,
    iso,
    sk_current,
    sk_due,
    sk_tag,
    tagged_sk,
)
from reminders.domain.states import DeliveryState
from reminders.services import support
from reminders.services.backfill import backfill_tags

from tests.unit.fakes import World
from tests.unit.test_previous_tag_form import previous_tag, retag_previous
from tests.unit.test_review28_hostile import COLLIDING


def _ids(out: dict[str, Any]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}


def _published(w: World) -> Counter[str]:
    return Counter(m["reminder_id"] for m in w.queued())


def _retag(w: World, rid: str, tag: str) -> str:
    """Rewrite a row's due-index entry (same partition, same kind) with ``tag`` leading its key, as a
    build with another tag length wrote it (a later build's, before a rollback to this one)."""
    item = w.store.items[rid]
    sk, watch = str(item["gsk"]), bool(item.get("w", False))
    key = f"{tag}{sk_due(sk)}#{rid.removeprefix('rem_')}"
    assert w.store.move_index(rid, IndexKey(str(item["gpk"]), key, watch), from_sk=sk)
    return key


def _longer_tag(account_id: str, length: int) -> str:
    """A tag of ``length`` base32 characters beginning with the account's (a later build's, say)."""
    return (account_tag(account_id) * 2)[:length]


# -- findings --------------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [5, 12, 24])
def test_get_fails_when_a_reminders_entry_carries_a_tag_of_neither_known_length(length: int) -> None:
    """A rollback from a later build (a longer tag) to this one: this build repeats the previous
    build's mistake (docs/incoming/h28t.md: its GET fails on a 16-char entry) one step on. The tag
    is base32 (no dash): the due time's first dash gives the tag's length whatever it is."""
    w = World(shards=1)
    w.run_shards()  # the shard's cursor exists (always, in production)
    r = w.create("later-build", due_in=7200)
    _retag(w, r.id, _longer_tag(r.account_id, length))
    assert w.reminders.effective_states(w.get(r.id)) == {"webhook-0": "scheduled"}


@pytest.mark.parametrize("length", [5, 12, 24])
def test_dispatcher_counts_a_bad_row_and_delivers_late_when_an_entry_has_a_tag_of_neither_length(
    length: int,
) -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("later-build", due_in=2000)
    _retag(w, r.id, _longer_tag(r.account_id, length))
    handed = None
    while w.clock.now() < r.due_at + timedelta(minutes=20) and handed is None:
        w.clock.advance(60)
        w.run_shards()
        if _published(w)[r.id]:
            handed = w.clock.now()
    assert w.telemetry.counts.get("bad_row", 0) == 0
    assert handed is not None and handed < r.due_at


@pytest.mark.parametrize("length", [5, 24])
def test_backfill_leaves_unpreviewed_or_crashes_when_an_entry_has_a_tag_of_neither_length(
    length: int,
) -> None:
    """5 characters read as the previous build's 8 (its month's dash is the 13th character): the
    backfill's horizon check raises and the whole run stops, before printing where to resume. 24
    read as this build's 16: left as current, never previewed."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("later-build", due_in=7200)
    _retag(w, r.id, _longer_tag(r.account_id, length))
    assert backfill_tags(w.store, w.clock.now).rewritten == 1
    assert sk_tag(str(w.store.items[r.id]["gsk"])) == account_tag(r.account_id)
    out = support.preview(w.store, w.clock.now(), 130, w.shards, account_id=r.account_id)
    assert r.id in _ids(out)


#: An entry no reader can decode: read as untagged (a dash 5th), its due time is no time.
BAD_KEY = "2026-13-45T99:00:00.000000Z#rem_x"


def test_backfill_stops_for_good_when_one_entry_is_undecodable() -> None:
    """One entry of a form no reader knows (no due time in it) stops every run at the same row: the
    CLI prints ``after`` only at the end, so the operator can neither finish nor skip it. The
    dispatcher counts such an entry as a bad row and goes on; the backfill should too."""
    w = World(shards=1)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=7200 + i, account_id=f"acct-{i}") for i in range(3)]
    retag_previous(w, rs[0].id)
    retag_previous(w, rs[2].id)
    item = w.store.items[rs[1].id]
    assert w.store.move_index(rs[1].id, IndexKey(str(item["gpk"]), BAD_KEY, False), from_sk=item["gsk"])
    out = backfill_tags(w.store, w.clock.now)
    assert (out.rewritten, out.bad, out.after) == (2, 1, "")
    assert all(sk_current(str(w.store.items[r.id]["gsk"])) for r in (rs[0], rs[2]))


def test_get_reads_scheduled_for_a_handed_over_reminder_when_a_lagging_backfill_moved_it() -> None:
    """With the operator's clock ten minutes behind (the guard's margin is one minute) the backfill
    rewrites entries of the minute a dispatcher pass is paging through, moving them forward in the
    partition. Failed on h28t (GET placed the row's new key against the page's last key: ``scheduled``
    for a reminder whose message was in SQS); holds since h28c's pass keeps its position in due
    order (the untagged form), which a rewrite of the tag does not move."""
    w = World(shards=1, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(6)]
    for r in rs:
        retag_previous(w, r.id)
    w.clock.advance(2000 - 780 + 61)
    (rep,) = w.run_shards(lambda: 60.0 if w.sqs.size("webhook") < 3 else 0.0)  # the budget ends
    handed = {m["reminder_id"] for m in w.queued()}
    assert rep.more and len(handed) == 3
    assert backfill_tags(w.store, lambda: w.clock.now() - timedelta(minutes=10)).rewritten == len(rs)
    states = {r.id: w.reminders.effective_states(w.get(r.id))["webhook-0"] for r in rs}
    assert {rid for rid, st in states.items() if st == "queued"} == handed


# -- held ------------------------------------------------------------------------------------------
HOSTILE_IDS = ["", "-", "acct-", "a-b-c-d-e", "#", "~", "a#b~c", "2026-01-01T00:00:00Z", "é\u202e", "x" * 300]


def test_every_form_parses_back_whatever_the_account_id_or_the_due_time() -> None:
    """Held: a tag is base32 (no dash, no ``#``), whatever the account id; the due time is written
    in UTC with four-digit years and six-digit fractions, whatever the offset or the year given."""
    rng = random.Random(28)
    ids = HOSTILE_IDS + [f"acct-{rng.randrange(10**9)}" for _ in range(300)]
    plus5 = timezone(timedelta(hours=5, minutes=30))
    dues = [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 12, 2, 12, 0, 0, 1, tzinfo=plus5),
        datetime(2222, 2, 2, tzinfo=UTC),  # year digits that are base32 characters
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ]
    for account in ids:
        tag = account_tag(account)
        assert len(tag) == 16 and tag.startswith(previous_tag(account)) and "-" not in tag
        for due in dues:
            for form_tag in ("", previous_tag(account), tag):
                sk = tagged_sk(due, "rem_" + "ab" * 16, form_tag)
                assert (sk_tag(sk), sk_due(sk)) == (form_tag, iso(due))
                assert sk_current(sk) == (form_tag == tag)


def test_no_other_accounts_entry_of_any_form_or_year_lies_in_an_accounts_range() -> None:
    """Held, including the pair that shares the previous build's 40-bit tag: the range starts with
    the 16-char tag, and any other key has a dash, or another character, within its first 16."""
    a, b = COLLIDING
    lo, hi = account_range(a)
    for year in (1, 999, 2026, 2222, 2345, 7777, 9999):
        due = datetime(year, 6, 1, tzinfo=UTC)
        for tag in ("", previous_tag(b), account_tag(b), previous_tag(a)):
            assert not lo < tagged_sk(due, "rem_" + "cd" * 16, tag) < hi
        assert lo < index_sk(due, "rem_" + "cd" * 16, a) < hi


def test_an_accounts_preview_ignores_entries_of_the_previous_builds_tag_it_shares_with_another() -> None:
    """Held: B's entries of the previous build's tag (which A's also begins with) in A's minutes
    are neither listed, counted nor read by A's preview; both are delivered."""
    a, b = COLLIDING
    w = World(shards=1)
    w.run_shards()
    mine = w.create("mine", due_in=1200, account_id=a)
    theirs = [w.create(f"theirs-{i}", due_in=1200 + i, account_id=b) for i in range(5)]
    for r in theirs:
        retag_previous(w, r.id)
    asked: list[str] = []
    batch_get = w.store.batch_get

    def recording(ids: list[str], **kw: Any) -> Any:
        asked.extend(ids)
        return batch_get(ids, **kw)

    w.store.batch_get = recording  # type: ignore[method-assign]
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=a)
    del w.store.batch_get
    assert _ids(out) == {mine.id} and not out["truncated"] and asked == [mine.id]  # none of B's rows
    for _ in range(30):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in [mine, *theirs])


def _hook_scan(monkeypatch: pytest.MonkeyPatch, w: World, race: Callable[[], None]) -> None:
    """Run ``race`` once, between the backfill's scan page and its conditional rewrites."""
    scan = w.store.scan_index_entries
    fired: list[bool] = []

    def hooked(after: str, limit: int) -> Any:
        out = scan(after, limit)
        if not fired:
            fired.append(True)
            race()
        return out

    monkeypatch.setattr(w.store, "scan_index_entries", hooked)


def test_a_reschedule_between_the_backfills_scan_and_its_rewrite_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("moved", due_in=7200, account_id="acct-x")
    retag_previous(w, r.id)
    new_due = r.due_at + timedelta(hours=1)
    _hook_scan(monkeypatch, w, lambda: w.reminders.reschedule(r.id, new_due) and None)
    out = backfill_tags(w.store, w.clock.now)
    assert (out.rewritten, out.changed) == (0, 1)
    item = w.store.items[r.id]
    assert item["gsk"] == index_sk(new_due, r.id, r.account_id)


def test_a_row_expired_between_the_backfills_scan_and_its_rewrite_is_not_brought_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("ttl", due_in=7200)
    retag_previous(w, r.id)

    def expire() -> None:  # TTL deletes the item (and its index entry)
        w.store._unindex(w.store.items[r.id])
        del w.store.items[r.id]

    _hook_scan(monkeypatch, w, expire)
    out = backfill_tags(w.store, w.clock.now)
    assert (out.rewritten, out.changed) == (0, 1) and r.id not in w.store.items
    assert not any(rid == r.id for rows in w.store.index.values() for _, rid in rows)


def test_two_backfills_racing_rewrite_each_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(shards=1)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=7200 + i, account_id=f"acct-{i}") for i in range(4)]
    for r in rs:
        retag_previous(w, r.id)
    other: list[Any] = []
    _hook_scan(monkeypatch, w, lambda: other.append(backfill_tags(w.store, w.clock.now)))
    first = backfill_tags(w.store, w.clock.now)  # its scan read, then the other ran whole
    assert (other[0].rewritten, first.rewritten, first.changed) == (4, 0, 4)
    assert all(sk_tag(str(w.store.items[r.id]["gsk"])) == account_tag(r.account_id) for r in rs)


def test_a_lost_answer_of_the_backfills_rewrite_then_a_rerun_leaves_the_entry_rewritten_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Held (the entry is right); the first run counts the rewrite it made as ``changed`` (the
    DynamoDB adapter's retry failed its condition: the write was there), which over-reports races."""
    w = World(shards=1)
    w.run_shards()
    r = w.create("lost-answer", due_in=7200, account_id="acct-l")
    retag_previous(w, r.id)
    move = w.store.move_index

    def lossy(rid: str, index: IndexKey, **kw: Any) -> bool:
        move(rid, index, **kw)
        return False  # the write landed, the answer was lost (adapters/lost_answers.py)

    monkeypatch.setattr(w.store, "move_index", lossy)
    first = backfill_tags(w.store, w.clock.now)
    monkeypatch.undo()
    again = backfill_tags(w.store, w.clock.now)
    assert (first.rewritten, first.changed, again.rewritten, again.changed) == (0, 1, 0, 0)
    assert sk_tag(str(w.store.items[r.id]["gsk"])) == account_tag(r.account_id)
    out = support.preview(w.store, w.clock.now(), 130, w.shards, account_id=r.account_id)
    assert r.id in _ids(out)
