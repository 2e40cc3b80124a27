"""Review 29 (hostile input after the API's split into routers): JSON nested deeper than Python's
decoder recurses — a page cursor within its documented 2048 characters, a body on every route that
takes one, an unsigned receipt on the public receiver — is refused as bad input naming its field,
never a 5xx (an uncaught ``RecursionError``), and nothing is written."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from reminders.handlers.api import handler

from tests.support.aws import table
from tests.support.lambda_runtime import FakeContext, call_api, http_event

#: Deeper than CPython's JSON decoder recurses (its limit is the interpreter's, 1000 frames).
DEPTH = 3000
NESTED = "[" * DEPTH + "]" * DEPTH


def _stored() -> list[dict[str, Any]]:
    return list(table().scan()["Items"])


def test_listing_answers_422_naming_cursor_when_the_cursor_decodes_to_deeply_nested_json(aws: Any) -> None:
    # The check prefix is not a key: anyone can build a cursor; 2048 characters is the documented maximum.
    cursor = base64.urlsafe_b64encode(("0" * 16 + "[" * 1520).encode()).decode().rstrip("=")
    assert len(cursor) == 2048
    status, body = call_api("GET", "/reminders", query={"account_id": "acct-1", "cursor": cursor})
    assert status == 422 and body["field"] == "cursor"


BODY_ROUTES = [
    ("POST", "/reminders"),
    ("PATCH", "/reminders/rem_" + "0" * 32),
    ("POST", "/endpoints"),
    ("PATCH", "/endpoints/ep_" + "0" * 32),
    ("PUT", "/accounts/acct-1/event-endpoint"),
    ("PUT", "/templates/t/versions/1"),
    ("POST", "/templates/t/versions/1/preview"),
]


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES, ids=[f"{m} {p}" for m, p in BODY_ROUTES])
def test_a_body_route_answers_422_naming_body_when_the_json_is_nested_too_deeply(
    aws: Any, method: str, path: str
) -> None:
    before = _stored()
    for raw in (NESTED, '{"data": ' + NESTED + "}"):
        status, body = call_api(method, path, raw=raw)
        assert status == 422 and body["field"] == "body", (raw[:20], status, body)
    assert _stored() == before


def test_the_receiver_answers_as_to_a_bad_signature_when_an_unsigned_body_is_nested_too_deeply(
    aws: Any,
) -> None:
    """Public, no IAM: anyone can send it, only the three header names are needed."""
    before = _stored()
    answers = []
    for raw in ("{}", NESTED):
        event = http_event("POST", "/inbound/receiver", raw=raw, principal=None)
        signed = {"webhook-id": "msg_x", "webhook-timestamp": "1", "webhook-signature": "v1,x"}
        event["headers"].update(signed)
        resp = handler(event, FakeContext(function_name="api"))
        answers.append((resp["statusCode"], resp.get("body")))
    assert answers[1] == answers[0] and answers[0][0] == 401
    assert _stored() == before
