"""Issue 32 item 3: the outcome's write derives the attention and TTL attributes from the delivery it
holds and the few item fields they read, not from a decode of the whole item — and gets the same
answer for every item a faulty run leaves (delivered, retrying, dead letters, several channels)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from reminders_ops.bench.sim import scenarios


@pytest.mark.xfail(strict=True, reason="issue 32 item 3: the outcome's write decodes the whole item")
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
