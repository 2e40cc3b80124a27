"""Issue 25 items 1 and 4 against the real handlers on moto and the real local receiver: a correction
after an attempt the receiver may hold is refused (409 ``correction_after_possible_acceptance``)
however many refusals followed it, an explicit ``resend`` sends it again under a new webhook-id,
and a redrive after a correction delivers without waiting for the watchdog."""

from __future__ import annotations

from typing import Any

import pytest
from reminders_ops.local.receiver import Behaviour

from tests.proof.harness import Harness
from tests.support.lambda_runtime import call_api

pytestmark = pytest.mark.usefixtures("no_sleep")
HANG = 4.0  # past the provider timeout (2 s, tests/proof/conftest.py): accepted, answered too late


def _key(reminder: dict[str, Any]) -> str:
    return next(d["key"] for d in reminder["deliveries"] if d["channel_id"] == "webhook-0")


def _outcomes(delivery: dict[str, Any]) -> list[str]:
    return [h["outcome"] for h in delivery["history"] if h["event"] == "attempt"]


def _retry(proof: Harness, rid: str, messages: list[dict[str, Any]]) -> Any:
    proof.past_next_attempt(rid)
    proof.webhook.reappear(messages)
    return proof.webhook.poll()


def test_correction_after_an_ambiguous_attempt_then_a_refusal_is_refused_409(proof: Harness) -> None:
    proof.receiver.script("*", [Behaviour(200, hang_seconds=HANG), Behaviour(429)])
    r = proof.create("renewal-reminder:acct-1:2026-12-20:correct-after-timeout")
    key = _key(r)
    inv = proof.webhook.poll()
    assert inv is not None
    again = _retry(proof, r["id"], inv.messages)
    assert again is not None and _outcomes(proof.delivery(r["id"])) == ["timeout", "throttled"]
    assert proof.accepted(key) == 1  # the receiver holds the first send

    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"data": {"plan": "enterprise"}})
    assert status == 409 and body["error"] == "correction_after_possible_acceptance", body
    assert proof.get(r["id"])["version"] == 1  # nothing written

    # Asked for explicitly: a new delivery generation under a new webhook-id, recorded.
    resend = {"data": {"plan": "enterprise"}, "resend": True}
    status, body = call_api("PATCH", f"/reminders/{r['id']}", resend)
    assert status == 200, body
    (d,) = body["deliveries"]
    assert d["key"] != key and d["resends"] == 1 and d["history"][-1]["event"] == "resend"
    for _ in range(3):  # the new version's message (and the stale retry of the old one)
        proof.past_next_attempt(r["id"])
        proof.webhook.reappear(proof.webhook.receive())
        proof.webhook.poll()
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered"
    assert proof.accepted(key) == 1 and proof.accepted(d["key"]) == 1  # one intentional second send


def test_redrive_after_correction_delivers_without_the_watchdog(proof: Harness) -> None:
    from reminders_ops.cli import dlq

    proof.receiver.script("*", [Behaviour(410)])
    r = proof.create("renewal-reminder:acct-1:2026-12-20:redrive-after-correction")
    key = _key(r)
    assert proof.webhook.poll() is not None
    assert proof.delivery(r["id"])["state"] == "dead_letter"
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"data": {"plan": "enterprise"}})
    assert status == 200 and body["version"] == 2, body

    proof.receiver.script("*", [Behaviour(503)])  # the redriven delivery's first attempt fails
    dlq.redrive(proof.sqs, proof.env["WEBHOOK_DLQ_URL"], proof.env["WEBHOOK_QUEUE_URL"], max_messages=10)
    inv = proof.webhook.poll()
    assert inv is not None and inv.failures == inv.ids  # its own retry, by visibility
    assert proof.delivery(r["id"])["state"] == "retryable"
    again = _retry(proof, r["id"], inv.messages)
    assert again is not None and again.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and d["cycle"] == 1  # seconds later, not at the watchdog
    assert proof.accepted(key) == 1
    assert proof.telemetry.counts.get("stale_skipped", 0) == 0
