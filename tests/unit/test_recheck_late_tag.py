"""The dispatcher's re-check entry for a late hand-over (``Dispatcher._recheck_late``) of an entry
written before the account tag (issue 28, review suspicion): the re-check entry is the only due-index
entry of a delivery that then waits for a retry, so it must carry the account's tag or the account's
preview, which reads only its tag's key range, does not promise that retry."""

from __future__ import annotations

from reminders.domain.ports import IndexKey
from reminders.domain.schedule import account_tag, bucket_of, index_pk, iso, sk_tag
from reminders.domain.states import DeliveryState
from reminders.services import support

from tests.unit.fakes import World


def _untag(w: World, rid: str) -> None:
    """The reminder's due-index entry as the code before the tag wrote it (``<due ISO>#<id>``)."""
    r = w.get(rid)
    key = IndexKey(index_pk(bucket_of(r.due_at), r.shard), f"{iso(r.due_at)}#{rid}", False)
    assert w.store.move_index(rid, key)


def test_the_preview_misses_a_retry_when_the_late_hand_over_was_of_an_untagged_entry() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=3600, account_id="acct-7")
    _untag(w, r.id)
    w.clock.advance(3600 + 180)  # the rule was paused: three minutes overdue when it catches up
    (report,) = w.run_shards()
    assert report.dispatched == 1
    w.sender.script(w.delivery(r.id).key, ["500"])
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.next_attempt_at is not None
    out = support.preview(w.store, w.clock.now(), 60, w.shards, account_id="acct-7")
    assert [a["reminder_id"] for a in out["attempts"]] == [r.id]
    assert out["attempts"][0]["at"] == d.next_attempt_at
    assert sk_tag(w.store.items[r.id]["gsk"]) == account_tag("acct-7")  # the re-check entry


def test_a_late_hand_over_of_a_tagged_entry_files_a_tagged_recheck_entry() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("k", due_in=3600, account_id="acct-7")
    w.clock.advance(3600 + 180)
    w.run_shards()
    assert w.store.items[r.id]["w"] and sk_tag(w.store.items[r.id]["gsk"]) == account_tag("acct-7")
