"""Issue 14 (a million due in one minute) — the in-memory SQS's best-effort order among visible
messages counts a delayed message as sent when its delay ends. Sent in one burst with delays (a
dispatcher's page), a message that turns visible now must not overtake one that has been visible
for a minute only because it was sent earlier: under a backlog that starved the overdue messages
behind the fresh ones (the burst figure). A message whose visibility ended still keeps its place."""

from __future__ import annotations

from reminders.adapters.memory_sqs import MemorySqs


class Clock:
    t = 1_000.0

    def __call__(self) -> float:
        return self.t


def test_a_message_visible_for_a_minute_is_received_before_one_that_turned_visible_just_now() -> None:
    clock = Clock()
    sqs = MemorySqs(clock)
    sqs.create_queue("q")
    sqs.send("q", "due-at-61", delay_seconds=61)  # sent first, with the longer delay
    sqs.send("q", "due-at-1", delay_seconds=1)
    clock.t += 61
    assert [m.body for m in sqs.receive("q", 1)] == ["due-at-1"]  # visible for 60 s: first
    assert [m.body for m in sqs.receive("q", 1)] == ["due-at-61"]


def test_a_message_whose_visibility_ended_keeps_its_place() -> None:
    clock = Clock()
    sqs = MemorySqs(clock)
    sqs.create_queue("q")
    sqs.send("q", "first")
    (m,) = sqs.receive("q", 1)
    sqs.change_visibility("q", m.receipt_handle, 5)
    clock.t += 1
    sqs.send("q", "second")
    clock.t += 5
    assert [x.body for x in sqs.receive("q", 2)] == ["first", "second"]
