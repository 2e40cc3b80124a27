"""Bench figure of issue 25 item 6: messages per parked delivery over a 24 h hold.

The in-memory world (the real services on in-memory SQS/DynamoDB), virtual time: one account's
endpoint answers 503 for longer than a day, so it is held and its deliveries are parked; the
dispatcher and its watchdog run every minute, the consumer drains what is visible. Printed: the most
live messages any parked delivery had at once (goal 1: parked copies never multiply).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from reminders.adapters.clock import FixedClock
from reminders.domain.models import ChannelType, Delivery, Reminder
from reminders.domain.ports import NullTelemetry, Rendered
from reminders.domain.retry import OutcomeClass, SendResult
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.intents import ChannelSpec, NewReminder

from reminders_ops.world import InMemoryWorld

HOLD_HOURS = 24
STEP_SECONDS = 60


class _Down:
    """A receiver that answers 503 to everything."""

    def __init__(self) -> None:
        self.calls = 0

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        self.calls += 1
        return SendResult(OutcomeClass.TRANSIENT, 503, fingerprint=rendered.fingerprint)


def measure(deliveries: int = 20, hours: int = HOLD_HOURS) -> dict[str, Any]:
    clock = FixedClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    world = InMemoryWorld.build(clock=clock, telemetry=NullTelemetry(), shards=1)
    sender = _Down()
    deliverer = world.deliverer(worker="w1", senders={"webhook": sender}, rng=random.Random(7))
    dispatcher = world.dispatcher(worker="dispatch-1")
    reminders = world.reminders()
    ids = []
    for i in range(deliveries):
        r, _ = reminders.create(
            NewReminder(
                account_id="acct-bench",
                key=f"renewal:acct-bench:parked-{i}",
                kind="renewal",
                due_at=clock.now() + timedelta(seconds=i),
                channels=(ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/reminders"),),
                template_id="renewal",
                template_version=1,
                data={"plan": "pro"},
            )
        )
        ids.append(r.id)
    most, samples = 0, 0
    for _ in range(hours * 3600 // STEP_SECONDS):
        dispatcher.run_shard(0, lambda: 600.0)
        while batch := world.sqs.receive("webhook", 10):
            for m in batch:
                res = deliverer.process(
                    DeliveryMessage.parse(json.loads(m.body)),
                    MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes)),
                )
                if res.ack:
                    world.sqs.delete("webhook", m.receipt_handle)
                else:
                    world.sqs.change_visibility("webhook", m.receipt_handle, res.visibility_seconds)
        live: dict[str, int] = {}
        for queued in world.sqs.queues["webhook"].messages.values():
            rid = json.loads(queued.body)["reminder_id"]
            live[rid] = live.get(rid, 0) + 1
        most = max(most, *live.values()) if live else most
        samples += 1
        clock.advance(STEP_SECONDS)
    return {
        "deliveries": deliveries,
        "hold_hours": hours,
        "most_live_messages_per_parked_delivery": most,
        "receiver_calls": sender.calls,
        "samples": samples,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))
