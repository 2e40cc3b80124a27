"""Issue 26: the in-memory stores' fault modes at every write and every eventually consistent read.

Stale reads: the reminder store's reads the DynamoDB adapter makes without ConsistentRead (the
controls' get, BatchGetItem, the due and attention GSIs' queries, the backfill's scan) answer an item
as it was up to ``lag`` writes ago, never from before a write older than the bound; ``get`` and the
conditional writes' answers stay consistent. Lost answers: each conditional write lands and answers
as the adapter's retry would (refused when the retry fails the write's own condition).
"""

from __future__ import annotations

from datetime import timedelta

from reminders.adapters.event_endpoints_store import MemoryEventEndpointStore
from reminders.adapters.receipts import MemoryReceiptLog
from reminders.adapters.stale_reads import StaleImages
from reminders.adapters.suppression import MemorySuppressionList
from reminders.domain.listing import ListQuery
from reminders.domain.opevents import EventEndpoint
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import WHOLE_BUCKET
from reminders.domain.states import DeliveryState
from reminders.domain.suppression import SuppressionEntry, SuppressionReason

from .fakes import World

BOUND = 60.0


def _stale(w: World, lag: int) -> None:
    w.store.stale = StaleImages(lag, seconds=BOUND, now=lambda: w.clock.now().timestamp())


def _due_entries(w: World, rid: str) -> list[str]:
    item = w.store.items[rid]
    entries, _ = w.store.query_index(item["gpk"], "", WHOLE_BUCKET, 100)
    return [e.reminder_id for e in entries]


def test_a_new_reminder_is_missing_from_the_due_index_and_batch_get_until_the_bound_when_reads_lag() -> None:
    w = World()
    _stale(w, 1)
    r = w.create(due_in=7200)
    assert w.store.get(r.id) is not None  # GetItem: consistent
    assert w.store.batch_get([r.id]) == []
    assert r.id not in _due_entries(w, r.id)
    w.clock.advance(BOUND + 1)
    assert [x.id for x in w.store.batch_get([r.id])] == [r.id]
    assert r.id in _due_entries(w, r.id)


def test_a_stale_due_index_shows_the_entry_where_it_was_before_its_move_when_reads_lag() -> None:
    w = World()
    r = w.create(due_in=7200)
    old_pk = w.store.items[r.id]["gpk"]
    _stale(w, 2)
    assert w.store.move_index(r.id, _moved(w, r.id))
    assert w.store.items[r.id]["gpk"] != old_pk
    entries, _ = w.store.query_index(old_pk, "", WHOLE_BUCKET, 100)
    assert r.id in [e.reminder_id for e in entries]
    assert r.id not in _due_entries(w, r.id)


def _moved(w: World, rid: str) -> IndexKey:
    item = w.store.items[rid]
    return IndexKey(item["gpk"] + "x", item["gsk"], bool(item.get("w", False)))


def test_the_runbook_controls_read_answers_the_switches_before_the_last_write_when_reads_lag() -> None:
    w = World()
    _stale(w, 1)
    w.store.set_controls({"consumers_paused": True})
    assert "consumers_paused" not in w.store.get_controls()
    w.clock.advance(BOUND + 1)
    assert w.store.get_controls()["consumers_paused"] is True


def test_the_attention_index_lists_a_delivery_as_it_was_before_its_last_write_when_reads_lag() -> None:
    from reminders.adapters.memory_attention import MemoryAttentionIndex

    w = World()
    r = w.create()
    _stale(w, 1)
    d = w.delivery(r.id)
    rev = d.rev
    d.state = DeliveryState.DEAD_LETTER
    assert w.store.save_delivery(r.id, d, rev)
    index = MemoryAttentionIndex(w.store)
    q = ListQuery(account_id="acct-1", limit=10)
    assert index.list(q, None)[0] == []
    w.clock.advance(BOUND + 1)
    assert [x.reminder_id for x in index.list(q, None)[0]] == [r.id]


def test_a_lost_claim_answers_refused_with_the_row_as_claimed() -> None:
    w = World()
    r = w.create()
    w.store.lose_next_answer("claim")
    now = w.clock.now()
    got = w.store.claim(r.id, "webhook-0", r.version, "w1", now, now + timedelta(seconds=60))
    assert not got.claimed
    assert got.reminder is not None
    d = got.reminder.deliveries["webhook-0"]
    assert (d.state, d.lease_owner) == (DeliveryState.SENDING, "w1")


def test_a_lost_take_over_answers_refused_and_the_lease_is_taken() -> None:
    w = World()
    r = w.create()
    now = w.clock.now()
    w.store.claim(r.id, "webhook-0", r.version, "w1", now, now + timedelta(seconds=60))
    d = w.get(r.id).deliveries["webhook-0"]
    w.clock.advance(61)
    w.store.lose_next_answer("claim_expired")
    later = w.clock.now()
    got = w.store.claim_expired(r.id, "webhook-0", d, "w2", later, later + timedelta(seconds=60))
    assert not got.claimed
    assert w.get(r.id).deliveries["webhook-0"].lease_owner == "w2"


def test_a_lost_index_move_answers_refused_only_when_it_moved_from_a_sort_key() -> None:
    w = World()
    r = w.create(due_in=7200)
    item = w.store.items[r.id]
    w.store.lose_next_answer("move_index")
    assert w.store.move_index(r.id, _moved(w, r.id), version=r.version)  # the retry's condition holds
    assert w.store.lost_answers["move_index"] == 0
    target = _moved(w, r.id)
    w.store.lose_next_answer("move_index")
    to = IndexKey(target.pk, item["gsk"] + "y", target.watch)
    assert not w.store.move_index(r.id, to, from_sk=item["gsk"])
    assert w.store.items[r.id]["gsk"] == to.sk


def test_a_lost_cursor_save_answers_refused_only_when_it_released_the_lease() -> None:
    w = World()
    now = w.clock.now()
    c = w.store.acquire_cursor(0, "d1", now, now + timedelta(seconds=60))
    assert c is not None
    w.store.lose_next_answer("save_cursor", times=2)
    assert w.store.save_cursor(c)
    assert not w.store.save_cursor(c, release=True)
    assert "lo" not in w.store.cursors[0]


def test_lost_answers_of_the_receipt_log_the_suppression_list_and_the_registrations_refuse_what_landed() -> (
    None
):
    log = MemoryReceiptLog()
    log.lose_next_answer("put_new")
    assert not log.put_new("dlv_1", "evt-1", {"status": "processed"})
    assert len(log.items) == 1
    sup = MemorySuppressionList()
    sup.lose_next_answer("add")
    h = sup.hash_of("acct-1", "a@example.com")
    entry = SuppressionEntry("acct-1", h, SuppressionReason.BOUNCE, "operator", "2026-11-29T12:00:00Z")
    assert not sup.add(entry)
    assert sup.list("acct-1")
    reg = MemoryEventEndpointStore()
    reg.put(EventEndpoint("acct-1", "ep_" + "1" * 32, ("reminder.delivered",), "2026-11-29T12:00:00Z"))
    reg.lose_next_answer("delete")
    assert not reg.delete("acct-1")
    assert reg.get("acct-1") is None
