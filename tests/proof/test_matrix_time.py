"""The failure-injection matrix, time cases (issue 17): quiet hours across midnight with a retry that
lands inside them; a deadline that passes while throttled by 429s (and its redrive, which needs a
new deadline); an eight-day local-time reminder across a DST change that enters the delay window
and fires at the right instant.

The first two run the REAL handlers on moto with the real local receiver (tests/proof/harness.py);
the eight-day case runs the real services on the in-memory world (tests/unit/fakes.py): the
dispatcher walks 11,520 minute buckets on its way there, seconds in memory, minutes on moto.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders import runtime
from reminders.domain.localtime import SendWindow
from reminders.domain.schedule import iso, parse_iso
from reminders.services.intents import resolve_local
from reminders_ops.cli.dlq import peek, redrive
from reminders_ops.local.receiver import Behaviour

from tests.proof.harness import Harness
from tests.support.lambda_runtime import call_api
from tests.unit.fakes import World

pytestmark = pytest.mark.usefixtures("no_sleep")


def _create(proof: Harness, key: str, **fields: Any) -> dict[str, Any]:
    body = {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) - timedelta(seconds=60)).isoformat(),
        "channels": [{"type": "webhook", "url": proof.receiver.url + "/hooks"}],
        "template": {"id": "renewal", "version": 1},
        "data": {"plan": "pro"},
        **fields,
    }
    status, payload = call_api("POST", "/reminders", body)
    assert status == 201, payload
    return payload


def _attempts(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for h in d["history"] if h["event"] == "attempt"]


# T1 ------------------------------------------------------------------------------------------------
def test_t1_quiet_hours_across_midnight_a_retry_landing_inside_waits_for_the_opening(proof: Harness) -> None:
    # A zone in which the next full hour is 06:00: the window 22:00-06:00 (across midnight) closes then.
    closes = (datetime.now(UTC) + timedelta(minutes=1)).replace(minute=0, second=0, microsecond=0)
    closes += timedelta(hours=1)
    offset = (6 - closes.hour) % 24
    offset = offset - 24 if offset > 14 else offset
    tz = f"Etc/GMT{-offset:+d}"  # POSIX sign: Etc/GMT-3 is UTC+3
    r = _create(proof, "quiet:acct-1:t1", time_zone=tz, send_window={"start": "22:00", "end": "06:00"})
    proof.receiver.script("*", [Behaviour(503)])
    key = r["deliveries"][0]["key"]

    proof.clock.current = closes - timedelta(seconds=1)  # 05:59:59 local: open for one more second
    first = proof.webhook.poll()
    assert first is not None and first.failures  # a 503: retry by visibility
    d = proof.delivery(r["id"])
    opens = closes + timedelta(hours=16)  # 22:00 local
    assert d["state"] == "retryable" and d["attempts"] == 1
    assert d["next_attempt_at"] == iso(opens)  # the retry (1..4 s) landed at 06:00+: it waits
    [(_, _, seconds)] = proof.visibility_changes()
    assert 11 * 3600 < seconds <= 12 * 3600  # the 12 h visibility cap: judged again later
    assert proof.posts(key) == 1

    # The message comes back before the opening: not sent, waits again (no attempt spent).
    proof.clock.current = closes + timedelta(hours=12)
    proof.webhook.reappear(first.messages)
    early = proof.webhook.poll()
    assert early is not None and early.failures and proof.posts(key) == 1
    assert proof.delivery(r["id"])["attempts"] == 1

    proof.clock.current = opens + timedelta(seconds=1)
    proof.webhook.reappear(early.messages)
    done = proof.webhook.poll()
    assert done is not None and done.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and proof.accepted(key) == 1 and proof.posts(key) == 2
    assert parse_iso(_attempts(d)[-1]["at"]) >= opens  # never inside quiet hours


# T2 ------------------------------------------------------------------------------------------------
def test_t2_a_deadline_that_passes_while_throttled_by_429s_dead_letters_and_redrive_needs_a_new_one(
    proof: Harness,
) -> None:
    deadline = proof.clock.now() + timedelta(seconds=300)
    r = _create(proof, "cart-expiry:acct-1:t2", deliver_by=iso(deadline))
    proof.receiver.script("*", [Behaviour(429, retry_after="120")] * 5)
    key = r["deliveries"][0]["key"]

    messages = None
    for _ in range(5):
        inv = proof.webhook.poll()
        if inv is None:
            break
        messages = inv.messages
        if not inv.failures:
            break
        proof.past_next_attempt(r["id"])
        proof.webhook.reappear(messages)
    d = proof.delivery(r["id"])
    assert d["state"] == "dead_letter" and d["dead_letter_reason"] == "deadline_passed"
    assert d["attempts"] == 0 and d["throttles"] >= 2  # 429s spend nothing; the deadline ended it
    assert all(parse_iso(a["at"]) < deadline for a in _attempts(d))  # no attempt started after it
    assert proof.posts(key) == d["throttles"] and proof.accepted(key) == 0
    dlq, source = proof.env["WEBHOOK_DLQ_URL"], proof.env["WEBHOOK_QUEUE_URL"]
    (m,) = peek(proof.sqs, dlq)
    assert m.reason == "deadline_passed"

    # A redrive without a new deadline leaves it where it is (it would dead-letter again unsent).
    report = redrive(proof.sqs, dlq, source, max_messages=10)
    assert report.moved == [] and report.needs_deadline == 1
    assert len(peek(proof.sqs, dlq)) == 1

    # With a new deadline it gets a fresh cycle and is delivered once (the receiver is fine now).
    proof.receiver.reset_scripts()
    new_deadline = datetime.now(UTC) + timedelta(days=1)
    service = runtime.reminders_service()
    report = redrive(
        proof.sqs,
        dlq,
        source,
        max_messages=10,
        set_deadline=lambda msg: service.set_deadline(r["id"], new_deadline),
    )
    assert len(report.moved) == 1
    done = proof.webhook.poll()
    assert done is not None and done.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and d["cycle"] == 1
    assert proof.get(r["id"])["deliver_by"] == iso(new_deadline)
    assert proof.accepted(key) == 1


# T3 ------------------------------------------------------------------------------------------------
def test_t3_eight_day_local_time_reminder_across_dst_enters_the_window_and_fires_at_the_right_instant() -> (
    None
):
    start = datetime(2027, 3, 22, 8, 0, tzinfo=UTC)  # Monday; Berlin springs forward on Sunday 28th
    w = World(shards=1, start=start)
    instant, wall = resolve_local("2027-03-30T09:00", "Europe/Berlin")
    assert instant == datetime(2027, 3, 30, 7, 0, tzinfo=UTC)  # CEST, not the creation day's CET
    cmd = replace(
        w.new("renewal:acct-1:2027-03-30"),
        due_at=instant,
        due_local=wall,
        time_zone="Europe/Berlin",
        send_window=SendWindow.parse("08:00", "21:00"),
    )
    r, _ = w.reminders.create(cmd)
    assert w.delivery(r.id).state.value == "scheduled"

    # The dispatcher every hour for eight days: nothing enters SQS until the due time is within
    # the window (900 s, less the index-lag margin).
    w.run_shards()
    while w.clock.now() + timedelta(hours=1) <= instant - timedelta(minutes=20):
        w.clock.advance(3600)
        w.run_shards()
        assert w.queued() == []
    while not w.queued():
        w.clock.advance(60)
        w.run_shards()
    entered = w.clock.now()
    assert instant - timedelta(seconds=900) <= entered <= instant
    (msg,) = w.queued()
    assert abs(msg["visible_in"] - (instant - entered).total_seconds()) <= 1  # the exact remaining delay

    w.clock.current = instant - timedelta(seconds=1)
    assert w.poll() == []  # not visible yet: never early
    w.clock.current = instant
    (res,) = w.poll()
    assert res.outcome == "delivered"
    (call,) = w.sender.calls
    assert call.at == instant  # 09:00 CEST on the 30th
