"""Review rev28d (hostile review of h28c's due-order hand-over and h28s's bounds, issue 28): each test
a failure case found by trying to break the change; strict xfail until fixed. The clock moves only by
the modelled round trips (the simulator's 8 ms a query and a SendMessageBatch call,
bench/LATENCY_MODEL.md) and the dispatcher's phase waits; sized in reminders and runs."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reminders.domain.models import ChannelType
from reminders.domain.ports import OutMessage
from reminders.domain.schedule import iso
from reminders.services import dispatch, support
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import Crash, World
from tests.unit.test_preview_query_budget import CountingStore

ROUND_TRIP = 0.008  # bench/LATENCY_MODEL.md: DynamoDB query, SQS send
LAMBDA_TIMEOUT = 60.0  # infra/functions.py DISPATCH_WORKER_TIMEOUT


def _timed(w: World, send_seconds: float = ROUND_TRIP) -> dict[str, list[datetime]]:
    """Every query and SendMessageBatch call takes a round trip of the world's clock; returns, per
    reminder, when each of its messages was handed to SQS (the messages themselves are dropped)."""
    handed: dict[str, list[datetime]] = {}
    query = w.store.query_index

    def timed_query(*args: Any, **kwargs: Any) -> Any:
        w.clock.advance(ROUND_TRIP)
        return query(*args, **kwargs)

    def timed_send(channel_type: str, messages: Sequence[OutMessage]) -> None:
        for _ in range(math.ceil(len(messages) / 10)):  # one SendMessageBatch call per 10, in turn
            w.clock.advance(send_seconds)
        for m in messages:
            handed.setdefault(m.reminder_id, []).append(w.clock.now())

    w.store.query_index = timed_query  # type: ignore[method-assign]
    w.queues.send = timed_send  # type: ignore[method-assign]
    return handed


def _budget(w: World, seconds: float) -> Callable[[], float]:
    start = w.clock.now()
    return lambda: seconds - (w.clock.now() - start).total_seconds()


def _due_in(w: World, at: datetime) -> float:
    return (at - w.clock.now()).total_seconds()


def test_another_accounts_reminder_is_handed_over_late_when_one_account_floods_a_shard_minute() -> None:
    """One account puts 5,001 ten-channel reminders (the API's MAX_CHANNELS) in one minute of a shard,
    due at random milliseconds: over MAX_PASS_PAGES (50 x 100), the pass reads 50 pages and hands
    them over in due order, 50 sends of 1,000 messages each, each after its phase wait: ~65 s, over
    the worker's 60 s. The part is not checkpointed until handed over whole, so every run sends the
    same ~4,400 reminders again and stops; the shard's cursor stays on that minute until its
    reminders are due (no phase wait then). Another account's reminder due in the next minute is
    handed to SQS after its due time, and the flood's first part is sent ~12 times (44,000 messages
    a run)."""
    w = World(shards=1)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    rng = random.Random(3)
    channels = tuple(ChannelSpec(ChannelType.WEBHOOK, f"https://hooks.example.com/r{i}") for i in range(10))
    for i in range(5001):
        due = base + timedelta(milliseconds=rng.randrange(60_000))
        w.create(f"flood-{i}", due_in=_due_in(w, due), account_id="acct-flood", channels=channels)
    victim = w.create("victim", due_in=_due_in(w, base + timedelta(seconds=75)), account_id="acct-victim")
    handed = _timed(w)
    while w.clock.now() < victim.due_at:  # the rule ticks every minute; each run has the worker's budget
        start = w.clock.now()
        w.run_shards(_budget(w, LAMBDA_TIMEOUT))
        w.clock.advance(max(0.0, 60.0 - (w.clock.now() - start).total_seconds()))
    assert victim.id in handed and handed[victim.id][0] < victim.due_at
    assert max(len(t) for t in handed.values()) <= 2 * 10  # no part sent more than twice


def test_a_part_is_sent_again_from_its_start_on_every_run_when_its_hand_over_outlasts_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mechanism on a small scale: a minute of 20 entries read in parts of 2 pages of 3; each
    run's budget ends after one send of 3 (a SendMessageBatch call taking 2 s). A run that stops
    inside a part keeps nothing of it: every run hands over the same 3 reminders and the minute's
    other 17 never go (until due, when nothing waits)."""
    monkeypatch.setattr(dispatch, "MAX_PASS_PAGES", 2)
    w = World(shards=1, page_size=3)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    rs = [
        w.create(f"k{i}", due_in=_due_in(w, base + timedelta(seconds=2 * i)), account_id=f"acct-{i % 7}")
        for i in range(20)
    ]
    w.clock.advance(_due_in(w, base) - 600 + 0.537)  # the minute inside the horizon
    handed = _timed(w, send_seconds=2.0)
    for _ in range(12):
        w.run_shards(_budget(w, dispatch.SAFETY_SECONDS + 1.5))
        w.clock.advance(10)
    assert w.clock.now() < base  # still ahead of the minute: no entry went without its phase wait
    assert set(handed) == {r.id for r in rs}
    assert max(Counter({rid: len(t) for rid, t in handed.items()}).values()) <= 2


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dues=st.lists(st.integers(0, 179), min_size=1, max_size=40),
    accounts=st.integers(1, 5),
    page=st.integers(1, 3),
    pages=st.integers(1, 3),
    budgets=st.lists(st.integers(1, 4), min_size=1, max_size=60),
    crash=st.integers(0, 6),
)
def test_every_reminder_of_a_minute_read_in_parts_is_handed_over_before_due_whatever_the_runs_budget(
    dues: list[int], accounts: int, page: int, pages: int, budgets: list[int], crash: int
) -> None:
    """Minutes read in parts (MAX_PASS_PAGES of ``page`` entries), each run's budget ending after a
    few SendMessageBatch calls, up to two crashes at a checkpoint (each costing the lease, 91 s): all
    within the 600 s ahead of the minute, so every reminder is handed to SQS before its due time,
    none skipped (the kept part's page, review rev28d)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dispatch, "MAX_PASS_PAGES", pages)
        w = World(shards=1, page_size=page)
        w.run_shards()
        base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
        rs = [
            w.create(
                f"k{i}", due_in=_due_in(w, base + timedelta(seconds=d)), account_id=f"acct-{i % accounts}"
            )
            for i, d in enumerate(dues)
        ]
        handed: dict[str, datetime] = {}
        calls = [0]

        def send(channel_type: str, messages: Sequence[OutMessage]) -> None:
            calls[0] += 1
            for m in messages:
                handed.setdefault(m.reminder_id, w.clock.now())

        w.queues.send = send  # type: ignore[method-assign]
        w.clock.advance(_due_in(w, base) - 600 + 0.537)
        saves = iter(range(10**6))
        for n, budget in enumerate(budgets * 3):
            calls[0] = 0
            w.store.fail_save_cursor = (lambda s=saves: next(s) == crash) if n in (1, 4) else None
            try:
                w.run_shards(lambda b=budget: 10.0 if calls[0] < b else 0.0)
            except Crash:
                w.clock.advance(91)
                w.dispatcher = w.world.dispatcher(clock=w.dispatcher_clock, page_size=page, worker=f"d-{n}")
            w.store.fail_save_cursor = None
            w.clock.advance(2)
        for _ in range(200):
            w.run_shards()
            w.clock.advance(5)
        for r in rs:
            assert r.id in handed, (r.id, iso(r.due_at))
            assert handed[r.id] < r.due_at, (r.id, iso(r.due_at), iso(handed[r.id]))


def test_a_part_is_sent_again_from_its_start_on_every_run_when_a_send_outlasts_the_safety_margin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run is checked against its budget between sends only: one send longer than SAFETY_SECONDS
    (a slow SendMessageBatch call, 7 s here) runs past the worker's timeout and Lambda ends the run
    mid-send, no ``finally``. A part's progress kept only when a run stops on its budget is then never
    kept: every run sends the part's first send again and the minute's others go after their due
    time (the non-part pass keeps each send's position)."""
    monkeypatch.setattr(dispatch, "MAX_PASS_PAGES", 2)
    w = World(shards=1, page_size=3)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    rs = [
        w.create(f"k{i}", due_in=_due_in(w, base + timedelta(seconds=3 * i)), account_id=f"acct-{i % 5}")
        for i in range(12)
    ]
    w.clock.advance(_due_in(w, base) - 600 + 0.537)  # the minute inside the horizon
    handed: dict[str, datetime] = {}
    deadline = [w.clock.now()]

    def slow_send(channel_type: str, messages: Sequence[OutMessage]) -> None:
        w.clock.advance(7.0)
        if w.clock.now() > deadline[0]:  # the worker's timeout: the run ends here, nothing more written
            w.store.fail_save_cursor = lambda: True
            raise Crash
        for m in messages:
            handed.setdefault(m.reminder_id, w.clock.now())

    w.queues.send = slow_send  # type: ignore[method-assign]
    for n in range(8):
        deadline[0] = w.clock.now() + timedelta(seconds=13.5)
        try:
            w.run_shards(_budget(w, 13.5))
        except Crash:
            w.store.fail_save_cursor = None
            w.clock.advance(91)  # the dead run's lease runs out
            w.dispatcher = w.world.dispatcher(clock=w.dispatcher_clock, page_size=3, worker=f"d-{n}")
        w.clock.advance(5)
    assert all(r.id in handed and handed[r.id] < r.due_at for r in rs), (len(handed), iso(w.clock.now()))


def test_another_accounts_volume_adds_no_query_to_an_accounts_preview() -> None:
    """Held: the preview's query budget (MAX_PREVIEW_QUERIES) counts queries per minute and shard
    inside the account's own tag range, so 3,000 reminders of another account in the same minutes
    and shards neither add a query nor truncate the account's answer."""

    def queries(flood: int) -> tuple[int, bool, int]:
        w = World(shards=2)
        w.run_shards()
        for i in range(flood):
            w.create(f"flood-{i}", due_in=60 + i % 1200, account_id="acct-flood")
        mine = w.create("mine", due_in=600, account_id="acct-victim")
        store = CountingStore(w.store)
        out = support.preview(store, w.clock.now(), 30, w.shards, account_id="acct-victim")
        assert [a["reminder_id"] for a in out["attempts"]] == [mine.id]
        return store.queries, bool(out["truncated"]), len(out["attempts"])

    assert queries(3000) == queries(0)
