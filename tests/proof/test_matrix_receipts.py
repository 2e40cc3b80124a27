"""Failure matrix, receiver receipts and unsubscribe (issue 19; MISSION §5 and §8), through the
real handlers on moto: ``POST /inbound/receiver`` (the API function), the conditional put by event
id, the table's real stream (moto's DynamoDB Streams, read by the local runtime's stream mapping
with the template's filter) and ReceiptsFunction.

Cases: stale receipt after a newer one; duplicate receipts; receipt for an unknown delivery;
forged (bad signature), unsigned, stale-timestamp and replayed receipts (an unknown delivery answers
as a bad signature does: issue 24); an oversized receipt;
unsubscribe replay. Bad input is refused with its 4xx and nothing is written, never a 5xx.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.domain.receipts import decode
from reminders.handlers.delivery import webhook_handler
from reminders.handlers.receipts import handler as receipts_handler
from reminders_ops.local.streams import DynamoStreamMapping
from standardwebhooks.webhooks import Webhook

from tests.conftest import NO_STREAMS
from tests.support.lambda_runtime import FakeContext, call_api, http_event, invoke_batch, receive
from tests.support.streams import table_stream

pytestmark = pytest.mark.moto_only(NO_STREAMS)

#: The ReceiptsFunction mapping's filter, as infra/receipts.py writes it.
FILTER = {"eventName": ["INSERT"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "RCPT#"}]}}}}


class _Fn:
    name = "ReceiptsFunction"

    def invoke(self, event: dict[str, Any]) -> Any:
        return receipts_handler(event, FakeContext("receipts"))


@pytest.fixture
def stream(aws: dict[str, str]) -> DynamoStreamMapping:
    # NEW_IMAGE is all ReceiptsFunction reads (the stack's view has both images, for issue 16's events).
    return table_stream(
        aws["TABLE_NAME"], _Fn(), view="NEW_IMAGE", filters=(FILTER,), logical_id="ReceiptsMapping"
    )


def _delivered(aws: dict[str, str], receiver: Any, key: str = "renewal:acct-r:1") -> tuple[str, str]:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": key,
            "account_id": "acct-r",
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "webhook", "url": receiver.url + "/hooks"}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201
    sqs = boto3.client("sqs")
    invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], receive(sqs, aws["WEBHOOK_QUEUE_URL"]))
    _, got = call_api("GET", f"/reminders/{body['id']}")
    assert got["deliveries"][0]["state"] == "delivered"
    return body["id"], got["deliveries"][0]["key"]


def _body(rid: str, key: str, event_id: str, status: str, at: datetime, **extra: Any) -> bytes:
    doc = {
        "webhook_id": key,
        "reminder_id": rid,
        "status": status,
        "event_time": at.isoformat(),
        "event_id": event_id,
    }
    return json.dumps({**doc, **extra}).encode()


def _receiver_secret(body: bytes) -> str:
    """The secret the receiver of the delivery the body names holds: its endpoint's (a bare URL's:
    its account's implicit endpoint, issue 24); the development secret when there is none."""
    from reminders.domain.endpoints import implicit_endpoint_id, is_endpoint_id

    doc = json.loads(body)
    reminder = runtime.store().get(str(doc.get("reminder_id")))
    d = (
        next((d for d in reminder.deliveries.values() if d.key == doc.get("webhook_id")), None)
        if reminder
        else None
    )
    if reminder is None or d is None:
        return DEV_WEBHOOK_SECRET
    eid = (
        d.destination
        if is_endpoint_id(d.destination)
        else implicit_endpoint_id(reminder.account_id, d.destination)
    )
    endpoint = runtime.endpoint_store().get(eid)
    return endpoint.signing_secrets(datetime.now(UTC))[0] if endpoint else DEV_WEBHOOK_SECRET


def _post(
    body: bytes,
    *,
    secret: str | None = None,
    signed_at: datetime | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """POST a receipt signed with ``secret`` (default: the one its receiver holds)."""
    from reminders.adapters.secrets import signing_key

    secret = secret if secret is not None else _receiver_secret(body)
    at = signed_at or datetime.now(UTC)
    msg_id = "msg_" + str(abs(hash(body)))
    sig = Webhook(signing_key(secret)).sign(msg_id, at, body.decode())
    h = {"webhook-id": msg_id, "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": sig}
    if headers is not None:
        h = headers
    event = http_event("POST", "/inbound/receiver", raw=body.decode())
    event["headers"].update(h)
    from reminders.handlers.api import handler

    resp = handler(event, FakeContext("api"))
    return resp["statusCode"], json.loads(resp["body"]) if resp.get("body") else None


def _receipt_items(aws: dict[str, str]) -> list[dict[str, Any]]:
    items = boto3.client("dynamodb").scan(TableName=aws["TABLE_NAME"])["Items"]
    return [i for i in items if i["pk"]["S"].startswith("RCPT#")]


def _standing(rid: str) -> Any:
    r = runtime.store().get(rid)
    assert r is not None
    return r.deliveries["webhook-0"]


T = datetime.now(UTC) - timedelta(minutes=1)


def test_stale_receipt_after_a_newer_one_does_not_regress_a_delivered_delivery(
    aws: dict[str, str], receiver: Any, stream: DynamoStreamMapping
) -> None:
    rid, key = _delivered(aws, receiver)
    assert _post(_body(rid, key, "evt-new", "processed", T)) == (202, {"status": "accepted"})
    stream.poll_once()
    # the receiver's older failure arrives late
    assert _post(_body(rid, key, "evt-old", "rejected", T - timedelta(seconds=30), reason="schema"))[0] == 202
    stream.poll_once()
    d = _standing(rid)
    assert d.state.value == "delivered"
    standing = decode(d.receiver_receipt)
    assert standing is not None and (standing.event_id, standing.status.value) == ("evt-new", "processed")
    assert [a.decision for a in d.history if a.event == "receipt"] == ["noted", "stale"]
    assert stream.stats.filtered_out >= 1  # the reminder rows' own stream records are not receipts


def test_duplicate_receipts_are_stored_and_merged_once(
    aws: dict[str, str], receiver: Any, stream: DynamoStreamMapping
) -> None:
    rid, key = _delivered(aws, receiver)
    body = _body(rid, key, "evt-1", "processed", T)
    assert _post(body)[0] == 202
    status, err = _post(body)  # the receiver retries (or an attacker replays): already received
    assert status == 409 and err["error"] == "already_received"
    stream.poll_once()
    stream.poll_once()
    assert len(_receipt_items(aws)) == 1
    assert sum(1 for a in _standing(rid).history if a.event == "receipt") == 1


def test_receipt_for_an_unknown_delivery_is_401_like_a_bad_signature_and_writes_nothing(
    aws: dict[str, str], receiver: Any
) -> None:
    rid, key = _delivered(aws, receiver)
    secret = _receiver_secret(_body(rid, key, "evt-0", "processed", T))  # the right secret, even
    status, err = _post(_body(rid, "dlv_" + "0" * 32, "evt-1", "processed", T), secret=secret)
    assert status == 401 and err["error"] == "unauthorized" and "field" not in err
    status, _ = _post(_body("rem_" + "0" * 32, key, "evt-2", "processed", T), secret=secret)
    assert status == 401  # issue 24 item 3: no answer tells which reminders exist
    assert _receipt_items(aws) == []


@pytest.mark.parametrize("case", ["forged", "unsigned", "stale_timestamp", "garbled_signature"])
def test_forged_unsigned_and_stale_receipts_are_401_and_write_nothing(
    aws: dict[str, str], receiver: Any, case: str
) -> None:
    rid, key = _delivered(aws, receiver)
    body = _body(rid, key, "evt-1", "processed", T)
    if case == "forged":
        out = _post(body, secret="whsec_" + "Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0")
    elif case == "unsigned":
        out = _post(body, headers={})
    elif case == "stale_timestamp":
        out = _post(body, signed_at=datetime.now(UTC) - timedelta(minutes=10))
    else:
        out = _post(
            body,
            headers={"webhook-id": "m", "webhook-timestamp": "1", "webhook-signature": "v1,@@@ nonsense"},
        )
    assert out[0] == 401 and out[1]["error"] == "unauthorized"
    assert _receipt_items(aws) == []
    assert _standing(rid).receiver_receipt is None


def test_a_verified_but_malformed_receipt_is_400_naming_the_field(aws: dict[str, str], receiver: Any) -> None:
    rid, key = _delivered(aws, receiver)
    for body, field in (
        (_body(rid, key, "evt-1", "maybe", T), "status"),
        (_body(rid, key, "evt-1", "processed", T, extra_field=1), "extra_field"),
        (_body(rid, key, "evt 1!", "processed", T), "event_id"),
        (_body(rid, key, "evt-1", "processed", datetime.now(UTC) + timedelta(hours=1)), "event_time"),
    ):
        status, err = _post(body)
        assert (status, err["field"]) == (400, field), err
    assert _receipt_items(aws) == []


def test_an_oversized_receipt_is_413(aws: dict[str, str], receiver: Any) -> None:
    rid, key = _delivered(aws, receiver)
    body = _body(rid, key, "evt-1", "processed", T, reason="x" * (256 * 1024))
    assert _post(body)[0] == 413
    assert _receipt_items(aws) == []


def test_unsubscribe_replay_answers_the_same_and_adds_one_entry(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reminders.domain.models import ChannelType, Delivery, Reminder

    monkeypatch.setenv("UNSUBSCRIBE_SIGNING_SECRET", "matrix-unsubscribe-key")
    runtime.reset()
    d = Delivery("email-0", ChannelType.EMAIL, "reader@example.com", "dlv_" + "1" * 32)
    r = Reminder(
        "rem_" + "1" * 32,
        "acct-r",
        "k",
        "renewal",
        datetime.now(UTC),
        "t",
        1,
        {},
        1,
        datetime.now(UTC),
        "fp",
        {"email-0": d},
    )
    token = runtime.unsubscribe().token(r, d)
    answers = [call_api("POST", f"/unsubscribe/{token}", raw="List-Unsubscribe=One-Click") for _ in range(3)]
    assert answers == [(200, {"status": "unsubscribed"})] * 3
    assert len(runtime.suppressions().list("acct-r")) == 1
