"""What the claim step tells an operator about a message it drops (MISSION §8: survivors of
`make mutate` in services/delivery/claim.py): a duplicate is counted with why, and logged with the
reminder and delivery it concerns; a redrive starts a fresh cycle (and says so), or records an
acceptance already on record as delivered."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from reminders.domain.schedule import iso
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


def _redrive(w: World) -> None:
    """What an operator's redrive does: the dead letter's message back on the source queue."""
    (m,) = w.sqs.receive("webhook-dlq")
    w.sqs.send("webhook", m.body, attributes=dict(m.attributes))
    w.sqs.delete("webhook-dlq", m.receipt_handle)


def test_a_redriven_dead_letter_starts_a_fresh_cycle_with_no_throttles_and_logs_the_cycle() -> None:
    w = World()
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["429", "400"])
    while w.delivery(r.id).state is not DeliveryState.DEAD_LETTER:
        w.clock.advance(max([0.0] + [m["visible_in"] for m in w.queued()]))
        w.poll()
    assert w.delivery(r.id).throttles == 1
    w.sender.script(key, ["500"])  # the redriven cycle's first attempt fails: the row is kept as written
    _redrive(w)
    w.poll()
    d = w.delivery(r.id)
    assert (d.cycle, d.throttles, d.attempts) == (1, 0, 1)
    redrives = [f for action, f in w.telemetry.logs if action == "redrive"]
    assert redrives == [{"reminder_id": r.id, "delivery_key": key, "cycle": 1}]
    assert w.telemetry.by_dimension[("redriven", (("reason", "permanent_failure"),))] == 1


@pytest.mark.parametrize("acceptance_time_kept", [True, False])
def test_a_redrive_of_an_accepted_dead_letter_records_it_delivered_without_sending(
    acceptance_time_kept: bool,
) -> None:
    """Delivered at the acceptance's time when the row kept it, else at the redrive's."""
    w = World()
    r = w.create("k", due_in=0)
    w.poll()
    d = w.delivery(r.id)
    assert d.delivered_at is not None
    kept = d.delivered_at if acceptance_time_kept else None
    w.clock.advance(60)
    w.store.save_delivery(
        r.id,
        replace(d, state=DeliveryState.DEAD_LETTER, dead_letter_reason="permanent", delivered_at=kept),
        d.rev,
    )
    w.sqs.send(
        "webhook",
        json.dumps({"reminder_id": r.id, "channel_id": "webhook-0", "version": r.version}),
        attributes={"dl_cycle": "0", "reason": "permanent_failure"},
    )
    w.poll()
    after = w.delivery(r.id)
    assert after.state is DeliveryState.DELIVERED and w.sender.sends(d.key) == 1
    line = after.history[-1]
    assert (line.event, line.decision, line.detail) == ("redrive", "delivered", "accepted_before")
    assert after.delivered_at == (kept or iso(w.clock.now()))


def test_an_accepted_attempt_records_the_providers_receipt_on_its_history_line() -> None:
    w = World()
    r = w.create("k", due_in=0)
    w.poll()
    (line,) = [a for a in w.delivery(r.id).history if a.event == "attempt"]
    assert (line.outcome, line.receipt) == ("accepted", "r-1")  # what the provider answered with


def test_a_refused_attempt_is_recorded_dead_lettered_when_the_row_changed_during_it() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["400"])

    def touch(_d: object, _r: object) -> None:  # another writer rewrites the row mid-send
        cur = w.delivery(r.id)
        assert w.store.save_delivery(r.id, cur, cur.rev)

    w.sender.before_send = touch
    (res,) = w.poll()
    assert res.outcome == "recorded_after_conflict_dead_letter"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.lease_owner is None
