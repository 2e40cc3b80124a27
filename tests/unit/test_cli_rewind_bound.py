"""``reminders rewind-dispatch --to`` far back (issue 28, review suspicion): the dispatcher re-reads
every minute since ``--to`` on every shard (a due-index query each, and the watchdog's too) and hands
every entry still in the index to SQS again. The command refuses an instant further back than
``MAX_REWIND_SECONDS`` unless ``--force``, and one after now. What a far rewind re-publishes is never
sent twice: the claim refuses a delivered or cancelled delivery."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from reminders.domain.states import DeliveryState
from reminders_ops.cli import main
from reminders_ops.cli.dispatch_cursors import MAX_REWIND_SECONDS, bound_error, rewind

from tests.unit.fakes import World

NOWHERE = ["--table", "t", "--endpoint-url", "http://127.0.0.1:9"]


def _ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat()


def test_rewind_dispatch_exits_2_naming_the_bound_when_to_is_a_year_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rewind-dispatch", "--to", _ago(365 * 86400), *NOWHERE]) == 2
    err = capsys.readouterr().err
    assert "--to" in err and "--force" in err


def test_rewind_dispatch_exits_2_when_to_is_after_now(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rewind-dispatch", "--to", _ago(-3600), *NOWHERE]) == 2
    assert "--to" in capsys.readouterr().err


def test_force_lifts_the_bound_but_not_the_refusal_of_an_instant_after_now() -> None:
    now = datetime.now(UTC)
    far = now - timedelta(seconds=MAX_REWIND_SECONDS + 60)
    assert bound_error(far, now) is not None and bound_error(far, now, force=True) is None
    assert (
        bound_error(now - timedelta(seconds=MAX_REWIND_SECONDS), now) is None
    )  # the bound itself is allowed
    assert bound_error(now + timedelta(seconds=1), now, force=True) is not None


def _deliver_all(w: World, until: datetime) -> None:
    while w.clock.now() < until:
        w.clock.advance(30)
        w.run_shards()
        while w.poll():
            pass


def test_a_rewind_days_back_re_publishes_what_the_index_holds_and_sends_nothing_twice() -> None:
    w = World(shards=2)
    w.run_shards()
    start = w.clock.now()
    rs = [w.create(f"k{i}", due_in=600 + 900 * i) for i in range(8)]
    cancelled = w.create("k-cancelled", due_in=1200)
    w.reminders.cancel(cancelled.id)
    _deliver_all(w, rs[-1].due_at + timedelta(minutes=20))
    assert all(w.delivery(r.id).state is DeliveryState.DELIVERED for r in rs)
    assert Counter(c.key for c in w.sender.calls) == Counter(w.delivery(r.id).key for r in rs)
    reads = w.store.reads
    out = rewind(w.store, start - timedelta(days=3), w.clock.now())  # --force's path: the service
    assert out["rewound"] == [0, 1]
    republished = Counter(m["reminder_id"] for m in w.queued())
    w.run_shards()
    republished = Counter(m["reminder_id"] for m in w.queued()) - republished
    # The index still holds their dispatch entries: they go to SQS again (rs[0] went to SQS at its
    # create, within the window: its entry is a watch entry, which the watchdog reads, not publishes).
    assert set(republished) == {r.id for r in [*rs[1:], cancelled]}  # a cancelled one too
    minutes = (w.clock.now() - (start - timedelta(days=3))).total_seconds() / 60
    assert w.store.reads - reads >= 2 * minutes  # a query per minute and shard, at least
    _deliver_all(w, w.clock.now() + timedelta(minutes=20))
    assert Counter(c.key for c in w.sender.calls) == Counter(w.delivery(r.id).key for r in rs)
    assert w.delivery(cancelled.id).state is DeliveryState.CANCELED
