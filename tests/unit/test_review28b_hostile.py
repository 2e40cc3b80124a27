"""Review rev28b (hostile review of ``reminders backfill-tags`` and the colliding-tag preview bound,
issue 28): each test a failure case found by trying to break the change; strict xfail until fixed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.schedule import account_tag, sk_due
from reminders.services import support

from tests.unit.fakes import World
from tests.unit.test_dispatch_tagged_index import _untag
from tests.unit.test_review28_hostile import COLLIDING


def _ids(out: dict[str, Any]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}


def _preview_of_b(other_rows: int, monkeypatch: pytest.MonkeyPatch) -> tuple[set[str], bool, str]:
    a, b = COLLIDING
    monkeypatch.setattr(support, "MAX_COLLIDING_ROWS", 2)  # 1,000 in production: same shape
    w = World(shards=1)
    for i in range(other_rows):  # the colliding tenant's reminders, due first in the shared range
        w.reminders.create(w.new(f"other-{i}", due_in=60, account_id=a))
    mine, _ = w.reminders.create(w.new("mine", due_in=120, account_id=b))
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id=b)
    return _ids(out), bool(out["truncated"]), mine.id


def test_a_colliding_accounts_volume_does_not_cross_into_another_accounts_preview(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was: past MAX_COLLIDING_ROWS of A's rows B's answer said truncated (B learnt A had more than
    the bound due in the window; A could cut B's answer). Closed by the 80-bit tag (helper h28t):
    the pair that collided on the previous build's 40 bits now has two key ranges."""
    a, b = COLLIDING
    assert account_tag(a) != account_tag(b)
    alone = _preview_of_b(0, monkeypatch)
    crowded = _preview_of_b(4, monkeypatch)  # A: bound + 2 reminders in B's window
    assert alone == ({alone[2]}, False, alone[2])
    assert crowded[:2] == ({crowded[2]}, False)


def test_backfill_with_the_operators_clock_behind_never_loses_nor_double_sends() -> None:
    """Held: the backfill's horizon guard reads the operator's machine's clock (one minute of margin);
    ten minutes behind, it rewrites entries of the minute a dispatcher pass is paging through. Every
    tagged key sorts after every untagged one (years 2000-2099), so a rewritten entry moves forward
    past the page position: re-read (a second message), never skipped; the consumer sends once."""
    w = World(shards=1, page_size=3)
    w.run_shards()
    rs = [w.create(f"k{i}", due_in=2000 + i, account_id=f"acct-{i}") for i in range(6)]
    for r in rs:
        _untag(w, r.id)
    w.clock.advance(2000 - 780 + 61)  # the minute is wholly inside the horizon
    (rep,) = w.run_shards(lambda: 60.0 if w.sqs.size("webhook") < 3 else 0.0)  # the budget ends
    assert rep.more
    from reminders.services.backfill import backfill_tags

    lagging = lambda: w.clock.now() - timedelta(minutes=10)  # noqa: E731
    out = backfill_tags(w.store, lagging)
    assert out.rewritten == len(rs)  # the guard let it through: entries of a minute being paged
    for _ in range(40):
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    assert len(w.sender.calls) == len(rs)
    assert all(w.delivery(r.id).state.value == "delivered" for r in rs)


def test_preview_promises_a_retry_the_build_before_the_tag_put_on_watch_after_the_backfill() -> None:
    from reminders.domain.ports import IndexKey
    from reminders.services.backfill import backfill_tags

    w = World(shards=1)
    w.run_shards()
    r = w.create("retried-before-the-tag", due_in=60)
    w.sender.script(w.delivery(r.id).key, ["429_retry_after_4h"])
    for _ in range(20):  # sent once, answered 429 with Retry-After 4 h; the watchdog re-arms it
        w.clock.advance(60)
        w.run_shards()
        w.poll()
    item = w.store.items[r.id]
    assert w.delivery(r.id).state.value == "retryable" and item["w"]
    out = support.preview(w.store, w.clock.now(), 300, w.shards, account_id=r.account_id)
    assert r.id in _ids(out)  # its tagged watch entry: promised
    sk = str(item["gsk"])
    untagged = f"{sk_due(sk)}#{r.id}"
    assert w.store.move_index(r.id, IndexKey(str(item["gpk"]), untagged, True))  # as the old build wrote it
    backfill_tags(w.store, w.clock.now)  # the upgrade's step (docs/incoming/h28b.md)
    out = support.preview(w.store, w.clock.now(), 300, w.shards, account_id=r.account_id)
    assert r.id in _ids(out)
