"""Matrix additions of issue 18 (support desk), against the real handlers on moto with two real
local receivers (the wrong destination and the corrected one):

- corrected destination while queued: the new destination is used, the old message is a no-op;
- patch while sending: 409, then allowed once the attempt is recorded;
- DLQ redrive after a corrected destination delivers to the new one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders_ops.local.receiver import Behaviour, WebhookReceiver

from tests.proof.harness import Harness
from tests.support.lambda_runtime import call_api

pytestmark = pytest.mark.usefixtures("no_sleep")


@pytest.fixture
def corrected() -> Iterator[WebhookReceiver]:
    """The receiver at the corrected destination."""
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as r:
        yield r


def _key(reminder: dict[str, Any]) -> str:
    return str(reminder["deliveries"][0]["key"])


def _patch_destination(rid: str, url: str) -> tuple[int, Any]:
    return call_api("PATCH", f"/reminders/{rid}", {"channels": {"webhook-0": {"url": url + "/hooks"}}})


def test_corrected_destination_while_queued_new_destination_used_old_message_no_op(
    proof: Harness, corrected: WebhookReceiver
) -> None:
    r = proof.create("support:acct-1:corrected-while-queued")
    key = _key(r)
    status, out = _patch_destination(r["id"], corrected.url)
    assert status == 200 and out["version"] == 2
    while (inv := proof.webhook.poll()) is not None:
        assert inv.failures == []
    assert proof.telemetry.by_reason[("stale_skipped", "stale_version")] == 1  # the version-1 message
    assert proof.posts(key) == 0  # the wrong destination never saw it
    assert corrected.snapshot()["accepted"].get(key) == 1
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and d["history"][0]["event"] == "correct"


def test_patch_while_sending_is_409_then_allowed(proof: Harness, corrected: WebhookReceiver) -> None:
    proof.receiver.script("*", [Behaviour(429)])
    r = proof.create("support:acct-1:patch-while-sending")
    answers: list[tuple[int, Any]] = []
    webhook_sender = proof._base.senders["webhook"]  # the real WebhookSender behind the spy
    original = webhook_sender.send

    def send_and_patch(*args: Any, **kwargs: Any) -> Any:
        answers.append(_patch_destination(r["id"], corrected.url))
        return original(*args, **kwargs)

    proof.monkeypatch.setattr(webhook_sender, "send", send_and_patch)  # the attempt in flight
    inv = proof.webhook.poll()
    proof.monkeypatch.setattr(webhook_sender, "send", original)
    assert inv is not None
    [(status, err)] = answers
    assert status == 409 and err["error"] == "conflict" and "sending" in err["message"]
    assert proof.delivery(r["id"])["state"] == "retryable"  # the 429 was recorded under version 1
    status, out = _patch_destination(r["id"], corrected.url)
    assert status == 200 and out["version"] == 2
    while (inv := proof.webhook.poll()) is not None:
        proof.past_next_attempt(r["id"])
    assert corrected.snapshot()["accepted"].get(_key(r)) == 1
    assert proof.accepted(_key(r)) == 0


def test_redrive_after_corrected_destination_delivers_to_the_new_one(
    proof: Harness, corrected: WebhookReceiver
) -> None:
    from reminders_ops.cli import dlq

    proof.receiver.script("*", [Behaviour(410)])  # the wrong receiver: gone
    r = proof.create("support:acct-1:redrive-corrected")
    key = _key(r)
    assert proof.webhook.poll() is not None
    assert proof.delivery(r["id"])["state"] == "dead_letter"
    status, out = _patch_destination(r["id"], corrected.url)
    assert status == 200 and out["deliveries"][0]["state"] == "dead_letter"
    report = dlq.redrive(
        proof.sqs, proof.env["WEBHOOK_DLQ_URL"], proof.env["WEBHOOK_QUEUE_URL"], max_messages=10
    )
    assert [m["delivery_key"] for m in report.moved] == [key]
    while (inv := proof.webhook.poll()) is not None:
        assert inv.failures == []
    d = proof.delivery(r["id"])
    assert d["state"] == "delivered" and d["cycle"] == 1
    assert corrected.snapshot()["accepted"].get(key) == 1
    assert proof.posts(key) == 1  # the wrong receiver saw only the first, refused attempt
