"""The write cost of the support desk's sparse attention index, per delivered reminder.

Runs the real services (Reminders, Deliverer) on the in-memory store, which counts the extra table
writes that only settle the attention attributes and the writes the ``attention`` GSI receives
(a put 1, a move 2, a removal 1), for three populations: delivered at the first attempt, delivered
after one 429, dead-lettered by a 410 then cancelled. ``python -m reminders_ops.bench --only attention``.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

from reminders.adapters.clock import FixedClock
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import MemoryQueues, MemorySqs, QueueConfig
from reminders.domain.models import ChannelType, Delivery, Reminder
from reminders.domain.ports import NullTelemetry, Rendered
from reminders.domain.retry import OutcomeClass, RetryPolicy, SendResult
from reminders.services.deliver import Deliverer, DeliveryMessage, MessageContext
from reminders.services.intents import ChannelSpec, NewReminder, Reminders

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


class _Scripted:
    def __init__(self, first: str) -> None:
        self.first = first
        self.seen: set[str] = set()

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        fp = rendered.fingerprint
        if delivery.key not in self.seen:
            self.seen.add(delivery.key)
            if self.first == "429":
                return SendResult(OutcomeClass.THROTTLED, 429, fingerprint=fp)
            if self.first == "410":
                return SendResult(OutcomeClass.PERMANENT, 410, fingerprint=fp)
        return SendResult(OutcomeClass.ACCEPTED, 200, receipt="r", fingerprint=fp)


def measure(n: int, first: str) -> dict[str, Any]:
    """``n`` single-channel webhook reminders whose first attempt answers ``first`` (ok|429|410)."""
    clock = FixedClock(T0)
    sqs = MemorySqs(lambda: clock.now().timestamp())
    sqs.create_queue("webhook-dlq")
    sqs.create_queue(
        "webhook", QueueConfig(visibility_timeout=120, dead_letter_queue="webhook-dlq", max_receive_count=20)
    )
    sqs.create_queue("dispatch")
    queues = MemoryQueues(
        sqs, queue_names={"webhook": "webhook"}, dlq_names={"webhook": "webhook-dlq"}, dispatch="dispatch"
    )
    store = MemoryReminderStore(clock=clock)
    tel = NullTelemetry()
    reminders = Reminders(store=store, queues=queues, clock=clock, telemetry=tel, shards=4)
    deliverer = Deliverer(
        store=store,
        queues=queues,
        senders={"webhook": _Scripted(first)},
        clock=clock,
        policy=RetryPolicy(),
        telemetry=tel,
        worker="bench",
        max_receive_count=20,
        rng=random.Random(7),
    )
    ids = []
    for i in range(n):
        r, _ = reminders.create(
            NewReminder(
                account_id="acct-1",
                key=f"bench:{i}",
                kind="renewal",
                due_at=clock.now(),
                channels=(ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/r"),),
                template_id="renewal",
                template_version=1,
                data={"plan": "pro"},
            )
        )
        ids.append(r.id)
    writes_before = store.writes
    for _ in range(20 * n):  # receive, process, settle until the queue is empty
        batch = sqs.receive("webhook", 10)
        if not batch:
            if not any(sqs.queues["webhook"].messages):
                break
            clock.advance(60)
            continue
        for m in batch:
            res = deliverer.process(
                DeliveryMessage.parse(json.loads(m.body)),
                MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes)),
            )
            if res.ack:
                sqs.delete("webhook", m.receipt_handle)
            else:
                sqs.change_visibility("webhook", m.receipt_handle, res.visibility_seconds)
    if first == "410":
        for rid in ids:
            reminders.cancel(rid)  # a person decided: it leaves the index with the cancel's own write
    states = [r.state for r in store.batch_get(ids)]
    return {
        "reminders": n,
        "first_attempt": first,
        "final_states": {s: states.count(s) for s in sorted(set(states))},
        "table_writes_per_reminder": (store.writes - writes_before) / n,
        "attention_settle_writes_per_reminder": store.attention_writes / n,
        "attention_index_writes_per_reminder": store.attention_index_writes / n,
    }


def figure(n: int = 500) -> dict[str, Any]:
    rows = {first: measure(n, first) for first in ("ok", "429", "410")}
    print(f"  {'first attempt':<16}{'final':<26}{'settle writes/rem':>20}{'GSI writes/rem':>18}")
    for first, row in rows.items():
        final = ",".join(f"{k}={v}" for k, v in row["final_states"].items())
        print(
            f"  {first:<16}{final:<26}{row['attention_settle_writes_per_reminder']:>20.2f}"
            f"{row['attention_index_writes_per_reminder']:>18.2f}"
        )
    return rows


if __name__ == "__main__":  # pragma: no cover
    figure()
