"""Issue 25 item 14: a cancelled transaction is not always a failed condition. On AWS two
transactions on one item cancel each other with ``TransactionCanceledException`` whose
``CancellationReasons`` name ``TransactionConflict`` (moto serialises them and never answers so): the
use of an endpoint (the endpoint's ``seq`` bump and the use row, one transaction) is then retried,
and one that keeps conflicting answers 409 with ``Retry-After`` (never 422 "no such endpoint", never
a 5xx). Only ``ConditionalCheckFailed`` means the endpoint is gone.

The cancellation is AWS's own wire answer (status 400, ``x-amz-json-1.0``, ``__type``, ``Message``,
``CancellationReasons``), parsed by botocore's own JSON parser and error-shape step as its endpoint
does, and handed to the project's real botocore client at ``before-call`` (as botocore's Stubber
does): the request never reaches moto, so nothing of it is applied, as on AWS."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.parsers import create_parser
from reminders.domain.opevents import OpEvent

from tests.conftest import NO_TRANSACTIONS
from tests.support.lambda_runtime import TEST_PRINCIPAL, FakeContext, call_api, http_event

pytestmark = pytest.mark.moto_only(NO_TRANSACTIONS)

CONFLICT = [
    {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
    {"Code": "None"},
]
CONDITION_FAILED = [
    {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
    {"Code": "None"},
]


def aws_answer(model: Any, status: int, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(http response, parsed response) of DynamoDB's wire answer ``body``, parsed as botocore's
    endpoint parses one: the protocol's parser, then the modeled error shape's fields."""

    headers = {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "answered-by-test"}
    raw = {"status_code": status, "headers": headers, "body": json.dumps(body).encode()}
    parser = create_parser(model.service_model.protocol)
    parsed: dict[str, Any] = parser.parse(raw, model.output_shape)
    error_shape = model.service_model.shape_for_error_code(parsed["Error"]["Code"])
    if error_shape is not None:
        parsed.update(parser.parse(raw, error_shape))
    return AWSResponse("https://dynamodb.us-east-1.amazonaws.com/", status, headers, None), parsed


class Cancellations:
    """The next ``times`` TransactWriteItems calls of every client made from now on are cancelled
    with ``reasons``, as DynamoDB answers them (nothing applied); the rest reach moto."""

    def __init__(self) -> None:
        self.left = 0
        self.reasons: list[dict[str, str]] = []
        self.answered = 0

    def arm(self, reasons: list[dict[str, str]], times: int) -> None:
        self.reasons, self.left = reasons, times

    def body(self) -> dict[str, Any]:
        codes = ", ".join(r["Code"] for r in self.reasons)
        return {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons"
            f" [{codes}]",
            "CancellationReasons": self.reasons,
        }

    def __call__(self, model: Any, **_: Any) -> tuple[Any, dict[str, Any]] | None:
        if self.left <= 0:
            return None
        self.left -= 1
        self.answered += 1
        return aws_answer(model, 400, self.body())


@pytest.fixture
def cancel(aws: dict[str, str]) -> Iterator[Cancellations]:
    from reminders.adapters.clients import _session

    events = _session().events
    hook = Cancellations()
    events.register("before-call.dynamodb.TransactWriteItems", hook, unique_id="test-cancellations")
    try:
        yield hook
    finally:
        events.unregister("before-call.dynamodb.TransactWriteItems", unique_id="test-cancellations")


def _endpoint(receiver: Any) -> str:
    status, created = call_api("POST", "/endpoints", {"account_id": "acct-1", "url": receiver.url + "/hooks"})
    assert status == 201, created
    return str(created["id"])


def _reminder(endpoint_id: str, key: str = "conflict:acct-1:1") -> dict[str, Any]:
    return {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": "2030-12-20T09:00:00+01:00",
        "channels": [{"type": "webhook", "endpoint_id": endpoint_id}],
        "template": {"id": "renewal", "version": 1},
    }


def test_transaction_conflict_naming_an_endpoint_is_retried_not_422(
    cancel: Cancellations, receiver: Any
) -> None:
    eid = _endpoint(receiver)
    cancel.arm(CONFLICT, 1)
    status, created = call_api("POST", "/reminders", _reminder(eid))
    assert cancel.answered == 1, "the transaction was not cancelled"
    assert status == 201, created
    assert created["deliveries"][0]["destination"] == eid


def test_transaction_conflict_that_persists_answers_409_with_retry_after_and_writes_no_reminder(
    cancel: Cancellations, receiver: Any
) -> None:
    from reminders.handlers.api import handler

    eid = _endpoint(receiver)
    cancel.arm(CONFLICT, 1000)
    resp = handler(
        http_event("POST", "/reminders", _reminder(eid), None, None, TEST_PRINCIPAL), FakeContext("api")
    )
    assert cancel.answered >= 2, "the conflict was not retried"
    assert resp["statusCode"] == 409, resp
    assert json.loads(resp["body"])["error"] == "concurrent_update"
    headers = {k.lower(): v for k, v in resp["headers"].items()}
    assert int(headers["retry-after"]) >= 1
    cancel.arm(CONFLICT, 0)
    status, _ = call_api("GET", "/reminders", query={"account_id": "acct-1", "key": "conflict:acct-1:1"})
    assert status == 404


def test_a_failed_condition_in_the_transaction_is_still_no_such_endpoint(
    cancel: Cancellations, receiver: Any
) -> None:
    """The endpoint deleted between the read and the transaction: 422 naming the field, as before."""
    eid = _endpoint(receiver)
    cancel.arm(CONDITION_FAILED, 1)
    status, err = call_api("POST", "/reminders", _reminder(eid))
    assert cancel.answered == 1
    assert status == 422 and err["field"] == "channels.endpoint_id", err


def _event_setup(receiver: Any) -> tuple[Any, OpEvent]:
    from reminders import runtime

    eid = _endpoint(receiver)
    status, _ = call_api("PUT", "/accounts/acct-1/event-endpoint", {"endpoint_id": eid})
    assert status == 200
    event = OpEvent(
        type="endpoint.held",
        account_id="acct-1",
        subject=f"{eid}/1",
        occurred_at="2030-12-20T08:00:00Z",
        data={"endpoint_id": eid},
    )
    return runtime.opevents_service(), event


def test_operational_event_is_not_dropped_on_transaction_conflict(
    cancel: Cancellations, receiver: Any
) -> None:
    service, event = _event_setup(receiver)
    cancel.arm(CONFLICT, 1)
    created = service.emit([event], service.lookups())
    assert cancel.answered == 1, "the transaction was not cancelled"
    assert created == 1
    made = service.reminders.find("acct-1", event.key)
    assert made.deliveries["webhook-0"].destination == event.data["endpoint_id"]


def test_operational_event_whose_transaction_keeps_conflicting_fails_its_record_for_a_retry(
    cancel: Cancellations, receiver: Any
) -> None:
    from reminders.domain.errors import StoreConflictError

    service, event = _event_setup(receiver)
    cancel.arm(CONFLICT, 1000)
    with pytest.raises(StoreConflictError):
        service.emit([event], service.lookups())  # the stream record fails: its retry creates it
    cancel.arm(CONFLICT, 0)
    assert service.emit([event], service.lookups()) == 1


def test_cancellation_codes_are_read_from_the_reasons_or_else_from_awss_message() -> None:
    from reminders.adapters.endpoints_store import cancellation_codes

    assert cancellation_codes({"CancellationReasons": CONFLICT}) == ["TransactionConflict", "None"]
    message = "Transaction cancelled, please refer cancellation reasons for specific reasons"
    message += " [None, ConditionalCheckFailed]"
    assert cancellation_codes({"Error": {"Message": message}}) == ["None", "ConditionalCheckFailed"]
    assert cancellation_codes({"Error": {"Message": "Transaction cancelled"}}) == []


# -- a standalone write on an item a transaction holds ---------------------------------------------
class Rejections(Cancellations):
    """The next ``times`` UpdateItem calls are rejected as AWS rejects a standalone write on an item
    a transaction is writing (``TransactionConflictException``; botocore does not retry it)."""

    def body(self) -> dict[str, Any]:
        return {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionConflictException",
            "message": "Transaction is ongoing for the item",
        }


@pytest.fixture
def reject(aws: dict[str, str]) -> Iterator[Rejections]:
    from reminders.adapters.clients import _session

    events = _session().events
    hook = Rejections()
    events.register("before-call.dynamodb.UpdateItem", hook, unique_id="test-rejections")
    try:
        yield hook
    finally:
        events.unregister("before-call.dynamodb.UpdateItem", unique_id="test-rejections")


def test_endpoint_patch_during_a_use_transaction_is_retried_not_500(
    reject: Rejections, receiver: Any
) -> None:
    eid = _endpoint(receiver)
    reject.arm([], 1)
    status, changed = call_api("PATCH", f"/endpoints/{eid}", {"description": "renamed"})
    assert reject.answered == 1, "the write was not rejected"
    assert status == 200 and changed["description"] == "renamed", changed
    reject.arm([], 1000)
    status, err = call_api("PATCH", f"/endpoints/{eid}", {"description": "again"})
    assert status == 409 and err["error"] == "concurrent_update", err
