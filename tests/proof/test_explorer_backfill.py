"""The explorer's operator action ``backfill`` (issue 28's upgrade, ``reminders backfill-tags``) puts
back the untagged form of dispatch *and* watch entries before the backfill runs, so the backfill's
rewrite of watch entries (review rev28b) is exercised too."""

from __future__ import annotations

from typing import Any

import pytest
from reminders.domain.schedule import sk_tag, watch_key
from reminders.services import backfill
from reminders_ops.proof.explorer.engine import Explorer, _quiet


def test_the_backfill_action_untags_and_rewrites_a_watch_entry_when_one_is_far_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rewritten: list[tuple[str, bool]] = []
    real = backfill.rewrite_entry

    def spy(store: Any, reminder_id: str, account_id: str, pk: str, sk: str, *, watch: bool = False) -> bool:
        rewritten.append((reminder_id, watch))
        return real(store, reminder_id, account_id, pk, sk, watch=watch)

    monkeypatch.setattr(backfill, "rewrite_entry", spy)
    explorer = Explorer(7)
    w = _quiet()
    try:
        with explorer.sim.installed():
            explorer.execute(("POST /reminders", {"as": "acct-a", "i": 0, "v": 0, "due": 7200, "key": 1}))
            store = explorer.sim.store
            (rid,) = [r for r, item in store.items.items() if "gpk" in item]
            reminder = store.get(rid)
            assert reminder is not None
            # a retry's or deferral's re-check entry, hours ahead (past the widest dispatch horizon)
            assert store.move_index(
                rid,
                watch_key(rid, reminder.shard, reminder.due_at, reminder.account_id),
                version=reminder.version,
            )
            explorer.execute(("backfill", {"i": 1, "v": 0}))
    finally:
        w.__exit__(None, None, None)
    assert rewritten == [(rid, True)]
    item = store.items[rid]
    assert item["w"] and sk_tag(item["gsk"])
