"""Review 31: the receiver helper against a hostile sender or a replayer (headers it did not sign,
malformed signature headers, a rotation's expired secret on a receipt)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from reminders_client import InvalidSignature, Receiver
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

OLD = "whsec_" + "A" * 32
NEW = "whsec_" + "B" * 32
BODY = json.dumps({"type": "reminder.due", "id": "rem_" + "c" * 32, "data": {}})
KEY = "dlv_" + "d" * 32


def signed(secret: str = NEW, body: str = BODY) -> dict[str, str]:
    at = datetime.now(UTC)
    return {
        "webhook-id": KEY,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(KEY, at, body),
        "idempotency-key": KEY,
    }


@pytest.mark.parametrize(
    "signature",
    ["garbage", "v1,not base64!", "v1,a,b", "v1"],
    ids=["no-comma", "not-base64", "two-commas", "version-only"],
)
def test_webhook_is_refused_as_invalid_signature_when_its_signature_header_is_malformed(
    signature: str,
) -> None:
    """A malformed ``webhook-signature`` is a bad signature (401), never another exception that
    crashes the receiver (the README's receiver answers nothing then)."""
    with pytest.raises(InvalidSignature):
        Receiver([NEW]).verify(BODY, {**signed(), "webhook-signature": signature})


def test_webhook_is_refused_as_invalid_signature_when_its_body_is_not_utf8() -> None:
    with pytest.raises(InvalidSignature):
        Receiver([NEW]).verify(b"\xff\xfe" + BODY.encode(), signed())


def test_webhook_is_refused_as_invalid_signature_when_its_timestamp_is_not_an_integer() -> None:
    """The library reads the timestamp as a float and signs its floor: ``<ts>.9`` verifies with the
    signature of ``<ts>``. It is not the header the sender signed: refused, not a crash."""
    h = signed()
    with pytest.raises(InvalidSignature):
        Receiver([NEW]).verify(BODY, {**h, "webhook-timestamp": h["webhook-timestamp"] + ".9"})


def test_idempotency_key_is_the_signed_webhook_id_when_a_replay_changes_the_header() -> None:
    """``idempotency-key`` is not signed: a replay within the tolerance with another value must not
    give the receiver a second key to deduplicate on."""
    got = Receiver([NEW]).verify(BODY, {**signed(), "idempotency-key": "dlv_" + "e" * 32})
    assert got.idempotency_key == got.webhook_id == KEY


@pytest.mark.parametrize(
    "value",
    [
        "00-" + "0" * 32 + "-" + "1" * 16 + "-01",  # all-zero trace id: invalid in W3C
        "00-" + "a" * 32 + "-" + "0" * 16 + "-01",  # all-zero parent id
        "garbage; drop table",
        "00-" + "a" * 32 + "-" + "b" * 16 + "-01" + "x" * 5000,
        "ff-" + "a" * 32 + "-" + "b" * 16 + "-01",  # version ff is invalid
    ],
    ids=["zero-trace", "zero-parent", "not-w3c", "oversized", "version-ff"],
)
def test_traceparent_is_none_when_the_unsigned_header_is_not_w3c(value: str) -> None:
    """The traceparent is not signed: the helper hands on only a well-formed W3C value."""
    got = Receiver([NEW]).verify(BODY, {**signed(), "traceparent": value})
    assert got.traceparent is None


def test_traceparent_is_handed_on_when_well_formed() -> None:
    value = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    assert Receiver([NEW]).verify(BODY, {**signed(), "traceparent": value}).traceparent == value


@pytest.fixture
def api_knowing_only_new() -> Iterator[str]:
    """A receipt endpoint (real HTTP on 127.0.0.1) that verifies with the new secret only: the
    old one of the overlap has expired."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            try:
                Webhook(NEW).verify(body, dict(self.headers.items()))
                status = 202
            except WebhookVerificationError:
                status = 401
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_receipt_is_accepted_when_the_first_secret_of_the_receiver_has_expired(
    api_knowing_only_new: str,
) -> None:
    """``Receiver([old, new])`` (the order a rotation leaves them in) signs its receipt with every
    secret, as the sender signs webhooks: the API verifies with whichever still signs."""
    receiver = Receiver([OLD, NEW], api_url=api_knowing_only_new)
    delivery = receiver.verify(BODY, signed(NEW))
    assert receiver.receipt(delivery, "processed") == 202
