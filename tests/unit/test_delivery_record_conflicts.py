"""The record step when the row moved on during the attempt (services/delivery/record.py): the branches
`make mutate` found no test reaching — a stale 2xx over a dead letter, a reminder whose version moved
on while its delivery stayed ours, a row written twice during one record, a row gone (its TTL)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.retry import OutcomeClass, RetryPolicy, SendResult
from reminders.domain.schedule import SQS_MAX_DELAY_SECONDS, iso
from reminders.domain.states import DeliveryState

from tests.unit.fakes import World


def test_a_stale_acceptance_over_a_dead_letter_is_recorded_delivered_at_its_time() -> None:
    """Another worker dead-lettered the row while our send was in flight; the provider accepted
    ours: the provider has it, so the row becomes delivered, with our receipt and our time."""
    w = World(shards=1)
    r = w.create("k", due_in=0)

    def dead_letter_meanwhile(_d: object, _r: object) -> None:
        cur = w.delivery(r.id)
        gone = replace(cur, state=DeliveryState.DEAD_LETTER, dead_letter_reason="expired", lease_owner=None)
        assert w.store.save_delivery(r.id, gone, cur.rev)

    w.sender.before_send = dead_letter_meanwhile
    w.clock.advance(3.0)
    (res,) = w.poll()
    assert res.ack and res.outcome == "recorded_after_conflict_delivered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.receipt == "r-1" and not d.dlq_pending
    assert d.delivered_at == iso(w.clock.now())
    assert w.sqs.size("webhook-dlq") == 0 and w.queued() == []  # nothing dead-lettered, nothing resent


@pytest.mark.parametrize("later", [100, 7200])  # inside SQS's 900 s delay, and past it
def test_a_failed_attempt_is_retried_under_the_new_version_when_the_reminder_moved_on_during_it(
    later: int,
) -> None:
    """The reminder's version moved on (due ``later`` seconds on) while its delivery stayed ours:
    the failure is recorded, and a message of the new version comes back at the new due time, its
    delay capped at what SQS accepts (900 s; the claim refuses it earlier)."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])

    def new_version_meanwhile(_d: object, _r: object) -> None:
        cur = w.get(r.id)
        expected = {"version": cur.version, **{cid: d.rev for cid, d in cur.deliveries.items()}}
        cur.version += 1
        cur.due_at = w.clock.now() + timedelta(seconds=later)
        assert w.store.save_reminder(cur, expected, None)

    w.sender.before_send = new_version_meanwhile
    (res,) = w.poll()
    assert res.ack and res.outcome == "recorded_after_conflict_retryable"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.history[-1].outcome == "transient"
    assert d.next_attempt_at == iso(w.get(r.id).due_at)
    (msg,) = w.queued()
    assert msg["version"] == 2 and msg["channel_id"] == "webhook-0"
    assert msg["visible_in"] == min(later, SQS_MAX_DELAY_SECONDS)


def test_a_failed_attempt_is_recorded_when_the_row_changes_again_during_its_merge() -> None:
    """The row moved on during the send, and again between the record's read and its merged
    write: the record reads the row once more and merges into that one."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    real_save = w.store.save_delivery
    saves: list[int] = []

    def touch() -> None:
        cur = w.delivery(r.id)
        assert real_save(r.id, cur, cur.rev)

    def save(reminder_id: str, delivery: Any, expected_rev: int, **kwargs: Any) -> bool:
        saves.append(expected_rev)
        if len(saves) == 2:  # the merged write of the first round: the row moves on again first
            touch()
        return real_save(reminder_id, delivery, expected_rev, **kwargs)

    w.sender.before_send = lambda _d, _r: touch()
    w.store.save_delivery = save  # type: ignore[method-assign]
    (res,) = w.poll()
    assert res.outcome == "recorded_after_conflict_retryable"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.history[-1].outcome == "transient"
    assert len(saves) == 4  # ours, the merge, ours again (refused), the merge again


def test_an_attempt_is_acknowledged_as_vanished_when_its_reminder_is_gone_during_it() -> None:
    """The row expired (its TTL) while the attempt was in flight: nothing to record, the message
    is acknowledged (no retry of a reminder that no longer exists)."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    w.sender.before_send = lambda _d, _r: w.store.items.pop(r.id) and None
    (res,) = w.poll()
    assert res.ack and res.outcome == "vanished"
    assert w.store.get(r.id) is None and w.queued() == []


def test_a_failed_attempt_is_logged_superseded_when_another_worker_delivered_meanwhile() -> None:
    """A worker that took the lease over delivered while our (stale) attempt failed: nothing of
    ours regresses the row, and the operator's log says the outcome was superseded, and by what."""
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])

    def delivered_meanwhile(_d: object, _r: object) -> None:
        cur = w.delivery(r.id)
        done = replace(
            cur, state=DeliveryState.DELIVERED, receipt="theirs", lease_owner=None, lease_until=None
        )
        assert w.store.save_delivery(r.id, done, cur.rev)

    w.sender.before_send = delivered_meanwhile
    (res,) = w.poll()
    assert res.ack and res.outcome == "superseded"
    assert w.delivery(r.id).state is DeliveryState.DELIVERED and w.delivery(r.id).receipt == "theirs"
    (line,) = [fields for action, fields in w.telemetry.logs if action == "outcome_superseded"]
    assert line == {
        "reminder_id": r.id,
        "delivery_key": w.delivery(r.id).key,
        "state": DeliveryState.DELIVERED,
    }


def test_only_an_attempt_that_may_have_been_accepted_records_its_destination_as_evidence() -> None:
    """A 500 may hide an acceptance: its line names the destination it went to (evidence a later
    409 may confirm). A 400 cannot: its line names none, and the delivery holds no evidence."""
    w = World(shards=1)
    maybe, refused = (w.create(f"renewal:acct-1:{i}", due_in=0) for i in range(2))
    w.sender.script(w.delivery(maybe.id).key, ["500"])
    w.sender.script(w.delivery(refused.id).key, ["400"])
    w.poll()
    (line,) = w.delivery(maybe.id).history
    assert line.outcome == "transient" and line.dest != "" and w.delivery(maybe.id).maybe_accepted
    (line,) = w.delivery(refused.id).history
    assert line.outcome == "permanent" and line.dest == "" and not w.delivery(refused.id).maybe_accepted


def test_a_retry_already_due_when_recorded_comes_back_under_the_new_version_without_delay() -> None:
    """The receiver answered 429 with ``Retry-After: 0`` (no jitter configured), and while the send
    was in flight the reminder's new version was made due now: the retry is due the moment the
    outcome is recorded, so the new version's message comes back at once (SQS delay 0), not a
    second later."""
    w = World(shards=1, policy=RetryPolicy(retry_after_jitter_seconds=0.0))
    r = w.create("k", due_in=0)
    real_send = w.sender.send

    def retry_after_zero(delivery: Any, reminder: Any, rendered: Any) -> SendResult:
        real_send(delivery, reminder, rendered)
        return SendResult(OutcomeClass.THROTTLED, 429, retry_after_seconds=0.0)

    def new_version_due_now(_d: object, _r: object) -> None:
        cur = w.get(r.id)
        expected = {"version": cur.version, **{cid: d.rev for cid, d in cur.deliveries.items()}}
        cur.version += 1
        cur.due_at = w.clock.now()
        assert w.store.save_reminder(cur, expected, None)

    w.sender.before_send = new_version_due_now
    w.sender.send = retry_after_zero  # type: ignore[method-assign]
    (res,) = w.poll()
    assert res.outcome == "recorded_after_conflict_retryable"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.RETRYABLE and d.next_attempt_at == iso(w.clock.now())
    (msg,) = w.queued()
    assert msg["version"] == 2
    assert msg["visible_in"] == 0
