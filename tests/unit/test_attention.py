"""The sparse attention attributes: derived from the deliveries by the codec, settled after a
delivery's write only when they change, cleared by the whole-item writes (cancel, correction)."""

from __future__ import annotations

import pytest
from reminders.adapters.codec import attention_of
from reminders.adapters.memory_attention import MemoryAttentionIndex
from reminders.domain.errors import ValidationError
from reminders.domain.listing import ListQuery
from reminders_ops.bench import attention as attention_bench

from tests.unit.fakes import World


def test_a_first_time_delivery_costs_no_attention_write() -> None:
    row = attention_bench.measure(20, "ok")
    assert row["attention_settle_writes_per_reminder"] == 0
    assert row["attention_index_writes_per_reminder"] == 0


def test_a_retry_enters_the_index_and_its_delivery_leaves_it() -> None:
    w = World()
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["429"])
    w.poll()
    assert attention_of(w.get(r.id))["nxs"].startswith("retryable#")
    assert w.store.items[r.id]["nx"] == "acct-1"
    w.clock.advance(3600)
    w.poll()
    assert "nx" not in w.store.items[r.id] and attention_of(w.get(r.id)) == {}


def test_a_held_channel_and_a_dead_letter_are_listed_most_urgent_first() -> None:
    w = World()
    held = w.create("held", due_in=0)
    dead = w.create("dead", due_in=0)
    w.sender.script(held.deliveries["webhook-0"].key, ["config"])
    w.sender.script(dead.deliveries["webhook-0"].key, ["400"])
    w.poll()
    index = MemoryAttentionIndex(w.store)
    page, cursor = index.list(ListQuery("acct-1"), None)
    assert [(x.reminder_id, x.attention) for x in page] == [(dead.id, "dead_letter"), (held.id, "held")]
    assert cursor is None
    page, cursor = index.list(ListQuery("acct-1", limit=1), None)
    assert [x.reminder_id for x in page] == [dead.id] and cursor
    page, _ = index.list(ListQuery("acct-1", limit=1), cursor)
    assert [x.reminder_id for x in page] == [held.id]
    with pytest.raises(ValidationError, match="cursor"):
        index.list(ListQuery("acct-2", limit=1), cursor)
    w.reminders.cancel(dead.id)  # the cancel's own write clears it
    assert [x.reminder_id for x in index.list(ListQuery("acct-1"), None)[0]] == [held.id]
