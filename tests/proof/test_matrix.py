"""The failure-injection matrix of issue 5: one named test per case, against the REAL handlers
(webhook/email consumers, the shard dispatcher, the HTTP API) on moto, with the real local HTTP
receiver for webhooks and SES on moto for email.

Every case ends with the receiver's own count of accepted sends per delivery key (at most one) and,
where a retry happened, the raw POSTs per key and why each one beyond the first was made.
"""

from __future__ import annotations

import email
import json
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders_ops.local.receiver import Behaviour, WebhookReceiver

from tests.proof.harness import Harness, attrs_of
from tests.support.aws import sent_emails, table
from tests.support.lambda_runtime import call_api

pytestmark = pytest.mark.usefixtures("no_sleep")
HANG = 4.0  # the receiver answers this late: past the provider timeout (2 s, tests/proof/conftest.py)


def _key(reminder: dict[str, Any], channel: str = "webhook-0") -> str:
    return next(d["key"] for d in reminder["deliveries"] if d["channel_id"] == channel)


def _outcomes(delivery: dict[str, Any]) -> list[str]:
    return [h["outcome"] for h in delivery["history"] if h["event"] == "attempt"]


def _emails_for(key: str) -> list[Any]:
    return [m for m in sent_emails() if f"<{key}@" in m.raw_data]


# 1 -------------------------------------------------------------------------------------------------
def test_01_duplicate_sqs_delivery_before_work_starts_sends_once(proof: Harness) -> None:
    r = proof.create("renewal-reminder:acct-1:2026-12-20:dup", webhook=True, email=True)
    for esm in (proof.webhook, proof.email):
        first = esm.receive()
        assert len(first) == 1
        esm.reappear(first)  # SQS hands the same message out again (at-least-once delivery)
        second = esm.receive()
        assert [m["MessageId"] for m in second] == [m["MessageId"] for m in first]
        assert second[0]["ReceiptHandle"] != first[0]["ReceiptHandle"]
        # Both copies are out before any work starts; each goes to its own invocation.
        assert esm.invoke(first).failures == []
        assert esm.invoke(second).failures == []
        assert esm.depth() == 0

    key = _key(r)
    assert proof.accepted(key) == 1 and proof.posts(key) == 1
    assert len(_emails_for(_key(r, "email-0"))) == 1
    assert proof.telemetry.by_reason[("duplicate_suppressed", "delivered")] == 2
    assert {d["state"] for d in proof.get(r["id"])["deliveries"]} == {"delivered"}


# 2 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["retry_after_seconds", "retry_after_http_date", "no_retry_after"])
def test_02_http_429_honours_retry_after_seconds_or_date_else_backoff(proof: Harness, variant: str) -> None:
    jitter = proof._base.policy.retry_after_jitter_seconds
    if variant == "retry_after_seconds":
        retry_after: str | None = "120"
        low, high = 120, 120 + jitter + 1
    elif variant == "retry_after_http_date":
        retry_after = format_datetime(datetime.now(UTC) + timedelta(seconds=300), usegmt=True)
        low, high = 240, 300 + jitter + 1  # counted from when the sender parses it (load-tolerant)
    else:
        retry_after = None
        low, high = 1, 2 * 2**1  # equal jitter, 429 base 2 s (REMINDERS_RETRY_THROTTLE_BASE_SECONDS=2)
    proof.receiver.script("*", [Behaviour(429, retry_after=retry_after)])
    r = proof.create(f"cart-expiry:acct-1:{variant}")
    key = _key(r)

    msgs = proof.webhook.receive()
    inv = proof.webhook.invoke(msgs)
    # Retried by visibility, reported as a batch item failure, never by sleeping.
    assert inv.failures == [msgs[0]["MessageId"]]
    [(channel, receipt, seconds)] = proof.visibility_changes()
    assert channel == "webhook" and receipt == msgs[0]["ReceiptHandle"]
    assert low <= seconds <= high, seconds
    d = proof.delivery(r["id"])
    assert d["state"] == "retryable" and d["attempts"] == 0 and d["throttles"] == 1  # 429 spends nothing
    assert d["history"][-1]["outcome"] == "throttled" and d["history"][-1]["status"] == 429

    # An early redelivery is not sent: it comes back at the retry time.
    proof.webhook.reappear(msgs)
    early = proof.webhook.poll()
    assert early is not None and early.failures == [msgs[0]["MessageId"]]
    assert proof.posts(key) == 1

    proof.past_next_attempt(r["id"])
    proof.webhook.reappear(early.messages)
    done = proof.webhook.poll()
    assert done is not None and done.failures == []
    assert proof.delivery(r["id"])["state"] == "delivered"
    assert proof.accepted(key) == 1 and proof.posts(key) == 2


# 3 -------------------------------------------------------------------------------------------------
def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@pytest.mark.parametrize("variant", ["connection_refused", "hang_before_accepting"])
def test_03_timeout_before_receiver_accepted_retries_same_key_sends_once(
    proof: Harness, variant: str
) -> None:
    if variant == "connection_refused":
        port = _closed_port()
        r = proof.create("cart-expiry:acct-1:refused", path="/hooks")
        table().update_item(
            Key={"pk": f"R#{r['id']}", "sk": "R"},
            UpdateExpression="SET dl.#c.dst = :u",
            ExpressionAttributeNames={"#c": "webhook-0"},
            ExpressionAttributeValues={":u": f"http://127.0.0.1:{port}/hooks"},
        )
    else:
        proof.receiver.script("*", [Behaviour(503, hang_seconds=HANG, accept=False)])
        r = proof.create("cart-expiry:acct-1:hang")
    key = _key(r)

    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == inv.ids
    d = proof.delivery(r["id"])
    expected = "connection" if variant == "connection_refused" else "timeout"
    assert d["state"] == "retryable" and d["attempts"] == 1 and _outcomes(d) == [expected]

    proof.past_next_attempt(r["id"])
    proof.webhook.reappear(inv.messages)
    if variant == "connection_refused":
        with WebhookReceiver(DEV_WEBHOOK_SECRET, port=port) as late:  # the receiver comes up
            assert proof.webhook.poll() is not None
            snap = late.snapshot()
        assert snap["accepted"] == {key: 1} and snap["posts"] == {key: 1}
    else:
        assert proof.webhook.poll() is not None
        assert proof.accepted(key) == 1 and proof.posts(key) == 2  # 2nd POST: the retry of a timeout
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and _outcomes(d) == [expected, "accepted"]


# 4 -------------------------------------------------------------------------------------------------
def test_04_timeout_after_receiver_accepted_reconciles_by_key_one_accepted_send(proof: Harness) -> None:
    proof.receiver.script("*", [Behaviour(200, hang_seconds=HANG)])  # records, then answers too late
    r = proof.create("renewal-reminder:acct-1:2026-12-20:late-answer")
    key = _key(r)

    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == inv.ids
    d = proof.delivery(r["id"])
    assert d["state"] == "retryable" and _outcomes(d) == ["timeout"]
    assert proof.accepted(key) == 1  # the receiver did accept

    proof.past_next_attempt(r["id"])
    proof.webhook.reappear(inv.messages)
    again = proof.webhook.poll()
    assert again is not None and again.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and _outcomes(d) == ["timeout", "reconciled_conflict"]
    assert d["history"][-1]["status"] == 409
    # One accepted send; the 2nd POST is explained by the ambiguous timeout and answered 409.
    assert proof.accepted(key) == 1 and proof.posts(key) == 2


# 5 -------------------------------------------------------------------------------------------------
def test_05_crash_after_provider_accepted_before_ledger_write_resends_same_key_once_accepted(
    proof: Harness,
) -> None:
    proof.faults.crash_after("sender.send")
    r = proof.create("renewal-reminder:acct-1:2026-12-20:crash-after-send")
    key = _key(r)

    inv = proof.webhook.poll()
    assert inv is not None and inv.crashed  # nothing deleted, nothing reported
    assert proof.accepted(key) == 1
    d = proof.delivery(r["id"])
    assert d["state"] == "sending" and d["history"] == []  # the ledger never heard of the send

    proof.past_lease()
    proof.webhook.reappear(inv.messages)
    again = proof.webhook.poll()
    assert again is not None and again.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and _outcomes(d) == ["reconciled_conflict"]
    # Same idempotency key on the retry: the receiver counted both POSTs under one webhook-id.
    assert proof.posts(key) == 2 and proof.accepted(key) == 1
    assert proof.telemetry.counts["lease_expired"] == 1


def test_05b_crash_after_ses_accepted_is_the_counted_email_residual_same_message_id(
    proof: Harness,
) -> None:
    """SES honours no idempotency key: the narrow window (accepted, worker died before recording)
    resends with the same Message-ID and delivery_key tag. This is the documented residual."""
    proof.faults.crash_after("sender.send")
    r = proof.create("renewal-reminder:acct-1:2026-12-20:email-crash", webhook=False, email=True)
    key = _key(r, "email-0")
    inv = proof.email.poll()
    assert inv is not None and inv.crashed
    proof.past_lease()
    proof.email.reappear(inv.messages)
    assert proof.email.poll() is not None
    assert proof.delivery(r["id"], "email-0")["state"] == "delivered"
    sent = _emails_for(key)
    assert len(sent) == 2  # residual exposure, counted (see the fault run's report)
    ids = {email.message_from_string(m.raw_data)["Message-ID"] for m in sent}
    assert ids == {f"<{key}@example.com>"}


# 6 -------------------------------------------------------------------------------------------------
def test_06_crash_after_ledger_write_before_sqs_ack_redelivery_is_suppressed(proof: Harness) -> None:
    proof.faults.crash_after(
        "store.save_delivery", when=lambda args, ok: ok is True and args[1].state == "delivered", times=2
    )
    r = proof.create("renewal-reminder:acct-1:2026-12-20:crash-before-ack", webhook=True, email=True)
    for esm in (proof.webhook, proof.email):
        inv = esm.poll()
        assert inv is not None and inv.crashed
        esm.reappear(inv.messages)  # the message is redelivered
        again = esm.poll()
        assert again is not None and again.failures == []
        assert esm.depth() == 0
    assert {d["state"] for d in proof.get(r["id"])["deliveries"]} == {"delivered"}
    key = _key(r)
    assert proof.accepted(key) == 1 and proof.posts(key) == 1
    assert len(_emails_for(_key(r, "email-0"))) == 1
    assert proof.telemetry.by_reason[("duplicate_suppressed", "delivered")] == 2


# 7 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("interleaving", ["second_arrives_while_first_sends", "second_claims_first"])
def test_07_two_consumers_racing_for_one_delivery_send_once(proof: Harness, interleaving: str) -> None:
    r = proof.create(f"renewal-reminder:acct-1:2026-12-20:race-{interleaving}")
    key = _key(r)
    copy_a = proof.webhook.receive()
    proof.webhook.reappear(copy_a)
    copy_b = proof.webhook.receive()  # the same message in a second batch, for a second consumer
    assert [m["MessageId"] for m in copy_a] == [m["MessageId"] for m in copy_b]
    w1, w2 = proof.deliverer("worker-1"), proof.deliverer("worker-2")
    seen: dict[str, Any] = {}

    def run_second() -> None:
        proof.use(w2)
        seen["b"] = proof.webhook.invoke(copy_b)
        proof.use(w1)

    point = "sender.send" if interleaving == "second_arrives_while_first_sends" else "store.claim"
    proof.faults.rules.clear()
    _hook_before(proof, point, run_second)
    proof.use(w1)
    inv_a = proof.webhook.invoke(copy_a)
    inv_b = seen["b"]
    assert not inv_a.crashed and not inv_b.crashed
    if interleaving == "second_arrives_while_first_sends":
        # B found a live lease: it is not dropped, it comes back after the lease's remainder.
        assert inv_a.failures == [] and inv_b.failures == inv_b.ids
        [(_, receipt, seconds)] = proof.visibility_changes()
        assert receipt == copy_b[0]["ReceiptHandle"]
        assert 0 < seconds <= proof._base.policy.lease_seconds + 1
        assert proof.telemetry.counts["lease_busy"] == 1
    else:
        # B claimed first and delivered; A lost the conditional claim and suppressed its copy.
        assert inv_a.failures == [] and inv_b.failures == []
        assert proof.telemetry.by_reason[("duplicate_suppressed", "delivered")] == 1
    # Whatever copy is left comes back and is suppressed.
    proof.webhook.reappear(copy_b)
    while (inv := proof.webhook.poll()) is not None:
        assert inv.failures == []
    assert proof.delivery(r["id"])["state"] == "delivered"
    assert proof.accepted(key) == 1 and proof.posts(key) == 1


def _hook_before(proof: Harness, point: str, fn: Any) -> None:
    """Run ``fn`` once, the first time ``point`` is reached (an interleaving, not a crash)."""
    done: list[bool] = []

    def when(args: tuple[Any, ...], result: Any) -> bool:
        if not done:
            done.append(True)
            fn()
        return False

    proof.faults.crash_before(point, when=when)


# 8 -------------------------------------------------------------------------------------------------
def test_08_redelivery_long_after_first_commit_is_a_counted_noop(proof: Harness) -> None:
    r = proof.create("renewal-reminder:acct-1:2026-12-20:late-redelivery", webhook=True, email=True)
    bodies = []
    for esm in (proof.webhook, proof.email):
        msgs = esm.receive()
        bodies.append((esm, msgs[0]["Body"]))
        assert esm.invoke(msgs).failures == []
    proof.clock.advance(3 * 24 * 3600)  # three days later the same message shows up again
    for esm, body in bodies:
        proof.sqs.send_message(QueueUrl=esm.url, MessageBody=body)
        inv = esm.poll()
        assert inv is not None and inv.failures == []
        assert esm.depth() == 0
    assert proof.telemetry.by_reason[("duplicate_suppressed", "delivered")] == 2
    assert proof.posts(_key(r)) == 1 and len(_emails_for(_key(r, "email-0"))) == 1
    assert {d["state"] for d in proof.get(r["id"])["deliveries"]} == {"delivered"}


# 9 -------------------------------------------------------------------------------------------------
def test_09_cancel_after_enqueue_before_consume_sends_nothing(proof: Harness) -> None:
    r = proof.create("cart-expiry:acct-1:cart-42", webhook=True, email=True)
    status, canceled = call_api("DELETE", f"/reminders/{r['id']}")
    assert status == 200 and {d["state"] for d in canceled["deliveries"]} == {"canceled"}
    for esm in (proof.webhook, proof.email):
        inv = esm.poll()
        assert inv is not None and inv.failures == []  # acknowledged without sending
        assert esm.depth() == 0
    assert proof.telemetry.by_reason[("stale_skipped", "canceled")] == 2
    assert proof.posts(_key(r)) == 0 and _emails_for(_key(r, "email-0")) == []
    status, body = call_api("DELETE", f"/reminders/{r['id']}")
    assert status == 409 and body["error"] == "conflict"


# 10 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("new_due", ["inside_the_window", "beyond_the_window"])
def test_10_due_time_changed_while_old_message_waits_old_is_stale_new_delivers(
    proof: Harness, new_due: str
) -> None:
    r = proof.create(f"renewal-reminder:acct-1:2026-12-20:moved-{new_due}", webhook=True, email=True)
    if new_due == "inside_the_window":
        due = datetime.now(UTC) - timedelta(seconds=5)  # moved, still due: a new message at once
    else:
        due = datetime.now(UTC) + timedelta(minutes=20)  # beyond 900 s: waits in the due index
    status, moved = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": due.isoformat()})
    assert status == 200 and moved["version"] == 2

    if new_due == "beyond_the_window":
        for esm in (proof.webhook, proof.email):
            inv = esm.poll()  # the old version-1 message
            assert inv is not None and inv.failures == [] and esm.depth() == 0
        assert proof.telemetry.by_reason[("stale_skipped", "stale_version")] == 2
        assert proof.posts(_key(r)) == 0
        proof.dispatcher()
        proof.clock.current = due + timedelta(seconds=1)
        proof.run_all_shards()  # the new version is handed to SQS when it falls due
    for esm in (proof.webhook, proof.email):
        while (inv := esm.poll()) is not None:
            assert inv.failures == []
    # Each channel's version-1 message is acknowledged unsent: as stale when it is read before the
    # version-2 message delivered, as a duplicate of a delivered delivery when after (the order in
    # which SQS hands back the two messages, and a batch's concurrent records, decide which).
    by_reason = proof.telemetry.by_reason
    assert (
        by_reason[("stale_skipped", "stale_version")] + by_reason[("duplicate_suppressed", "delivered")] == 2
    )
    got = proof.get(r["id"])
    assert got["version"] == 2 and {d["state"] for d in got["deliveries"]} == {"delivered"}
    assert proof.accepted(_key(r)) == 1 and proof.posts(_key(r)) == 1
    assert len(_emails_for(_key(r, "email-0"))) == 1
    sent = json.loads(proof.receiver.state.bodies[_key(r)])
    assert sent["due_at"].startswith(due.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"))


# 11 ------------------------------------------------------------------------------------------------
def test_11_receiver_409_reconciles_as_delivered_never_a_blind_resend(proof: Harness) -> None:
    r = proof.create("renewal-reminder:acct-1:2026-12-20:conflict")
    key = _key(r)
    # The first attempt times out after the receiver accepted it; the retry's 409 confirms that send.
    proof.receiver.script(key, [Behaviour(200, hang_seconds=HANG, accept=True)])
    first = proof.webhook.poll()
    assert first is not None and first.failures == first.ids
    proof.past_next_attempt(r["id"])
    proof.webhook.reappear(first.messages)
    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and _outcomes(d) == ["timeout", "reconciled_conflict"]
    assert d["history"][-1]["status"] == 409 and d["receipt"]
    assert proof.posts(key) == 2 and proof.accepted(key) == 1  # one accepted send, never a blind resend


def test_11b_a_first_attempt_409_is_unconfirmed_and_dead_letters_for_a_person(proof: Harness) -> None:
    r = proof.create("renewal-reminder:acct-1:2026-12-20:conflict-first")
    key = _key(r)
    with proof.receiver.lock:  # the receiver answers 409 although we never sent this key before
        proof.receiver.state.accepted[key] = 1
    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "dead_letter" and d["dead_letter_reason"] == "conflict_unconfirmed"
    assert proof.posts(key) == 1


# 12 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("failure", ["400", "404", "410", "422", "malformed_destination"])
def test_12_permanent_4xx_or_malformed_destination_dead_letters_at_once(proof: Harness, failure: str) -> None:
    both = failure == "malformed_destination"
    r = proof.create(f"cart-expiry:acct-1:perm-{failure}", webhook=True, email=both)
    if both:
        # Valid when created; at send time the host now resolves to a private address, and the
        # stored address is malformed: the guard at send time refuses both.
        for cid, dst in (("webhook-0", "https://10.0.0.7/hooks"), ("email-0", "not-an-email@@example")):
            table().update_item(
                Key={"pk": f"R#{r['id']}", "sk": "R"},
                UpdateExpression="SET dl.#c.dst = :d",
                ExpressionAttributeNames={"#c": cid},
                ExpressionAttributeValues={":d": dst},
            )
        reason, channels = "invalid_destination", [("webhook", "webhook-0"), ("email", "email-0")]
    else:
        proof.receiver.script("*", [Behaviour(int(failure))])
        reason, channels = "permanent_failure", [("webhook", "webhook-0")]
    for channel, cid in channels:
        esm = proof.webhook if channel == "webhook" else proof.email
        inv = esm.poll()
        assert inv is not None and inv.failures == []  # acked at once, no retry
        d = proof.delivery(r["id"], cid)
        assert d["state"] == "dead_letter" and d["dead_letter_reason"] == reason and d["attempts"] == 1
        [dl] = proof.dlq_messages(channel)
        a = attrs_of(dl)
        assert a["reason"] == reason and a["attempts"] == "1" and a["dl_cycle"] == "0"
        assert a["delivery_key"] == d["key"]
        if not both:
            assert a["last_status"] == failure
        assert esm.depth() == 0
    assert proof.visibility_changes() == []
    assert proof.posts(_key(r)) == (0 if both else 1)
    assert sent_emails() == []


# 13 ------------------------------------------------------------------------------------------------
def test_13_attempt_budget_exhausted_on_repeated_5xx_dead_letters_with_reason(proof: Harness) -> None:
    budget = proof._base.policy.max_attempts
    statuses = [500, 502, 503, 504]
    proof.receiver.script("*", [Behaviour(statuses[i % len(statuses)]) for i in range(budget)])
    r = proof.create("renewal-reminder:acct-1:2026-12-20:flaky")
    key = _key(r)
    for attempt in range(1, budget + 1):
        inv = proof.webhook.poll()
        assert inv is not None
        d = proof.delivery(r["id"])
        assert d["attempts"] == attempt
        if attempt < budget:
            assert inv.failures == inv.ids and d["state"] == "retryable"
            proof.past_next_attempt(r["id"])
            proof.webhook.reappear(inv.messages)
        else:
            assert inv.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "dead_letter" and d["dead_letter_reason"] == "attempts_exhausted"
    assert d["attempts"] == budget and d["last_error"]["class"] == "transient"
    decisions = [h["decision"] for h in d["history"] if h["event"] == "attempt"]
    assert decisions == ["retry"] * (budget - 1) + ["dead_letter"]
    [dl] = proof.dlq_messages()
    a = attrs_of(dl)
    assert a["reason"] == "attempts_exhausted" and a["attempts"] == str(budget)
    assert a["last_error"] == "transient" and a["last_status"].startswith("50")
    assert proof.posts(key) == budget and proof.accepted(key) == 0
    assert len(proof.visibility_changes()) == budget - 1


# 14 ------------------------------------------------------------------------------------------------
def _copy_to_source(proof: Harness, message: dict[str, Any], channel: str = "webhook") -> None:
    """A stale copy of a dead letter sent to the source queue again (same body and attributes)."""
    proof.sqs.send_message(
        QueueUrl=proof.env[f"{channel.upper()}_QUEUE_URL"],
        MessageBody=message["Body"],
        MessageAttributes={
            k: {"DataType": v["DataType"], "StringValue": v["StringValue"]}
            for k, v in message["MessageAttributes"].items()
        },
    )


def test_14_dlq_redrive_after_fix_delivers_once_records_redrive_and_redrive_of_delivered_is_noop(
    proof: Harness,
) -> None:
    """The product's choice: the consumer itself sends a dead letter to the channel DLQ (with
    reason/attempts/dl_cycle/delivery_key) and acks; operators redrive with ``reminders dlq
    redrive`` (receive -> send with the same body and attributes -> delete) or the console's
    "redrive to a custom destination" (the source queue). Both move the message as tested here."""
    from reminders_ops.cli import dlq

    proof.receiver.script("*", [Behaviour(410)])
    r = proof.create("renewal-reminder:acct-1:2026-12-20:redrive")
    key = _key(r)
    assert proof.webhook.poll() is not None
    assert proof.delivery(r["id"])["state"] == "dead_letter"
    [dead] = dlq.peek(proof.sqs, proof.env["WEBHOOK_DLQ_URL"])  # listed, not consumed
    assert dead.reason == "permanent_failure" and dead.delivery_key == key and dead.cycle == 0

    # The cause is fixed (the receiver accepts again); the operator redrives the DLQ.
    report = dlq.redrive(
        proof.sqs, proof.env["WEBHOOK_DLQ_URL"], proof.env["WEBHOOK_QUEUE_URL"], max_messages=10
    )
    assert [m["delivery_key"] for m in report.moved] == [key] and report.recurred is None
    assert proof.dlq_messages() == []
    moved = proof.webhook.receive()
    assert moved[0]["Body"] == dead.body and attrs_of(moved[0]) == dead.attributes  # shape preserved
    assert proof.webhook.invoke(moved).failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and d["cycle"] == 1 and d["attempts"] == 1
    events = [h["event"] for h in d["history"]]
    assert events == ["attempt", "redrive", "attempt"]
    assert next(h for h in d["history"] if h["event"] == "redrive")["detail"] == "permanent_failure"
    assert proof.telemetry.by_reason[("redriven", "permanent_failure")] == 1
    assert proof.accepted(key) == 1 and proof.posts(key) == 2

    # Redriving the same dead letter again (a stale copy) is a no-op: nothing is sent.
    _copy_to_source(proof, moved[0])
    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == []
    assert proof.delivery(r["id"])["cycle"] == 1
    assert proof.posts(key) == 2 and proof.webhook.depth() == 0
    assert proof.dlq_messages() == []


def test_14b_dlq_redrive_by_start_message_move_task_targets_the_source_queue(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """AWS path (moto does not implement StartMessageMoveTask): ``reminders dlq redrive
    --use-move-task`` asks SQS to move the DLQ back to its source queue, rate-limited."""
    import argparse

    import boto3
    from botocore.stub import Stubber
    from reminders_ops.cli import dlq
    from reminders_ops.stackrefs import StackTarget

    base = "https://sqs.us-east-1.amazonaws.com/111111111111/"
    arn = "arn:aws:sqs:us-east-1:111111111111:"
    client = boto3.client("sqs", region_name="us-east-1")
    stub = Stubber(client)
    for name in ("RemindersStack-WebhookDLQ", "RemindersStack-WebhookQueue"):
        stub.add_response(
            "get_queue_attributes",
            {"Attributes": {"QueueArn": arn + name}},
            {"QueueUrl": base + name, "AttributeNames": ["QueueArn"]},
        )
    stub.add_response(
        "start_message_move_task",
        {"TaskHandle": "task-1"},
        {
            "SourceArn": arn + "RemindersStack-WebhookDLQ",
            "DestinationArn": arn + "RemindersStack-WebhookQueue",
            "MaxNumberOfMessagesPerSecond": 5,
        },
    )
    monkeypatch.setattr(StackTarget, "client", lambda self, service: client)
    parser = argparse.ArgumentParser()
    dlq.add_arguments(parser)
    args = parser.parse_args(
        [
            "redrive",
            "--queue-url",
            base + "RemindersStack-WebhookDLQ",
            "--to",
            base + "RemindersStack-WebhookQueue",
            "--use-move-task",
            "--rate",
            "5",
            "--json",
        ]
    )
    with stub:
        assert dlq.run(args) == 0
        stub.assert_no_pending_responses()
    out = json.loads(capsys.readouterr().out)
    assert out["task_handle"] == "task-1"
    assert out["DestinationArn"].endswith("RemindersStack-WebhookQueue")


# 15 ------------------------------------------------------------------------------------------------
def test_15_crashed_workers_lease_expires_reclaimed_and_counted_as_lease_expiry(proof: Harness) -> None:
    proof.faults.crash_after("store.claim", when=lambda args, res: res.claimed)
    r = proof.create("renewal-reminder:acct-1:2026-12-20:lease")
    key = _key(r)
    inv = proof.webhook.poll()
    assert inv is not None and inv.crashed
    assert proof.delivery(r["id"])["state"] == "sending"

    # Redelivered while the dead worker's lease is live: judged again later, not dropped, not sent.
    proof.webhook.reappear(inv.messages)
    busy = proof.webhook.poll()
    assert busy is not None and busy.failures == busy.ids
    [(_, _, seconds)] = proof.visibility_changes()
    assert 0 < seconds <= proof._base.policy.lease_seconds + 1
    assert proof.posts(key) == 0

    proof.past_lease()
    proof.webhook.reappear(busy.messages)
    done = proof.webhook.poll()
    assert done is not None and done.failures == []
    assert proof.telemetry.counts["lease_expired"] == 1
    assert proof.delivery(r["id"])["state"] == "delivered"
    assert proof.accepted(key) == 1 and proof.posts(key) == 1


# 16 ------------------------------------------------------------------------------------------------
def test_16_poison_message_isolated_by_partial_batch_failure_reaches_dlq_rest_delivered(
    proof: Harness,
) -> None:
    max_receive = 3
    dlq_arn = proof.sqs.get_queue_attributes(
        QueueUrl=proof.env["WEBHOOK_DLQ_URL"], AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    proof.sqs.set_queue_attributes(
        QueueUrl=proof.webhook.url,
        Attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive)})
        },
    )
    good = [proof.create(f"renewal-reminder:acct-1:2026-12-20:ok-{i}") for i in range(2)]
    poison_body = '{"reminder_id": "rem_x", "channel_id": '  # unparseable
    poison_id = proof.sqs.send_message(QueueUrl=proof.webhook.url, MessageBody=poison_body)["MessageId"]

    batch = proof.webhook.receive()
    assert len(batch) == 3
    inv = proof.webhook.invoke(batch)
    assert inv.failures == [poison_id]  # only the poison fails; the rest of its batch is delivered
    for g in good:
        assert proof.delivery(g["id"])["state"] == "delivered"
        assert proof.accepted(_key(g)) == 1

    receives = 1
    while True:
        proof.webhook.reappear(inv.messages)
        msgs = proof.webhook.receive()
        if not msgs:
            break
        receives += 1
        inv = proof.webhook.invoke(msgs)
        assert inv.failures == [poison_id]
    assert receives == max_receive  # moved on the receive after maxReceiveCount
    [dl] = proof.dlq_messages()
    assert dl["MessageId"] == poison_id and dl["Body"] == poison_body
    assert proof.webhook.depth() == 0
    assert sum(proof.receiver.snapshot()["accepted"].values()) == 2


# 17 ------------------------------------------------------------------------------------------------
def test_17_dispatcher_paused_an_hour_catches_up_every_eligible_reminder_none_twice(
    proof: Harness,
) -> None:
    proof.dispatcher()
    start = proof.clock.now()
    proof.run_all_shards()  # the rule's last run before the pause
    assert proof.faults.called("dqueues.send") == []

    # Reminders beyond the window: 20..72 minutes ahead (eligible after the hour), 90+ (not yet).
    ahead = [20, 25, 31, 38, 44, 50, 55, 59, 61, 66, 70, 72]
    later = [90, 120, 24 * 60]
    created: dict[str, int] = {}
    for i, minutes in enumerate(ahead + later):
        r = proof.create(
            f"renewal-reminder:acct-{i}:2026-12-20",
            account=f"acct-{i}",
            webhook=True,
            email=i % 2 == 0,
            due_in=(start - datetime.now(UTC)).total_seconds() + minutes * 60,
        )
        assert {d["state"] for d in r["deliveries"]} == {"scheduled"}
        created[r["id"]] = minutes
    assert proof.webhook.depth() == 0 and proof.email.depth() == 0

    proof.clock.advance(3600)  # the rule was paused for an hour
    proof.run_all_shards()
    sends = [m for c in proof.faults.called("dqueues.send") for m in c.args[1]]
    published = [(m.reminder_id, m.channel_id) for m in sends]
    assert len(published) == len(set(published)), "a reminder was enqueued twice"
    horizon_min = 60 + (900 - 120) / 60
    eligible = {rid for rid, m in created.items() if m <= horizon_min}
    assert {rid for rid, _ in published} == eligible
    for rid, cid in published:
        expected = max(0, created[rid] * 60 - 3600)
        [msg] = [m for m in sends if (m.reminder_id, m.channel_id) == (rid, cid)]
        assert abs(msg.delay_seconds - expected) <= 2  # the exact remaining delay, never early
    queued = proof.webhook.depth() + proof.email.depth()
    assert queued == len(published)

    # The next runs (a minute later, and once the watchdog's lag has passed for the catch-up's
    # due times but not since it handed them over): nothing new, none twice.
    for step in (60, 5 * 60):
        proof.clock.advance(step)
        proof.run_all_shards()
        assert len([m for c in proof.faults.called("dqueues.send") for m in c.args[1]]) == len(published)


# 18 ------------------------------------------------------------------------------------------------
def test_18_renewal_dup_002_lost_ack_one_customer_notification(proof: Harness) -> None:
    """RENEWAL-DUP-002: the renewal reminder's send completed, its SQS acknowledgement was lost, the
    same message arrived again: the customer is notified once per channel."""
    r = proof.create(
        "renewal-reminder:acct-7:2026-12-20", account="acct-7", kind="renewal", webhook=True, email=True
    )
    for esm in (proof.webhook, proof.email):
        inv = esm.poll(lose_ack=True)  # handler succeeded; DeleteMessage never happened
        assert inv is not None and inv.failures == [] and not inv.crashed
        esm.reappear(inv.messages)
        again = esm.poll()
        assert again is not None and again.ids == inv.ids and again.failures == []
        assert esm.depth() == 0
    assert {d["state"] for d in proof.get(r["id"])["deliveries"]} == {"delivered"}
    assert proof.accepted(_key(r)) == 1 and proof.posts(_key(r)) == 1
    assert len(_emails_for(_key(r, "email-0"))) == 1
    assert proof.telemetry.by_reason[("duplicate_suppressed", "delivered")] == 2
