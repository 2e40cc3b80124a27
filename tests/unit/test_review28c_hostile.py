"""Review rev28c (hostile review of helper h28t: the 16-character account tag in the due index, issue
28): each failure case found by trying to break the change is a test, strict xfail until fixed; what
was tried and held is kept as a passing test where it was cheap."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import (
    account_tag,
    sk_current,
    sk_due,
    sk_tag,
)
from reminders.services import support
from reminders.services.backfill import backfill_tags

from tests.unit.fakes import World
from tests.unit.test_previous_tag_form import retag_previous


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
