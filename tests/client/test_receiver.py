"""The receiver helper: Standard Webhooks verification with every secret of a rotation's overlap,
the headers it reads, and the refusal of what no secret signed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from reminders_client import ABORT, DISABLE, InvalidSignature, Receiver
from standardwebhooks.webhooks import Webhook

OLD = "whsec_" + "A" * 32
NEW = "whsec_" + "B" * 32
BODY = json.dumps({"type": "reminder.due", "id": "rem_" + "c" * 32, "data": {"plan": "pro"}})
KEY = "dlv_" + "d" * 32


def headers(*secrets: str, at: datetime | None = None, traceparent: str | None = None) -> dict[str, str]:
    """Signed as the sender signs: every secret that signs now, space-separated."""
    at = at or datetime.now(UTC)
    h = {
        "webhook-id": KEY,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": " ".join(Webhook(s).sign(KEY, at, BODY) for s in secrets),
        "idempotency-key": KEY,
    }
    if traceparent:
        h["traceparent"] = traceparent
    return h


@pytest.mark.parametrize("receiver_has", [[OLD], [NEW], [NEW, OLD]])
def test_webhook_verifies_with_either_secret_during_a_rotation_overlap(receiver_has: list[str]) -> None:
    tp = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    got = Receiver(receiver_has).verify(BODY, headers(NEW, OLD, traceparent=tp))
    assert (got.webhook_id, got.reminder_id, got.idempotency_key, got.traceparent) == (
        KEY,
        "rem_" + "c" * 32,
        KEY,
        tp,
    )
    assert got.payload["data"] == {"plan": "pro"}


def test_webhook_is_refused_when_no_secret_of_the_endpoint_signed_it() -> None:
    with pytest.raises(InvalidSignature):
        Receiver([OLD]).verify(BODY, headers(NEW))


def test_webhook_is_refused_when_its_body_was_changed() -> None:
    with pytest.raises(InvalidSignature):
        Receiver([OLD]).verify(BODY.replace("pro", "free"), headers(OLD))


def test_webhook_is_refused_when_its_timestamp_is_outside_tolerance() -> None:
    with pytest.raises(InvalidSignature):
        Receiver([OLD]).verify(BODY, headers(OLD, at=datetime.now(UTC) - timedelta(minutes=10)))


def test_steering_headers_are_the_senders_words() -> None:
    from reminders.domain.retry import STEERING_ABORT, STEERING_DISABLE, STEERING_HEADER

    assert ABORT == {STEERING_HEADER: STEERING_ABORT} and DISABLE == {STEERING_HEADER: STEERING_DISABLE}


def test_receiver_is_refused_when_it_has_no_secret() -> None:
    with pytest.raises(ValueError):
        Receiver([])
