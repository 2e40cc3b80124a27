"""Bench figure of issue 15: the stored bytes and write units of one delivered single-channel webhook
reminder, before endpoints existed and after (``make bench``, figure "item bytes";
``python -m reminders_ops.bench.item_bytes``).

The reminders go through the real services on the in-memory world (create, the consumer's claim
and send, the recorded outcome), the store metered as the simulator meters it (every write billed
``ceil(max(size before, size after) / 1 KB)`` units, DynamoDB's rule; sizes by DynamoDB's
item-size rule):

* before: the item as stored before endpoints existed: the stored-item fixture of 2026-11-30
  (``tests/proof/data``, a retryable item in the old expanded history form, for reference) and a
  bare-URL channel with no registered endpoint (what every webhook reminder was then);
* after: a channel naming an endpoint (``endpoint_id``), whose create also records the use on the
  endpoint (one transaction: the endpoint item's ``seq`` + a use row; DynamoDB bills a transaction's
  writes twice), and the same item once a receiver receipt (issue 19) has been merged.

Write units count every write of the reminder's item and of its due-index entry (GSI), not the
once-per-process shard controls (made before measuring).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ACCOUNT = "acct-00042"
URL = "https://hooks.example-shop.com/reminders/acct-00042"
T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)
FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "proof" / "data" / "item_written_2026-11-30.json"


class _Accepting:
    """A receiver that accepts at once (200 with a receipt), as the simulator's does."""

    def send(self, delivery: Any, reminder: Any, rendered: Any) -> Any:
        from reminders.domain.retry import OutcomeClass, SendResult

        return SendResult(
            OutcomeClass.ACCEPTED, 200, receipt=f"rcpt-{delivery.key[-12:]}", fingerprint=rendered.fingerprint
        )


def measure() -> dict[str, Any]:
    from reminders.adapters.endpoints_store import USE_PREFIX, MemoryEndpointStore
    from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
    from reminders.adapters.memory import MemoryReminderStore
    from reminders.domain.models import ChannelType
    from reminders.domain.ports import NullTelemetry
    from reminders.domain.receipts import Receipt, ReceiptStatus
    from reminders.domain.schedule import iso
    from reminders.services.deliver import DeliveryMessage, MessageContext
    from reminders.services.endpoints import Endpoints, NewEndpoint
    from reminders.services.intents import ChannelSpec, NewReminder
    from reminders.services.receipts import ReceiptMerger

    from reminders_ops.bench.sim.meter import Meter, MeteredStore
    from reminders_ops.bench.sim.model import Latency, SimClock, item_size, write_units
    from reminders_ops.world import InMemoryWorld

    clock = SimClock(T0.timestamp())
    meter = Meter(clock, Latency())
    memory = MemoryReminderStore()
    telemetry = NullTelemetry()
    world = InMemoryWorld.build(clock=clock, telemetry=telemetry, store=MeteredStore(memory, meter))
    endpoint_store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    endpoints = Endpoints(store=endpoint_store, reminders=memory, clock=clock, telemetry=telemetry)
    endpoint, _ = endpoints.create(NewEndpoint(ACCOUNT, URL))
    service = world.reminders()
    deliverer = world.deliverer(
        worker="RemindersStack-WebhookConsumerFunction-Ab12Cd34Ef56:0123456789ab",
        senders={"webhook": _Accepting()},
        rng=random.Random(15),
    )

    def create(destination: str, i: int, due: datetime) -> Any:
        reminder, _ = service.create(
            NewReminder(
                account_id=ACCOUNT,
                key=f"renewal-reminder:{ACCOUNT}:2026-12-20:webhook:{i:07d}",
                kind="renewal",
                due_at=due,
                channels=(ChannelSpec(ChannelType.WEBHOOK, destination),),
                template_id="renewal",
                template_version=1,
                data={"renewal_date": "2026-12-20", "plan": "pro", "subscription_id": f"sub_{i:010d}"},
            )
        )
        return reminder

    # The once-per-process writes (the shard high-water mark, each shard's cursor) are not per
    # reminder: made here, before measuring.
    for j in range(64):
        create(URL, 1000 + j, clock.now() + timedelta(days=30))

    def one(label: str, destination: str, i: int) -> dict[str, Any]:
        meter.units.clear()
        reminder = create(destination, i, clock.now() + timedelta(seconds=1))
        use_units = 0
        if destination == endpoint.id:
            endpoints.use(endpoint.id, ACCOUNT, reminder.id, "webhook-0")
            ep_item = item_size(endpoint_store.items[endpoint.id])
            use_row = item_size(
                {
                    "pk": f"E#{endpoint.id}",
                    "sk": f"{USE_PREFIX}{reminder.id}#webhook-0",
                    "at": iso(clock.now()),
                }
            )
            use_units = 2 * (write_units(ep_item) + write_units(use_row))  # a transaction: twice
        clock.advance(2)
        stored = memory.get(reminder.id)
        assert stored is not None
        result = deliverer.process(
            DeliveryMessage(reminder.id, "webhook-0", stored.version), MessageContext(f"m-{i}", f"h-{i}")
        )
        assert result.ack and memory.items[reminder.id]["dl"]["webhook-0"]["st"] == "delivered", result
        size = item_size(memory.items[reminder.id])
        lifecycle = sum(u for (kind, _), u in meter.units.items() if kind in ("WRU", "GSI_WRU"))
        out = {
            "label": label,
            "delivered_item_bytes": size,
            "write_units_per_write": write_units(size),
            "write_units_create_to_delivered": lifecycle + use_units,
            "endpoint_use_write_units": use_units,
        }
        if destination == endpoint.id:
            key = memory.items[reminder.id]["dl"]["webhook-0"]["k"]
            merger = ReceiptMerger(store=memory, clock=clock, telemetry=telemetry)
            merger.apply(
                reminder.id, "webhook-0", key, Receipt("evt-1", ReceiptStatus.PROCESSED, iso(clock.now()))
            )
            out["with_receipt_bytes"] = item_size(memory.items[reminder.id])
        return out

    bare = one("bare url (as before endpoints)", URL, 1)
    named = one("endpoint_id (issue 15)", endpoint.id, 2)
    fixture = item_size(json.loads(FIXTURE.read_text())) if FIXTURE.exists() else None
    return {"fixture_item_bytes": fixture, "before": bare, "after": named}


def main() -> int:
    print(json.dumps(measure(), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
