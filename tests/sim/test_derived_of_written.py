"""Issue 32 item 3: the outcome's write derives the attention and TTL attributes from the delivery it
holds and the few item fields they read, not from a decode of the whole item — and gets the same
answer for every item a faulty run leaves (delivered, retrying, dead letters, several channels)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from reminders.adapters.codec import (
    delivery_from_map,
    derived_of,
    derived_of_item,
    from_dynamo,
    reminder_from_item,
)
from reminders.domain.retry import RetryPolicy
from reminders_ops.bench.sim import Simulation, scenarios
from reminders_ops.bench.sim.model import Deployment


def test_derived_attributes_are_the_whole_items_when_derived_from_the_written_delivery() -> None:
    start = scenarios.START
    sim = Simulation(
        start=start,
        deployment=Deployment(),
        rate_per_second=20,
        failure_rate=0.5,
        policy=RetryPolicy(base_seconds=2.0, max_attempts=3),
        seed=7,
    )
    for i in range(60):
        sim.create(scenarios.command(i, start + timedelta(seconds=30 + i)))
    sim.run(start.timestamp() + 1800)
    states: set[str] = set()
    checked = 0
    for item in sim.memory.items.values():
        whole = derived_of(reminder_from_item(item))
        for cid, m in item["dl"].items():
            written = delivery_from_map(cid, from_dynamo(m))
            states.add(written.state.value)
            assert derived_of_item(item, written) == whole
            checked += 1
    assert checked >= 60 and {"delivered", "dead_letter"} <= states  # the run reached both ends


def test_the_outcomes_write_decodes_no_whole_item_when_it_settles_the_derived_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dataclasses import replace

    from reminders.adapters import codec
    from reminders.adapters.clock import FixedClock
    from reminders.adapters.memory import MemoryReminderStore
    from reminders.domain.ports import NullTelemetry
    from reminders.domain.states import DeliveryState
    from reminders.services.intents import Reminders

    store = MemoryReminderStore()
    svc = Reminders(
        store=store, queues=None, clock=FixedClock(scenarios.START), telemetry=NullTelemetry(), shards=4
    )  # type: ignore[arg-type]
    r, _ = svc.create(scenarios.command(1, scenarios.START + timedelta(days=1)))
    (d,) = r.deliveries.values()

    def whole_decode(item: object) -> object:
        raise AssertionError("the whole item was decoded")

    monkeypatch.setattr(codec, "reminder_from_item", whole_decode)
    done = replace(d, state=DeliveryState.DELIVERED, delivered_at="2026-12-02T00:00:00.000000Z")
    assert store.save_delivery(r.id, done, d.rev)
