"""Issue 25 items 1-4: the evidence that an attempt may have been accepted decides corrections and the
409 reconcile rule; it survives take-overs that do not send, history compaction and corrections;
a redrive after a correction delivers at once."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from reminders.domain.corrections import Data, Destination, DueAt
from reminders.domain.errors import ConflictError
from reminders.domain.localtime import SendWindow
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.services.deliver import RecordResult
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import EMAIL, VISIBILITY_TIMEOUT, WEBHOOK_URL, Crash, World

NEW_URL = "https://hooks.example.com/corrected"


@pytest.fixture
def w() -> World:
    return World(shards=1)


def step(w: World) -> RecordResult:
    """One receive of the delivery's message (waiting for it to be visible), processed and settled."""
    (msg,) = w.queued()
    if msg["visible_in"] > 0:
        w.clock.advance(msg["visible_in"])
    (res,) = w.poll()
    return res


def attempts_until(w: World, rid: str, n: int) -> None:
    """Let the delivery run until ``n`` send calls were made (every one scripted to fail)."""
    while len(w.sender.calls) < n:
        res = step(w)
        assert not res.ack, res.outcome
    assert w.delivery(rid).state is DeliveryState.RETRYABLE


# -- item 1: the correction rule looks at every earlier attempt ---------------------------------------
@pytest.mark.parametrize("later", ["connection", "429"])
def test_correction_after_an_ambiguous_attempt_then_a_refusal_is_refused_409(w: World, later: str) -> None:
    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    w.sender.script(key, ["timeout_after", later])  # the receiver took the first one
    attempts_until(w, r.id, 2)
    before = dict(w.store.items[r.id])
    with pytest.raises(ConflictError) as refused:
        w.reminders.correct(r.id, [Data({"plan": "enterprise"})])
    assert getattr(refused.value, "code", "") == "correction_after_possible_acceptance"
    with pytest.raises(ConflictError, match="may have been accepted"):
        w.reminders.correct(r.id, [Destination("webhook-0", ChannelType.WEBHOOK, NEW_URL)])
    assert w.store.items[r.id] == before  # nothing written


def test_due_date_changed_after_a_timeout_after_acceptance_and_a_permanent_4xx_is_refused_409(
    w: World,
) -> None:
    """The body carries ``due_at``: a reschedule changes what a dead letter's redrive sends, so a dead
    letter that may have been accepted refuses it as any correction does (or takes ``resend: true``).
    The email channel is still open, so the reschedule is not refused for having nothing to move."""
    both = (ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.EMAIL, EMAIL))
    r = w.create("k", due_in=0, channels=both)
    key = r.deliveries["webhook-0"].key
    w.sender.script(key, ["timeout_after", "400"])  # the receiver took the first; then a permanent 4xx
    step(w)
    step(w)
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    before = dict(w.store.items[r.id])
    with pytest.raises(ConflictError) as refused:
        w.reminders.reschedule(r.id, w.clock.now() + timedelta(hours=1))
    assert getattr(refused.value, "code", "") == "correction_after_possible_acceptance"
    assert w.store.items[r.id] == before  # nothing written
    updated = w.reminders.correct(r.id, [DueAt(w.clock.now() + timedelta(hours=1))], resend=True)
    d = updated.deliveries["webhook-0"]
    assert d.state is DeliveryState.DEAD_LETTER and d.key != key and d.resend == 1


def test_an_explicit_resend_is_a_new_generation_with_a_new_webhook_id_visible_in_explain(w: World) -> None:
    from reminders.services.support import explain, reminder_view

    r = w.create("k", due_in=0)
    old_key = r.deliveries["webhook-0"].key
    w.sender.script(old_key, ["timeout_after", "connection"])
    attempts_until(w, r.id, 2)
    updated = w.reminders.correct(r.id, [Data({"plan": "enterprise"})], resend=True)
    d = updated.deliveries["webhook-0"]
    assert d.key != old_key and d.resend == 1
    assert not d.may_have_been_accepted(d.destination)  # the new key was never sent
    assert d.history[-1].event == "resend"
    outcomes: list[str] = []
    while w.queued():  # the retry of the old version is stale; the new version's message sends
        w.clock.advance(max(0.0, min(m["visible_in"] for m in w.queued())))
        outcomes += [x.outcome for x in w.poll()]
    assert outcomes.count("delivered") == 1 and w.sender.sends(d.key) == 1
    assert w.sender.calls[-1].key == d.key and '"plan":"enterprise"' in w.sender.calls[-1].body
    (shown,) = explain(reminder_view(w.get(r.id)), w.clock.now())["deliveries"]
    assert shown["resends"] == 1 and "resend" in [c["event"] for c in shown["changes"]]


# -- item 2: a take-over that defers keeps the evidence ---------------------------------------------------
def test_takeover_that_defers_keeps_the_earlier_send_as_evidence(w: World) -> None:
    window = SendWindow.parse("12:00", "12:01")  # T0 = 12:00 UTC; the take-over comes after 12:01
    reminder, _ = w.reminders.create(replace(w.new("k", due_in=30), send_window=window, time_zone="UTC"))
    key = reminder.deliveries["webhook-0"].key
    w.sender.script(key, ["crash_after"])  # worker A: the receiver accepts, A dies before recording
    w.clock.advance(30)
    (m,) = w.receive()
    with pytest.raises(Crash):
        w.process(m, "w1")
    w.clock.advance(VISIBILITY_TIMEOUT + 1)  # A's lease expired; its message is visible again
    (m,) = w.receive()
    res = w.process(m, "w2")
    w.settle("webhook", m, res)
    assert res.outcome == "deferred_quiet_hours"  # taken over, outside the window: released unsent
    res = step(w)
    while res.outcome == "not_yet_due":  # SQS hands it back within 12 h; the opening is tomorrow
        res = step(w)
    assert res.outcome == "delivered"  # the receiver's 409 confirms A's send
    d = w.delivery(reminder.id)
    assert d.history[-1].outcome == "reconciled_conflict" and w.sender.accepted[key] == 1
    assert d.may_have_been_accepted(d.destination)


# -- item 3: compaction keeps the evidence ----------------------------------------------------------------
def test_compacted_history_keeps_possible_acceptance_evidence(w: World) -> None:
    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    later = ["connection", "429"] * 4  # eight unambiguous lines after the ambiguous third one
    w.sender.script(key, ["429", "connection", "timeout_after", *later])
    attempts_until(w, r.id, 11)
    d = w.delivery(r.id)
    assert d.dropped.get("timeout") == 1 and "timeout" not in [a.outcome for a in d.history]
    with pytest.raises(ConflictError, match="may have been accepted"):
        w.reminders.correct(r.id, [Data({"plan": "enterprise"})])
    res = step(w)  # the receiver answers 409 for the key it holds: delivered, not a dead letter
    assert res.outcome == "delivered"
    assert w.delivery(r.id).history[-1].outcome == "reconciled_conflict"


# -- item 4: a redrive after a correction ----------------------------------------------------------------
def test_redrive_after_correction_delivers_without_the_watchdog(w: World) -> None:
    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    w.sender.script(key, ["400"])
    w.poll()
    assert w.delivery(r.id).state is DeliveryState.DEAD_LETTER
    w.reminders.correct(r.id, [Data({"plan": "enterprise"})])  # the documented flow: fix, then redrive
    (dl,) = w.sqs.receive("webhook-dlq")
    assert json.loads(dl.body)["version"] == 1
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    w.sender.script(key, ["500"])  # the redriven delivery's first attempt fails: its own retry
    (res,) = w.poll()
    assert res.outcome == "retry_scheduled"
    w.clock.advance(res.visibility_seconds)
    assert [x.outcome for x in w.poll()] == ["delivered"]  # seconds later, not at the watchdog
    assert '"plan":"enterprise"' in w.sender.calls[-1].body
    assert w.delivery(r.id).state is DeliveryState.DELIVERED and w.queued() == []


def test_evidence_is_scoped_to_the_delivery_key_and_destination(w: World) -> None:
    """An unambiguous failure leaves no evidence; corrections stay allowed (no false refusals)."""
    r = w.create("k", due_in=0)
    w.sender.script(r.deliveries["webhook-0"].key, ["connection", "429"])
    attempts_until(w, r.id, 2)
    assert w.reminders.correct(r.id, [Data({"plan": "x"})]).version == 2


def test_takeover_that_gives_the_claim_back_unsent_keeps_the_earlier_send_as_evidence(w: World) -> None:
    """The other release path: taken over with too little time left to send, handed back unsent."""
    from reminders.services.deliver import DeliveryMessage, MessageContext

    r = w.create("k", due_in=0)
    key = r.deliveries["webhook-0"].key
    w.sender.script(key, ["crash_after"])
    (m,) = w.receive()
    with pytest.raises(Crash):
        w.process(m, "w1")
    w.clock.advance(VISIBILITY_TIMEOUT + 1)
    (m,) = w.receive()
    timing = w.worker("w2").timing
    left = [timing.record_budget_seconds + 1]  # enough to claim; then the claim took its time

    def remaining() -> float:
        return left.pop() if left else timing.send_budget_seconds - 1

    res = w.worker("w2").process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(m.message_id, m.receipt_handle, m.receive_count, remaining_seconds=remaining),
    )
    w.settle("webhook", m, res)
    assert res.outcome == "no_time_left" and w.sender.sends(key) == 1
    d = w.delivery(r.id)
    assert d.state is DeliveryState.QUEUED and d.may_have_been_accepted(d.destination)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    assert w.delivery(r.id).history[-1].outcome == "reconciled_conflict"


def test_the_evidence_summary_round_trips_and_items_written_before_it_seed_it_from_their_history() -> None:
    from reminders.adapters.codec import delivery_from_map, delivery_to_map, from_dynamo
    from reminders.domain.models import Attempt, Delivery, destination_tag

    url = "https://hooks.example.com/a"
    d = Delivery("webhook-0", ChannelType.WEBHOOK, url, "dlv_x", maybe_accepted=["0badc0de"], resend=2)
    back = delivery_from_map("webhook-0", from_dynamo(delivery_to_map(d)))
    assert (back.maybe_accepted, back.resend) == (["0badc0de"], 2)
    assert "ma" not in delivery_to_map(replace(d, maybe_accepted=[], resend=0))  # no bytes when empty
    old = delivery_to_map(
        replace(d, maybe_accepted=[], resend=0, history=[Attempt(at="x", event="attempt", outcome="timeout")])
    )
    assert delivery_from_map("webhook-0", from_dynamo(old)).maybe_accepted == [destination_tag(url)]


def test_a_resent_dead_letter_is_redriven_under_its_new_key(w: World) -> None:
    r = w.create("k", due_in=0)
    old_key = r.deliveries["webhook-0"].key
    w.sender.script(old_key, ["timeout_after", "400"])  # held by the receiver, then a permanent refusal
    attempts_until_dead = [step(w) for _ in range(2)]
    assert attempts_until_dead[-1].outcome == "dead_lettered"
    with pytest.raises(ConflictError, match="may have been accepted"):
        w.reminders.correct(r.id, [Data({"plan": "enterprise"})])
    d = w.reminders.correct(r.id, [Data({"plan": "enterprise"})], resend=True).deliveries["webhook-0"]
    assert d.state is DeliveryState.DEAD_LETTER and d.key != old_key
    (dl,) = w.sqs.receive("webhook-dlq")
    w.sqs.send("webhook", dl.body, attributes=dl.attributes)
    w.sqs.delete("webhook-dlq", dl.receipt_handle)
    assert [x.outcome for x in w.poll()] == ["delivered"]
    assert w.sender.calls[-1].key == d.key and w.sender.accepted[old_key] == 1
