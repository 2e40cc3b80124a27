"""Numbers DynamoDB stores but boto3 cannot read back (issue 25 item 13).

Real DynamoDB answers a number as its full digit string (``1e125`` → 126 digits; boto3#2500,
powertools#4845) and boto3's decoder, held to 38 digits, refuses it (``decimal.Rounded``); moto
answers ``1E+125`` and hides it. The API refuses such a number at the door (422 naming the field,
nothing written); a row that holds one anyway (written before the rule, or by hand) is read as the
service answers it, by every reader: GET, the watchdog's batch read, the consumer's claim."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from reminders.handlers.delivery import webhook_handler

from tests.support.aws import table
from tests.support.lambda_runtime import call_api, invoke_batch, receive

TOO_WIDE = {"1e125": 1e125, "1.5e40": 1.5e40, "-9.99e125": -9.99e125}
#: What real DynamoDB answers for each (the full digit expansion, as the service returns it).
AS_ANSWERED = {"1e125": "1" + "0" * 125, "1.5e40": "15" + "0" * 39, "-9.99e125": "-999" + "0" * 123}


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "key": "renewal-reminder:acct-1:2026-12-20:webhook",
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat(),
        "channels": [{"type": "email", "to": "someone@example.com"}],
        "template": {"id": "renewal", "version": 1},
        "data": {"renewal_date": "2026-12-20"},
        **extra,
    }


@pytest.mark.parametrize("name", list(TOO_WIDE))
def test_a_number_boto3_cannot_read_back_is_refused_naming_the_field(aws: dict[str, str], name: str) -> None:
    status, resp = call_api("POST", "/reminders", _body(data={"amount": TOO_WIDE[name]}))
    assert status == 422, resp
    assert "data" in str(resp) and "amount" in str(resp)
    assert table().scan()["Items"] == []


@pytest.mark.parametrize("name", list(AS_ANSWERED))
def test_a_stored_number_boto3_cannot_decode_is_read_by_get_the_watchdog_and_the_consumer(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from reminders import runtime

    monkeypatch.setattr(time, "sleep", lambda *_: None)
    body = _body(data={"amount": 5})
    body["channels"] = [{"type": "webhook", "url": receiver.url + "/hooks"}]
    status, created = call_api("POST", "/reminders", body)
    assert status == 201, created
    rid = created["id"]
    # The row as real DynamoDB answers it (moto stores the string as written and returns it so).
    boto3.client("dynamodb").update_item(
        TableName=table().name,
        Key={"pk": {"S": f"R#{rid}"}, "sk": {"S": "R"}},
        UpdateExpression="SET #d.amount = :n",
        ExpressionAttributeNames={"#d": "data"},
        ExpressionAttributeValues={":n": {"N": AS_ANSWERED[name]}},
    )
    expected = int(AS_ANSWERED[name])  # exactly the value DynamoDB holds
    status, got = call_api("GET", f"/reminders/{rid}")
    assert status == 200, got
    assert got["data"]["amount"] == expected
    store = runtime.store()
    unreadable: list[str] = []
    (read,) = store.batch_get([rid], unreadable=unreadable)  # the watchdog's read
    assert unreadable == [] and read.data["amount"] == expected
    sqs = boto3.client("sqs")
    msgs = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
    assert len(msgs) == 1
    assert invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], msgs)["batchItemFailures"] == []
    status, got = call_api("GET", f"/reminders/{rid}")
    assert got["deliveries"][0]["state"] == "delivered", got
    ((raw, _),) = receiver.state.last_post.values()
    assert json.loads(raw)["data"]["amount"] == expected


def test_a_row_holding_a_number_as_dynamodb_answers_it_can_still_be_corrected(aws: dict[str, str]) -> None:
    """A write of the whole row (a reschedule) carries the number back as DynamoDB stores it."""
    status, created = call_api("POST", "/reminders", _body(data={"amount": 5}))
    assert status == 201, created
    rid = created["id"]
    boto3.client("dynamodb").update_item(
        TableName=table().name,
        Key={"pk": {"S": f"R#{rid}"}, "sk": {"S": "R"}},
        UpdateExpression="SET #d.amount = :n",
        ExpressionAttributeNames={"#d": "data"},
        ExpressionAttributeValues={":n": {"N": AS_ANSWERED["1e125"]}},
    )
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    status, moved = call_api("PATCH", f"/reminders/{rid}", {"due_at": later})
    assert status == 200, moved
    raw = boto3.client("dynamodb").get_item(
        TableName=table().name, Key={"pk": {"S": f"R#{rid}"}, "sk": {"S": "R"}}
    )["Item"]
    assert Decimal(raw["data"]["M"]["amount"]["N"]) == Decimal(AS_ANSWERED["1e125"])
    status, got = call_api("GET", f"/reminders/{rid}")
    assert status == 200 and got["data"]["amount"] == int(AS_ANSWERED["1e125"]) and got["version"] == 2


def test_the_store_writes_a_number_read_as_dynamodb_answers_it_without_its_trailing_zeros() -> None:
    from decimal import Inexact

    from reminders.adapters.dynamodb import from_typed, to_typed

    for answered in AS_ANSWERED.values():
        value = from_typed({"n": {"N": answered}})["n"]
        assert value == Decimal(answered)  # read exactly
        assert Decimal(to_typed({"n": value})["n"]["N"]) == value  # written back as the same number
        assert Decimal(to_typed({"n": int(value)})["n"]["N"]) == value
    with pytest.raises(Inexact):  # more than 38 significant digits: still refused, as boto3 refuses it
        to_typed({"n": Decimal("1" * 39)})
