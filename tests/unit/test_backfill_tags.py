"""Issue 28 (review rev28): the backfill that rewrites due-index entries written before the account
tag into the tagged form, so that an account's preview finds reminders created before the upgrade."""

from __future__ import annotations

from reminders.domain.ports import IndexKey
from reminders.domain.schedule import ACCOUNT_TAG_LENGTH, account_tag, sk_tag

from tests.unit.fakes import World
from tests.unit.test_dispatch_tagged_index import _untag


def _sk(w: World, rid: str) -> str:
    return str(w.store.items[rid]["gsk"])


def _backfill(w: World, **kw: object):  # type: ignore[no-untyped-def]
    from reminders.services.backfill import backfill_tags

    return backfill_tags(w.store, w.clock.now, **kw)  # type: ignore[arg-type]


def test_backfill_tags_the_entries_due_after_the_horizon_once_and_leaves_the_rest() -> None:
    w = World(shards=2)
    w.run_shards()
    soon = w.create("soon", due_in=300, account_id="acct-a")  # inside the dispatch horizon
    late = [w.create(f"late{i}", due_in=86400 * (i + 1), account_id=f"acct-{i % 2}") for i in range(5)]
    tagged = w.create("tagged", due_in=4000, account_id="acct-b")
    before = {r.id: _untag(w, r.id) for r in [soon, *late]}
    kept = _sk(w, tagged.id)
    out = _backfill(w, page=2)
    assert (out.rewritten, out.after) == (5, "")
    for r in late:
        assert sk_tag(_sk(w, r.id)) == account_tag(r.account_id)
        assert _sk(w, r.id)[ACCOUNT_TAG_LENGTH:] == before[r.id][: len(before[r.id]) - len(r.id)] + r.id[4:]
    assert _sk(w, soon.id) == before[soon.id] and _sk(w, tagged.id) == kept
    again = _backfill(w)
    assert (again.rewritten, again.changed) == (0, 0)  # idempotent


def test_backfill_resumes_from_where_a_bounded_run_stopped() -> None:
    w = World(shards=1)
    rs = [w.create(f"r{i}", due_in=7200 + i) for i in range(5)]
    for r in rs:
        _untag(w, r.id)
    first = _backfill(w, page=2, max_pages=1)
    assert first.after and first.rewritten <= 2
    rest = _backfill(w, page=2, after=first.after)
    assert first.rewritten + rest.rewritten == 5 and rest.after == ""


def test_backfill_loses_to_a_correction_or_a_hand_over_made_since_it_read() -> None:
    """The race: a page read, then the row's entry moves (a correction, the dispatcher's hand-over
    to a watch entry): the conditional write refuses, the newer entry stays."""
    w = World(shards=1)
    r = w.create("raced", due_in=7200)
    old = _untag(w, r.id)
    pk = w.store.items[r.id]["gpk"]
    w.store.move_index(r.id, IndexKey(pk, old, True))  # handed over since (same key, watch)
    from reminders.services.backfill import rewrite_entry

    assert not rewrite_entry(w.store, r.id, r.account_id, pk, old)
    assert w.store.items[r.id]["w"] and _sk(w, r.id) == old


def test_a_backfilled_reminder_made_before_the_upgrade_is_sent_once() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("made-before-the-tag", due_in=3600)
    _untag(w, r.id)
    assert _backfill(w).rewritten == 1
    for _ in range(75):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert w.delivery(r.id).state.value == "delivered"
    assert len(w.sender.calls) == 1


def test_backfill_rewrites_an_entry_an_older_build_wrote_just_before_the_run_when_reads_lag() -> None:
    """Review rev28e (the explorer's seed 40): an eventually consistent Scan read the entry's image
    from before an older build rewrote it, already in this build's form, and skipped it; the
    account's preview then missed the reminder. The backfill's Scan reads consistently."""
    from reminders.adapters.stale_reads import StaleImages

    w = World(shards=1)
    r = w.create("just-written", due_in=7200)
    w.store.stale = StaleImages(5)  # replicas lag by up to five writes
    _untag(w, r.id)  # the older build's write, just before the run
    out = _backfill(w)
    assert out.rewritten == 1 and sk_tag(_sk(w, r.id)) == account_tag(r.account_id)
