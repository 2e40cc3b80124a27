"""The client's wrapper over a scripted transport: signing, errors naming the field, pagination,
and retries only where repeating the call is safe."""

from __future__ import annotations

import httpx
import pytest
from botocore.credentials import Credentials
from reminders_client import (
    ApiError,
    Conflict,
    InvalidRequest,
    PreconditionFailed,
    RemindersClient,
    Unavailable,
)

RID = "rem_" + "a" * 32
REMINDER = {
    "account_id": "acct-a",
    "created_at": "2026-12-01T00:00:00Z",
    "data": {},
    "deliveries": [],
    "due_at": "2026-12-20T09:00:00Z",
    "id": RID,
    "key": "k1",
    "kind": "renewal",
    "state": "scheduled",
    "template": {"id": "renewal", "version": 1},
    "version": 1,
}
NEW = {
    "account_id": "acct-a",
    "key": "k1",
    "kind": "renewal",
    "due_at": "2026-12-20T09:00:00Z",
    "template": {"id": "renewal", "version": 1},
    "channels": [{"type": "webhook", "url": "https://example.com/hook"}],
}


def client(answers: list[httpx.Response], seen: list[httpx.Request]) -> RemindersClient:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    return RemindersClient(
        "https://abc123.execute-api.eu-west-1.amazonaws.com",
        credentials=Credentials("AKIDEXAMPLE", "secret"),
        transport=httpx.MockTransport(handle),
        sleep=lambda _s: None,
    )


def ok(body: object, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=body)


def test_every_request_is_signed_for_the_endpoints_region() -> None:
    seen: list[httpx.Request] = []
    client([ok(REMINDER)], seen).get(RID)
    auth = seen[0].headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in auth
    assert "host" in auth.split("SignedHeaders=")[1].split(",")[0].split(";")


def test_create_is_retried_when_answered_503_and_is_one_reminder() -> None:
    seen: list[httpx.Request] = []
    got = client([ok({"message": "paused"}, 503), ok(REMINDER, 201)], seen).create(NEW)
    assert got.id == RID and len(seen) == 2
    assert seen[0].content == seen[1].content  # the same business key and body: idempotent
    assert seen[0].headers["authorization"] != "" and seen[1].headers["x-amz-date"]


def test_correct_is_not_retried_when_answered_503_without_if_match() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(Unavailable):
        client([ok({"message": "boom"}, 503), ok(REMINDER)], seen).correct(
            RID, {"due_at": "2026-12-21T09:00:00Z"}
        )
    assert len(seen) == 1


def test_correct_is_retried_when_answered_503_with_if_match_and_says_when_412_follows() -> None:
    seen: list[httpx.Request] = []
    answers = [
        ok({"message": "boom"}, 503),
        ok({"error": "precondition_failed", "message": "v2", "field": "If-Match"}, 412),
    ]
    with pytest.raises(PreconditionFailed) as exc:
        client(answers, seen).correct(RID, {"due_at": "2026-12-21T09:00:00Z"}, if_match=1)
    assert [r.headers["if-match"] for r in seen] == ['"1"', '"1"']
    assert exc.value.field == "If-Match" and "earlier attempt may have applied it" in exc.value.message


def test_error_names_the_field_when_the_api_refuses_input() -> None:
    body = {"error": "invalid", "field": "body.due_at", "message": "body.due_at: bad", "detail": []}
    with pytest.raises(InvalidRequest) as exc:
        client([ok(body, 422)], []).create(NEW)
    assert exc.value.field == "body.due_at" and exc.value.status == 422 and "[body.due_at]" in str(exc.value)


def test_attention_follows_next_cursor_until_the_last_page() -> None:
    seen: list[httpx.Request] = []
    page = lambda ids, cursor: ok(  # noqa: E731
        {
            "items": [{"id": i, "state": "held", "due_at": "2026-12-20T09:00:00Z"} for i in ids],
            "next_cursor": cursor,
        }
    )
    got = [r.id for r in client([page(["a", "b"], "c1"), page(["c"], None)], seen).attention("acct-a")]
    assert got == ["a", "b", "c"]
    assert "cursor" not in seen[0].url.params and seen[1].url.params["cursor"] == "c1"


@pytest.mark.parametrize("status", [400, 403, 404, 409])
def test_a_refusal_is_not_retried_when_it_is_final(status: int) -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(ApiError) as exc:
        client([ok({"message": "no"}, status), ok(REMINDER)], seen).get(RID)
    assert exc.value.status == status and len(seen) == 1


def test_cancel_answers_the_canceled_reminder_when_a_retry_meets_409() -> None:
    seen: list[httpx.Request] = []
    answers = [
        ok({"message": "gateway"}, 504),
        ok({"message": "nothing to cancel"}, 409),
        ok({**REMINDER, "state": "canceled"}),
    ]
    assert client(answers, seen).cancel(RID).state == "canceled"
    assert [r.method for r in seen] == ["DELETE", "DELETE", "GET"]


def test_cancel_is_refused_when_the_first_attempt_meets_409() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(Conflict):
        client([ok({"message": "nothing to cancel"}, 409)], seen).cancel(RID)
    assert len(seen) == 1
