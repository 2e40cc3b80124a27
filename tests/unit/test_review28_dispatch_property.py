"""Review rev28: the dispatcher and watchdog over the account-tagged due index (issue 28), as a
property: creates (tagged, or rewritten in the form before the tag), corrections, dispatcher runs
every 1-15 s with a clock up to 3 s behind, crashes before a checkpoint, lost queues and operator
rewinds. Every live reminder's current version is handed to SQS, on time (within the 3 s skew) when
no run crashed, and again after its messages were lost (the watchdog). Sized in examples, never in
seconds."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reminders.domain.ports import IndexKey, OutMessage
from reminders.domain.schedule import bucket_of, index_pk, iso
from reminders.services.dispatch import rewind_cursors

from tests.unit.fakes import Crash
from tests.unit.test_dispatch_tagged_index import _windowed

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.integers(0, 2400), st.integers(0, 2), st.booleans()),
        st.tuples(st.just("tick"), st.integers(1, 15), st.integers(0, 9), st.integers(-3, 0)),
        st.tuples(st.just("move"), st.integers(0, 50), st.integers(0, 2400), st.booleans()),
        st.tuples(st.just("purge"), st.just(0), st.just(0), st.just(False)),
        st.tuples(st.just("rewind"), st.integers(0, 3600), st.just(0), st.just(False)),
    ),
    min_size=5,
    max_size=200,
)
LIVE = ("scheduled", "queued")


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS, window=st.sampled_from([20, 30, 900]), page=st.integers(1, 4))
def test_every_live_reminder_is_handed_to_sqs_on_time_and_again_after_its_messages_are_lost(
    ops: list[tuple[str, int, int, Any]], window: int, page: int
) -> None:
    w = _windowed(window, page_size=page)
    w.run_shards()
    first: dict[tuple[str, int], datetime] = {}
    last: dict[str, datetime] = {}
    real = w.queues.send

    def spy(channel_type: str, messages: Any) -> None:
        for m in messages:
            assert isinstance(m, OutMessage)
            first.setdefault((m.reminder_id, m.version), w.clock.now())
            last[m.reminder_id] = w.clock.now()
        real(channel_type, messages)

    w.queues.send = spy  # type: ignore[method-assign]
    rids: list[str] = []
    crashed, purged_at = False, None
    for n, (op, a, b, c) in enumerate(ops):
        if op == "create":
            r = w.create(f"k{n}", due_in=a, account_id=f"acct-{b}")
            rids.append(r.id)
            if c and r.deliveries["webhook-0"].state.value == "scheduled":  # written before the tag
                old = IndexKey(index_pk(bucket_of(r.due_at), r.shard), f"{iso(r.due_at)}#{r.id}", False)
                assert w.store.move_index(r.id, old)
        elif op == "tick":
            w.clock.advance(a)
            w.dispatcher_clock.offset_seconds = c
            saves = iter(range(10**6))
            w.store.fail_save_cursor = (lambda s=saves: next(s) == 1) if b == 0 else None
            try:
                w.run_shards()
            except Crash:
                crashed = True
                w.clock.advance(91)  # the lease runs out; another instance takes the shard
                w.dispatcher = w.world.dispatcher(
                    clock=w.dispatcher_clock, page_size=page, worker=f"dispatch-{n}", window_seconds=window
                )
            w.store.fail_save_cursor = None
        elif op == "rewind":  # the operator's step after a rollback (a busy shard is left)
            rewind_cursors(w.store, w.shards, w.clock.now() - timedelta(seconds=a), "operator", w.clock.now())
        elif op == "purge":
            w.sqs.queues["webhook"].messages.clear()
            purged_at = w.clock.now()
        elif op == "move" and rids:
            rid = rids[a % len(rids)]
            if w.get(rid).deliveries["webhook-0"].state.value in LIVE:
                w.reminders.reschedule(rid, w.clock.now() + timedelta(seconds=b))
    w.dispatcher_clock.offset_seconds = 0
    for _ in range(300):
        w.clock.advance(10)
        w.run_shards()
    for rid in rids:
        r = w.get(rid)
        if r.deliveries["webhook-0"].state.value not in LIVE:
            continue
        assert (rid, r.version) in first, (rid, r.version, iso(r.due_at), window)
        if purged_at is not None:
            assert last[rid] > purged_at, (rid, iso(purged_at), iso(last[rid]), window)
        if not crashed:
            assert (first[(rid, r.version)] - r.due_at).total_seconds() <= 3, (rid, window)
