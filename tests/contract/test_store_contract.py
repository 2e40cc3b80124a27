"""The ReminderStore contract: DynamoReminderStore on moto and MemoryReminderStore must agree on
every conditional write, index query and cursor lease the services rely on.

Not pinned on purpose: whether a page that ends exactly at ``limit`` reports ``more`` (DynamoDB
returns a LastEvaluatedKey whenever it stops at Limit; moto only when another item follows; memory
only when another match follows). Callers treat ``more`` as "query again", which is safe for all three.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders.domain.models import ChannelType, Delivery, Reminder, delivery_key, reminder_id
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import WHOLE_BUCKET, account_range, bucket_of, index_pk, index_sk, iso
from reminders.domain.states import DeliveryState

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=60)


def make(
    n: int = 0,
    *,
    due: datetime = T0,
    state: DeliveryState = DeliveryState.QUEUED,
    channels: tuple[str, ...] = ("webhook-0",),
    shard: int = 0,
    version: int = 1,
) -> Reminder:
    rid = reminder_id("acct-1", f"key-{n}")
    deliveries = {
        cid: Delivery(
            channel_id=cid,
            type=ChannelType(cid.split("-")[0]),
            destination="https://hooks.example.com/r" if cid.startswith("webhook") else "a@example.com",
            key=delivery_key("acct-1", f"key-{n}", cid),
            state=state,
            cycle_started_at=iso(due),
        )
        for cid in channels
    }
    return Reminder(
        id=rid,
        account_id="acct-1",
        key=f"key-{n}",
        kind="renewal",
        due_at=due,
        template_id="renewal",
        template_version=1,
        data={"renewal_date": "2026-12-20", "seats": 3},
        version=version,
        created_at=T0 - timedelta(days=1),
        fingerprint="f" * 64,
        deliveries=deliveries,
        shard=shard,
    )


def ikey(r: Reminder, *, watch: bool = False, at: datetime | None = None) -> IndexKey:
    when = at or r.due_at
    return IndexKey(index_pk(bucket_of(when), r.shard), index_sk(when, r.id, r.account_id), watch)


def put(store: Any, r: Reminder, **kw: Any) -> Reminder:
    assert store.put_new(r, ikey(r, **kw))
    got = store.get(r.id)
    assert got is not None
    return got


# -- put_new / get / batch_get -----------------------------------------------------------------


def test_put_new_is_unique_per_id_and_round_trips(store: Any) -> None:
    r = make(channels=("webhook-0", "email-0"))
    assert store.put_new(r, ikey(r)) is True
    assert store.put_new(replace(r, kind="other"), ikey(r)) is False
    got = store.get(r.id)
    assert got == r
    assert store.get(reminder_id("acct-1", "missing")) is None


def test_batch_get_dedups_skips_missing_and_pages_past_100(store: Any) -> None:
    rs = [make(i) for i in range(101)]
    for r in rs:
        assert store.put_new(r, ikey(r))
    ids = [r.id for r in rs]
    got = store.batch_get([*ids, ids[0], reminder_id("acct-1", "nope")])
    assert sorted(r.id for r in got) == sorted(ids)


def spoil_due(store: Any, rid: str, due: str) -> None:
    """Write a ``due`` value this code cannot read straight into the stored row (a legacy or foreign row)."""
    if hasattr(store, "items"):
        store.items[rid]["due"] = due
    else:
        store.table.update_item(
            Key={"pk": f"R#{rid}", "sk": "R"},
            UpdateExpression="SET due = :d",
            ExpressionAttributeValues={":d": due},
        )


def test_batch_get_sets_aside_a_row_it_cannot_decode_when_asked(store: Any) -> None:
    good, bad = put(store, make(1)), put(store, make(2))
    spoil_due(store, bad.id, "999-01-01T00:00:00.000000Z")  # what strftime wrote for the year 999
    unreadable: list[str] = []
    assert store.batch_get([good.id, bad.id], unreadable=unreadable) == [good]
    assert unreadable == [bad.id]
    with pytest.raises(ValueError):
        store.batch_get([good.id, bad.id])  # without the list: the caller hears about it


def test_batch_get_sets_aside_a_row_without_its_id_attribute_by_its_key(store: Any) -> None:
    """A foreign row that lacks even its ``rid`` attribute is set aside under the id its key names."""
    good, bad = put(store, make(1)), put(store, make(2))
    if hasattr(store, "items"):
        del store.items[bad.id]["rid"]
    else:
        store.table.update_item(Key={"pk": f"R#{bad.id}", "sk": "R"}, UpdateExpression="REMOVE rid")
    unreadable: list[str] = []
    assert store.batch_get([good.id, bad.id], unreadable=unreadable) == [good]
    assert unreadable == [bad.id]


def test_batch_get_asks_again_for_unprocessed_keys_when_an_answer_read_none_of_them() -> None:
    """BatchGetItem may read none of the keys (throttled: every key back under ``UnprocessedKeys``);
    its output has no required member, so such an answer may carry no ``Responses`` at all. The
    store asks again for the unprocessed keys and returns what the next answer read."""
    from types import SimpleNamespace

    from reminders.adapters.codec import reminder_to_item
    from reminders.adapters.dynamodb import DynamoReminderStore, to_typed

    r = make(1)
    keys = {"reminders": {"Keys": [{"pk": {"S": f"R#{r.id}"}, "sk": {"S": "R"}}]}}
    answers = iter([{"UnprocessedKeys": keys}, {"Responses": {"reminders": [to_typed(reminder_to_item(r))]}}])
    asked: list[dict[str, Any]] = []

    def batch_get_item(RequestItems: dict[str, Any]) -> dict[str, Any]:
        asked.append(RequestItems)
        return next(answers)

    client = SimpleNamespace(batch_get_item=batch_get_item)
    store = DynamoReminderStore(client, table_name="reminders", clock_reference=False)
    assert store.batch_get([r.id]) == [r]
    assert asked == [keys, keys]


# -- claim -------------------------------------------------------------------------------------


def test_claim_takes_a_due_claimable_delivery_of_the_version(store: Any) -> None:
    r = put(store, make(state=DeliveryState.QUEUED, version=2))
    res = store.claim(r.id, "webhook-0", 2, "w1", T0, T0 + LEASE)
    assert res.claimed and not res.lease_expired
    d = res.reminder.deliveries["webhook-0"]
    assert d.state is DeliveryState.SENDING and d.lease_owner == "w1"
    assert d.lease_until == iso(T0 + LEASE) and d.rev == 1
    assert store.get(r.id).deliveries["webhook-0"] == d


@pytest.mark.moto_only("the old item on a failed condition (ReturnValuesOnConditionCheckFailure)")
def test_a_refused_claim_answers_with_the_row_that_refused_it_without_reading_it_again(store: Any) -> None:
    """The refusal carries the row it was refused on: the claimer sees that row at no second read
    (a GetItem would cost a read and could see a later row than the one that refused it)."""
    if not hasattr(store, "client"):
        pytest.skip("a DynamoDB store's refusal")
    r = put(store, make(version=2))
    reads: list[str] = []
    events = store.client.meta.events
    events.register("before-call.dynamodb.GetItem", lambda **_: reads.append("get"), unique_id="test-reads")
    try:
        res = store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE)  # a stale version: refused
    finally:
        events.unregister("before-call.dynamodb.GetItem", unique_id="test-reads")
    assert not res.claimed and res.reminder == r
    assert reads == []


def test_a_refused_claim_whose_answer_carries_no_row_reads_the_current_row(store: Any) -> None:
    """Without the old item on the failed condition (dynalite; an answer that lost it), the claimer
    reads the row: the refusal still carries the current row, never nothing."""
    if not hasattr(store, "client"):
        pytest.skip("a DynamoDB store's refusal")
    r = put(store, make(version=2))
    events = store.client.meta.events
    drop = "test-drop-old-item"
    events.register(
        "after-call.dynamodb.UpdateItem", lambda parsed, **_: parsed.pop("Item", None), unique_id=drop
    )
    try:
        res = store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE)  # a stale version: refused
    finally:
        events.unregister("after-call.dynamodb.UpdateItem", unique_id=drop)
    assert not res.claimed and res.reminder == r


@pytest.mark.parametrize("state", [DeliveryState.SCHEDULED, DeliveryState.RETRYABLE])
def test_claim_accepts_scheduled_and_retryable(store: Any, state: DeliveryState) -> None:
    r = put(store, make(state=state))
    assert store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE).claimed


@pytest.mark.parametrize(
    "state",
    [DeliveryState.SENDING, DeliveryState.DELIVERED, DeliveryState.DEAD_LETTER, DeliveryState.CANCELED],
)
def test_claim_refuses_other_states_and_returns_the_current_row(store: Any, state: DeliveryState) -> None:
    r = put(store, make(state=state))
    res = store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE)
    assert not res.claimed and res.reminder == r


def test_claim_refuses_a_stale_version_an_early_claim_and_a_future_next_attempt(store: Any) -> None:
    r = put(store, make(version=3))
    assert not store.claim(r.id, "webhook-0", 2, "w", T0, T0 + LEASE).claimed  # stale message
    early = T0 - timedelta(milliseconds=1)
    assert not store.claim(r.id, "webhook-0", 3, "w", early, early + LEASE).claimed  # not yet due
    d = replace(r.deliveries["webhook-0"], state=DeliveryState.RETRYABLE, next_attempt_at=iso(T0 + LEASE))
    assert store.save_delivery(r.id, d, 0)
    res = store.claim(r.id, "webhook-0", 3, "w", T0, T0 + LEASE)
    assert not res.claimed and res.reminder.deliveries["webhook-0"].rev == 1
    later = T0 + LEASE
    assert store.claim(r.id, "webhook-0", 3, "w", later, later + LEASE).claimed  # na <= now


def test_claim_refuses_a_row_parked_under_another_lease_when_a_copy_claims_it(store: Any) -> None:
    """A parked row (``parked_until`` ahead) is its parked message's: a copy naming no lease, or an old
    one, is refused even once its next attempt is due; the message naming the lease takes it, and any
    message does once the lease has passed (the watchdog's rescue)."""
    r = put(store, make())
    lease = iso(T0 + timedelta(hours=1))
    d = replace(
        r.deliveries["webhook-0"], state=DeliveryState.RETRYABLE, next_attempt_at=iso(T0), parked_until=lease
    )
    assert store.save_delivery(r.id, d, 0)
    assert not store.claim(r.id, "webhook-0", 1, "copy", T0, T0 + LEASE).claimed
    old = iso(T0 + timedelta(minutes=30))
    assert not store.claim(r.id, "webhook-0", 1, "copy", T0, T0 + LEASE, parked_lease=old).claimed
    after = T0 + timedelta(hours=1)
    assert store.claim(r.id, "webhook-0", 1, "parked", T0, T0 + LEASE, parked_lease=lease).claimed
    r2 = put(store, make(1))
    d2 = replace(r2.deliveries["webhook-0"], state=DeliveryState.RETRYABLE, parked_until=lease)
    assert store.save_delivery(r2.id, d2, 0)
    assert store.claim(r2.id, "webhook-0", 1, "rescue", after, after + LEASE).claimed


def test_claim_of_a_missing_reminder_or_channel(store: Any) -> None:
    missing = store.claim(reminder_id("acct-1", "nope"), "webhook-0", 1, "w", T0, T0 + LEASE)
    assert not missing.claimed and missing.reminder is None
    r = put(store, make())
    other = store.claim(r.id, "email-0", 1, "w", T0, T0 + LEASE)
    assert not other.claimed and other.reminder == r


def test_two_workers_race_for_one_claim(store: Any) -> None:
    r = put(store, make())
    first = store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE)
    second = store.claim(r.id, "webhook-0", 1, "w2", T0, T0 + LEASE)
    assert first.claimed and not second.claimed
    assert second.reminder.deliveries["webhook-0"].lease_owner == "w1"


# -- claim_expired -----------------------------------------------------------------------------


def test_claim_expired_takes_over_only_an_expired_lease_at_the_read_revision(store: Any) -> None:
    r = put(store, make())
    held = store.claim(r.id, "webhook-0", 1, "w1", T0, T0 + LEASE).reminder.deliveries["webhook-0"]
    live = T0 + LEASE - timedelta(seconds=1)
    assert not store.claim_expired(r.id, "webhook-0", held, "w2", live, live + LEASE).claimed
    after = T0 + LEASE  # lease_until <= now: expired
    res = store.claim_expired(r.id, "webhook-0", held, "w2", after, after + LEASE)
    assert res.claimed and res.lease_expired
    d = res.reminder.deliveries["webhook-0"]
    assert d.state is DeliveryState.SENDING and d.lease_owner == "w2" and d.rev == held.rev + 1
    # a third worker holding the old read loses: the revision moved on
    late = after + LEASE * 2
    assert not store.claim_expired(r.id, "webhook-0", held, "w3", late, late + LEASE).claimed


def test_claim_expired_refuses_a_delivery_that_is_not_sending(store: Any) -> None:
    r = put(store, make(state=DeliveryState.RETRYABLE))
    d = r.deliveries["webhook-0"]
    res = store.claim_expired(r.id, "webhook-0", d, "w", T0, T0 + LEASE)
    assert not res.claimed and res.reminder == r
    gone = store.claim_expired(reminder_id("acct-1", "nope"), "webhook-0", d, "w", T0, T0 + LEASE)
    assert not gone.claimed and gone.reminder is None


def test_claim_expired_refuses_a_sending_delivery_without_a_lease_expiry(store: Any) -> None:
    r = put(store, make(state=DeliveryState.SENDING))  # no lease_until at all
    res = store.claim_expired(r.id, "webhook-0", r.deliveries["webhook-0"], "w", T0, T0 + LEASE)
    assert not res.claimed


# -- save_delivery -----------------------------------------------------------------------------


def test_save_delivery_is_conditional_on_revision_lease_owner_and_version(store: Any) -> None:
    r = put(store, make(version=2))
    claimed = store.claim(r.id, "webhook-0", 2, "w1", T0, T0 + LEASE).reminder.deliveries["webhook-0"]
    done = replace(claimed, state=DeliveryState.DELIVERED, lease_owner=None, lease_until=None, receipt="r1")
    assert not store.save_delivery(r.id, replace(done), claimed.rev - 1)  # stale revision
    assert not store.save_delivery(r.id, replace(done), claimed.rev, lease_owner="w2")  # not the owner
    assert not store.save_delivery(r.id, replace(done), claimed.rev, lease_owner="w1", version=1)  # stale
    mine = replace(done)
    assert store.save_delivery(r.id, mine, claimed.rev, lease_owner="w1", version=2)
    assert mine.rev == claimed.rev + 1
    stored = store.get(r.id).deliveries["webhook-0"]
    assert stored == mine and stored.receipt == "r1" and stored.lease_owner is None
    again = replace(done)
    assert not store.save_delivery(r.id, again, claimed.rev)  # the revision moved on
    assert again.rev == claimed.rev  # a refused write leaves the caller's copy at the expected revision


def test_save_delivery_of_a_missing_reminder_or_channel(store: Any) -> None:
    r = make()
    assert not store.save_delivery(r.id, r.deliveries["webhook-0"], 0)
    put(store, r)
    email = Delivery(channel_id="email-0", type=ChannelType.EMAIL, destination="a@example.com", key="k")
    assert not store.save_delivery(r.id, email, 0)
    assert store.get(r.id) == r


def test_save_delivery_keeps_history_and_other_channels(store: Any) -> None:
    r = put(store, make(channels=("webhook-0", "email-0")))
    from reminders.domain.models import Attempt, add_history

    line = Attempt(at=iso(T0), event="attempt", outcome="transient", status=503, delay_seconds=1.5)
    d = replace(
        r.deliveries["email-0"],
        state=DeliveryState.RETRYABLE,
        attempts=1,
        next_attempt_at=iso(T0 + LEASE),
        last_error={"class": "transient", "status": 503, "detail": "http_503"},
        **add_history(r.deliveries["email-0"], line),  # with its evidence flag (issue 25)
    )
    assert d.maybe_accepted
    assert store.save_delivery(r.id, d, 0)
    got = store.get(r.id)
    assert got.deliveries["email-0"] == d
    assert got.deliveries["webhook-0"] == r.deliveries["webhook-0"]


def _derived(store: Any, rid: str) -> dict[str, Any]:
    """The item's stored derived attributes (the attention index keys, the TTL), as stored."""
    from reminders.adapters.codec import DERIVED

    if hasattr(store, "items"):  # MemoryReminderStore
        item = store.items[rid]
    else:
        item = store.table.get_item(Key={"pk": f"R#{rid}", "sk": "R"}, ConsistentRead=True)["Item"]
    return {k: item[k] for k in DERIVED if k in item}


def test_save_delivery_stores_the_attention_keys_its_row_implies_and_removes_them_after(store: Any) -> None:
    """A dead letter needs an operator's attention (the sparse attention index lists it); once it is
    delivered after all, it leaves the index: the write settles the derived attributes."""
    from reminders.adapters.codec import derived_of

    r = put(store, make(channels=("webhook-0", "email-0")))
    assert _derived(store, r.id) == {}
    d = r.deliveries["webhook-0"]
    assert store.save_delivery(r.id, replace(d, state=DeliveryState.DEAD_LETTER), 0)
    listed = _derived(store, r.id)
    assert listed == derived_of(store.get(r.id)) and listed["nx"] == "acct-1"
    assert listed["nxs"].startswith("dead_letter#") and listed["nxs"].endswith(r.id)
    assert store.save_delivery(r.id, replace(d, state=DeliveryState.DELIVERED), 1)
    assert _derived(store, r.id) == {} == derived_of(store.get(r.id))


# -- save_reminder -----------------------------------------------------------------------------


def test_save_reminder_is_conditional_on_version_and_every_revision(store: Any) -> None:
    r = put(store, make(channels=("webhook-0", "email-0")))
    expected = {"version": 1, "webhook-0": 0, "email-0": 0}
    moved = replace(deepcopy(r), due_at=T0 + timedelta(hours=2), version=2)
    assert not store.save_reminder(deepcopy(moved), {**expected, "version": 2}, None)
    refused = deepcopy(moved)
    assert not store.save_reminder(refused, {**expected, "email-0": 5}, None)
    assert refused.deliveries["email-0"].rev == 5  # a refused write leaves copies at the expected revs
    assert store.get(r.id) == r
    new_key = ikey(moved)
    assert store.save_reminder(moved, expected, new_key)
    got = store.get(r.id)
    assert got.version == 2 and got.due_at == T0 + timedelta(hours=2)
    assert {cid: d.rev for cid, d in got.deliveries.items()} == {"webhook-0": 1, "email-0": 1}
    assert store.query_index(ikey(r).pk, "", "~", 10) == ([], False)
    (entry,), _ = store.query_index(new_key.pk, "", "~", 10)
    assert entry.reminder_id == r.id and entry.version == 2 and entry.sort_key == new_key.sk


def test_save_reminder_writes_a_corrected_data_and_template_version_that_read_back(store: Any) -> None:
    """A correction of the reminder's data and template version is what the next read gives."""
    r = put(store, make())
    corrected = replace(
        deepcopy(r), data={"renewal_date": "2026-12-24", "seats": 5}, template_version=2, version=2
    )
    assert store.save_reminder(corrected, {"version": 1, "webhook-0": 0}, None)
    got = store.get(r.id)
    assert (got.data, got.template_version, got.version) == ({"renewal_date": "2026-12-24", "seats": 5}, 2, 2)


def test_save_reminder_without_an_index_leaves_the_index_alone(store: Any) -> None:
    r = put(store, make())
    canceled = replace(
        r, deliveries={"webhook-0": replace(r.deliveries["webhook-0"], state=DeliveryState.CANCELED)}
    )
    assert store.save_reminder(canceled, {"version": 1, "webhook-0": 0}, None)
    assert store.get(r.id).deliveries["webhook-0"].state is DeliveryState.CANCELED
    (entry,), _ = store.query_index(ikey(r).pk, "", "~", 10)
    assert entry.reminder_id == r.id


@pytest.mark.parametrize("recorded", [None, False, True])
def test_the_template_record_round_trips_and_a_correction_sets_it(store: Any, recorded: bool | None) -> None:
    """Issue 30 item a: whether the account had the template version (None: stored before the record)."""
    r = put(store, replace(make(), template_registered=recorded))
    assert r.template_registered is recorded
    corrected = replace(deepcopy(r), version=2, template_registered=True)
    assert store.save_reminder(corrected, {"version": 1, "webhook-0": 0}, None)
    assert store.get(r.id).template_registered is True
    kept = replace(deepcopy(store.get(r.id)), version=3, template_registered=None)  # nothing rechecked
    assert store.save_reminder(kept, {"version": 2, "webhook-0": 1}, None)
    assert store.get(r.id).template_registered is True


# -- due index ---------------------------------------------------------------------------------


def test_index_query_orders_pages_and_bounds(store: Any) -> None:
    rs = [make(i, due=T0 + timedelta(seconds=5 * i)) for i in range(7)]  # one minute bucket
    for r in reversed(rs):
        store.put_new(r, ikey(r, watch=r is rs[3]))
    pk = ikey(rs[0]).pk
    sks = [ikey(r).sk for r in rs]
    page, more = store.query_index(pk, "", "~", 3)
    assert [e.sort_key for e in page] == sks[:3] and more
    page, more = store.query_index(pk, page[-1].sort_key, "~", 3)
    assert [e.sort_key for e in page] == sks[3:6] and more
    assert page[0].watch and not page[1].watch
    page, more = store.query_index(pk, page[-1].sort_key, "~", 3)
    assert [e.sort_key for e in page] == sks[6:] and not more
    # until is inclusive, after exclusive
    page, more = store.query_index(pk, sks[1], sks[4], 10)
    assert [e.sort_key for e in page] == sks[2:5] and not more
    until = index_sk(T0 + timedelta(seconds=12), "~", rs[0].account_id)
    page, _ = store.query_index(pk, "", until, 10)
    assert [e.reminder_id for e in page] == [r.id for r in rs[:3]]
    e = page[0]
    assert e.version == 1 and e.channels == ("webhook-0",)
    # another shard's partition is separate
    assert store.query_index(index_pk(bucket_of(T0), 1), "", "~", 10) == ([], False)


def test_an_accounts_index_range_holds_only_its_own_entries(store: Any) -> None:
    """Issue 28 item 1: inside one minute's partition an account's entries are one key range (its
    tag leads the sort key), in due order, whatever another account files in the same minute."""
    mine = [make(i, due=T0 + timedelta(seconds=10 * i)) for i in range(3)]
    theirs = [
        replace(make(10 + i, due=T0 + timedelta(seconds=5 * i)), account_id="acct-other") for i in range(4)
    ]
    for r in theirs + mine:
        store.put_new(r, ikey(r, watch=r is mine[1]))
    pk = ikey(mine[0]).pk
    after, until = account_range(mine[0].account_id)
    page, more = store.query_index(pk, after, until, 2)
    assert [e.reminder_id for e in page] == [r.id for r in mine[:2]] and more
    page, more = store.query_index(pk, page[-1].sort_key, until, 2)
    assert [e.reminder_id for e in page] == [mine[2].id] and not more
    whole, _ = store.query_index(pk, "", WHOLE_BUCKET, 10)
    assert {e.reminder_id for e in whole} == {r.id for r in mine + theirs}


def test_an_index_query_whose_range_steps_back_is_refused_as_dynamodb_refuses_it(store: Any) -> None:
    """``BETWEEN lo AND hi`` with lo > hi is a ValidationException on AWS (moto answers an empty page):
    both stores refuse it before any request, so a caller that would issue one fails in every test."""
    r = make(0)
    store.put_new(r, ikey(r))
    sk = ikey(r).sk
    with pytest.raises(ValueError, match="lo > hi"):
        store.query_index(ikey(r).pk, sk, index_sk(T0 - timedelta(seconds=1), "~", r.account_id), 10)
    assert store.query_index(ikey(r).pk, sk, sk + " ", 10) == ([], False)  # lo == hi: allowed, empty


def test_move_index_moves_the_entry_and_ignores_a_missing_reminder(store: Any) -> None:
    r = put(store, make())
    later = T0 + timedelta(minutes=15)
    store.move_index(r.id, ikey(r, watch=True, at=later))
    assert store.query_index(ikey(r).pk, "", "~", 10) == ([], False)
    (e,), _ = store.query_index(ikey(r, at=later).pk, "", "~", 10)
    assert e.watch and e.sort_key == index_sk(later, r.id, r.account_id)
    ghost = make(99)
    store.move_index(ghost.id, ikey(ghost))  # no row: nothing is created
    assert store.get(ghost.id) is None
    assert [x.reminder_id for x in store.query_index(ikey(ghost).pk, "", "~", 10)[0]] == []


def test_move_index_is_refused_when_the_reminder_version_moved_on(store: Any) -> None:
    r = put(store, make())
    assert store.save_reminder(replace(r, version=2), {"version": 1, "webhook-0": 0}, ikey(r))
    later = T0 + timedelta(minutes=15)
    assert store.move_index(r.id, ikey(r, watch=True, at=later), version=1) is False  # read at v1
    (e,), _ = store.query_index(ikey(r).pk, "", "~", 10)
    assert not e.watch and e.sort_key == ikey(r).sk  # the newer writer's entry stands
    assert store.move_index(r.id, ikey(r, watch=True, at=later), version=2) is True
    assert store.query_index(ikey(r).pk, "", "~", 10) == ([], False)
    ghost = make(99)
    assert store.move_index(ghost.id, ikey(ghost), version=1) is False


def test_index_entries_project_the_current_version(store: Any) -> None:
    r = put(store, make(channels=("webhook-0", "email-0")))
    moved = replace(r, version=2)
    assert store.save_reminder(moved, {"version": 1, "webhook-0": 0, "email-0": 0}, ikey(r))
    (e,), _ = store.query_index(ikey(r).pk, "", "~", 10)
    assert e.version == 2 and e.channels == ("webhook-0", "email-0")


# -- shard cursors -----------------------------------------------------------------------------


def test_cursor_is_created_leased_checkpointed_and_released(store: Any) -> None:
    assert store.get_cursor(3) is None
    c = store.acquire_cursor(3, "d1", T0, T0 + LEASE)
    assert c is not None and c.shard == 3 and c.lease_owner == "d1" and c.rev == 1
    assert c.bucket == bucket_of(T0 - timedelta(seconds=3600)) and c.after == ""
    assert (c.watch_bucket, c.watch_after, c.page, c.watch_page) == ("", "", "", "")  # no watch pass yet
    assert store.acquire_cursor(3, "d2", T0, T0 + LEASE) is None  # busy
    again = store.acquire_cursor(3, "d1", T0, T0 + LEASE)  # the owner may re-acquire
    assert again is not None and again.rev == 2
    c.bucket, c.after, c.watch_bucket, c.watch_after = "202612010900", "x#1", "202612010845", "w#1"
    c.page, c.watch_page = "202612010900|x#1|y#~|t1x#2", "202612010845|t2w#3"  # passes in progress
    assert store.save_cursor(c)
    got = store.get_cursor(3)
    assert (got.bucket, got.after, got.watch_bucket, got.watch_after, got.page, got.watch_page) == (
        "202612010900",
        "x#1",
        "202612010845",
        "w#1",
        "202612010900|x#1|y#~|t1x#2",
        "202612010845|t2w#3",
    )
    assert got.lease_owner == "d1"
    assert store.save_cursor(c, release=True)
    released = store.get_cursor(3)
    assert released.lease_owner is None and released.lease_until is None
    taken = store.acquire_cursor(3, "d2", T0, T0 + LEASE)  # free again: progress is kept
    assert taken is not None and taken.bucket == "202612010900" and taken.after == "x#1"


def test_a_cursor_stored_with_its_bucket_alone_reads_with_empty_progress_at_revision_zero(store: Any) -> None:
    """A cursor item written before its later fields (the watch bucket, the passes in progress, the
    revision) reads with their empty defaults: no pass in progress, not leased, revision 0."""
    if hasattr(store, "cursors"):
        store.cursors[5] = {"b": "202612010900"}
    else:
        store.table.put_item(Item={"pk": "CURSOR#005", "sk": "C", "b": "202612010900"})
    got = store.get_cursor(5)
    assert (got.bucket, got.after, got.watch_bucket, got.watch_after, got.page, got.watch_page) == (
        "202612010900",
        "",
        "",
        "",
        "",
        "",
    )
    assert got.lease_owner is None and got.lease_until is None and got.rev == 0


def test_cursor_lease_expires_and_a_stale_owner_cannot_checkpoint(store: Any) -> None:
    c1 = store.acquire_cursor(0, "d1", T0, T0 + LEASE)
    assert c1 is not None
    assert store.acquire_cursor(0, "d2", T0 + LEASE - timedelta(seconds=1), T0 + LEASE) is None
    c2 = store.acquire_cursor(0, "d2", T0 + LEASE, T0 + 2 * LEASE)  # lease_until <= now: expired
    assert c2 is not None and c2.lease_owner == "d2"
    c1.after = "stale"
    assert not store.save_cursor(c1)
    assert not store.save_cursor(c1, release=True)
    assert store.get_cursor(0).after == "" and store.get_cursor(0).lease_owner == "d2"


def test_save_cursor_by_a_stranger_or_for_a_missing_cursor_is_refused(store: Any) -> None:
    c = store.acquire_cursor(1, "d1", T0, T0 + LEASE)
    assert c is not None and store.save_cursor(c, release=True)
    stranger = replace(c, lease_owner="d9", after="stranger")
    assert not store.save_cursor(stranger)
    assert store.get_cursor(1).after == ""
    # (a cursor with no owner at all is not pinned: moto matches ``lo = NULL`` against a missing
    # ``lo``, DynamoDB does not; the dispatcher always saves as the owner it acquired as)
    missing = replace(c, shard=7)
    assert not store.save_cursor(missing)
    assert store.get_cursor(7) is None


def test_ensure_cursor_creates_a_cursor_once_at_the_given_start(store: Any) -> None:
    start = T0 - timedelta(minutes=10)
    assert store.ensure_cursor(5, start) is True
    c = store.get_cursor(5)
    assert (c.bucket, c.after, c.watch_bucket, c.watch_after) == (bucket_of(start), "", bucket_of(start), "")
    assert c.lease_owner is None
    taken = store.acquire_cursor(5, "d1", T0, T0 + LEASE)
    assert taken is not None and taken.bucket == bucket_of(start) and taken.watch_bucket == bucket_of(start)
    taken.bucket, taken.after = "202612010905", "x#1"
    assert store.save_cursor(taken, release=True)
    assert store.ensure_cursor(5, T0 + timedelta(days=1)) is False  # exists: progress is kept
    assert store.get_cursor(5).bucket == "202612010905" and store.get_cursor(5).after == "x#1"


def test_the_shard_high_water_mark_only_rises(store: Any) -> None:
    store.set_controls({"producers_paused": True})
    store.raise_shard_high_water(32)
    assert store.get_controls() == {"producers_paused": True, "due_shards_high_water": 32}
    store.raise_shard_high_water(16)  # a lower count never lowers it
    assert store.get_controls()["due_shards_high_water"] == 32
    store.raise_shard_high_water(64)
    assert store.get_controls()["due_shards_high_water"] == 64


# -- the store's clock (issue 10, item 7) ------------------------------------------------------


def test_the_store_offers_its_own_clock_as_the_reference(store: Any) -> None:
    store.get_controls()  # any response
    reference = store.reference_now()
    assert reference is not None
    assert abs((reference - datetime.now(UTC)).total_seconds()) < 1.6  # whole-second Date header


def test_the_dynamodb_reference_is_the_middle_of_the_date_headers_second_advanced_by_local_time() -> None:
    from types import SimpleNamespace

    from reminders.adapters.dynamodb import DynamoReminderStore

    ticks = iter([100.0, 102.0, 103.0])
    events = SimpleNamespace(register=lambda *args, **kwargs: None)
    client = SimpleNamespace(meta=SimpleNamespace(events=events))
    store = DynamoReminderStore(client, table_name="reminders", monotonic=lambda: next(ticks))
    assert store.reference_now() is None  # no response yet
    store.note_response(http_response=SimpleNamespace(headers={"Date": "garbage"}))
    assert store.reference_now() is None  # an unreadable header is ignored
    store.note_response(http_response=SimpleNamespace(headers={"Date": "Tue, 01 Dec 2026 10:00:00 GMT"}))
    assert store.reference_now() == datetime(
        2026, 12, 1, 10, 0, 2, 500000, tzinfo=UTC
    )  # noted at 100, now 102
    assert store.reference_now() == datetime(2026, 12, 1, 10, 0, 3, 500000, tzinfo=UTC)


def test_a_store_built_on_a_table_resource_writes_through_a_plain_client_at_its_endpoint(store: Any) -> None:
    """The operator tools build the store on a boto3 Table resource: it then makes a plain client on
    the resource's region and endpoint (dynalite's, a LocalStack's), and reads what the others wrote."""
    if not hasattr(store, "client"):
        pytest.skip("a DynamoDB store's construction")
    import boto3
    from reminders.adapters.dynamodb import DynamoReminderStore

    # Not the default endpoint (moto answers plain http too): the plain client must take the resource's.
    url = store.client.meta.endpoint_url.replace("https://", "http://")
    resource = boto3.resource("dynamodb", region_name="us-east-1", endpoint_url=url).Table(store.table_name)
    tools = DynamoReminderStore(resource, clock_reference=False)
    assert tools.table_name == store.table_name and tools.table is resource
    meta, theirs = tools.client.meta, resource.meta.client.meta
    assert (meta.service_model.service_name, meta.region_name) == ("dynamodb", theirs.region_name)
    assert meta.endpoint_url == theirs.endpoint_url
    r = make(7)
    assert tools.put_new(r, ikey(r))
    assert store.get(r.id) == tools.get(r.id) is not None


# -- operator controls -------------------------------------------------------------------------


def test_controls_round_trip(store: Any) -> None:
    assert store.get_controls() == {}
    store.set_controls({"producers_paused": True, "reason": "incident 42", "since": 1764579600})
    assert store.get_controls() == {"producers_paused": True, "reason": "incident 42", "since": 1764579600}
    store.set_controls({"producers_paused": False})  # sets one switch, leaves the others
    assert store.get_controls() == {"producers_paused": False, "reason": "incident 42", "since": 1764579600}


def test_one_controls_call_sets_one_switch_and_removes_another(store: Any) -> None:
    store.set_controls({"producers_paused": True, "reason": "incident 42"})
    store.set_controls({"producers_paused": False, "reason": None})  # SET and REMOVE in one update
    assert store.get_controls() == {"producers_paused": False}
    store.set_controls({"producers_paused": None})  # REMOVE alone
    assert store.get_controls() == {}


def test_move_index_from_a_read_sort_key_loses_to_a_write_that_moved_it_since(store: Any) -> None:
    """The backfill's write (issue 28): only while the row's entry is still the one it read."""
    r = make(1, due=T0)
    old = IndexKey(ikey(r).pk, f"{iso(T0)}#{r.id}", False)  # as written before the tag
    store.put_new(r, old)
    moved = IndexKey(old.pk, ikey(r).sk, False)
    assert not store.move_index(r.id, moved, from_sk=old.sk + "x")
    assert store.move_index(r.id, moved, from_sk=old.sk)
    assert not store.move_index(r.id, moved, from_sk=old.sk)  # a lost answer's retry: refused
    watch = IndexKey(old.pk, old.sk, True)
    assert store.move_index(r.id, watch)
    assert not store.move_index(r.id, IndexKey(old.pk, ikey(r).sk, False), from_sk=old.sk)  # watch entry
    rows: list[Any] = []
    after, seen = "", 0
    while True:
        page, after = store.scan_index_entries(after, 1)
        rows += page
        seen += 1
        if not after:
            break
    assert [(x.reminder_id, x.account_id, x.pk, x.sk, x.watch) for x in rows] == [
        (r.id, r.account_id, old.pk, old.sk, True)
    ]
