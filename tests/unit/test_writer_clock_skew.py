"""Issue 25 item 7: a slow clock on the writer side must not deliver late. The API turns a due time
into a due index entry (beyond the SQS window) or a delay (inside it) on its own clock; 300 s slow,
it filed a reminder due in 700 s as "beyond the window" behind the dispatcher's cursor and the
watchdog delivered it ~15 min late. The API corrects its clock by the store's (the dispatcher's
``Date``-header reference). In-memory world, virtual clock."""

from __future__ import annotations

import pytest
from reminders.services.intents import Reminders

from tests.proof.test_matrix_health import _drain
from tests.unit.fakes import OffsetClock, World


def _lateness(api_offset_seconds: float, due_in: float) -> float:
    w = World(shards=1)
    w.create("renewal:acct-1:warm-up", due_in=0)  # the shard's cursor exists; the dispatcher runs
    for _ in range(30):
        w.run_shards()
        _drain(w)
        w.clock.advance(1)
    api = Reminders(
        store=w.store,
        queues=w.queues,
        clock=OffsetClock(w.clock, api_offset_seconds),
        telemetry=w.telemetry,
        shards=w.shards,
    )
    r, _ = api.create(w.new("renewal:acct-1:skewed", due_in=due_in))
    due = r.due_at
    for _ in range(int(due_in) + 1200):
        w.run_shards()
        _drain(w)
        if w.delivery(r.id).delivered_at:
            break
        w.clock.advance(1)
    [call] = [c for c in w.sender.calls if c.key == r.deliveries["webhook-0"].key]
    return (call.at - due).total_seconds()


@pytest.mark.parametrize("due_in", [60, 700, 1000])
def test_api_clock_300s_slow_does_not_deliver_late(due_in: float) -> None:
    assert _lateness(-300, due_in) <= 2
