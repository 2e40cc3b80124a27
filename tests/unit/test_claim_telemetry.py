"""What the claim step tells an operator about a message it drops (MISSION §8: survivors of
`make mutate` in services/delivery/claim.py): a duplicate is counted with why, and logged with the
reminder and delivery it concerns."""

from __future__ import annotations

from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext

from tests.unit.fakes import World


def _again(w: World, rid: str) -> str:
    return w.worker("w2").process(DeliveryMessage(rid, "webhook-0", 1), MessageContext("dup", "dup")).outcome


def test_a_duplicate_of_a_delivered_message_is_counted_as_delivered_and_logged_with_its_reminder() -> None:
    w = World()
    r = w.create("k", due_in=0)
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED
    assert _again(w, r.id) == "duplicate_suppressed"
    assert w.telemetry.by_dimension[("duplicate_suppressed", (("reason", "delivered"),))] == 1
    logged = [f for action, f in w.telemetry.logs if action == "duplicate_suppressed"]
    assert [(f["reminder_id"], f["delivery_key"]) for f in logged] == [(r.id, d.key)]


def test_a_duplicate_of_a_dead_lettered_message_is_counted_as_a_dead_letter() -> None:
    w = World()
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["400"])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    assert _again(w, r.id) == "duplicate_suppressed"
    assert w.telemetry.by_dimension[("duplicate_suppressed", (("reason", "dead_letter"),))] == 1
