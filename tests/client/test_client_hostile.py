"""Review 31: the client against a hostile environment (a proxy or endpoint that answers what it
likes): it never waits without bound and never pages forever."""

from __future__ import annotations

import itertools

import httpx
import pytest
from botocore.credentials import Credentials
from reminders_client import ApiError, RemindersClient, Throttled
from reminders_client import client as client_module

#: The longest the client may wait before a retry (the AWS SDKs' cap on a retry's delay).
MAX_RETRY_AFTER_SECONDS = client_module.MAX_RETRY_AFTER_SECONDS
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


def client(handle: httpx.MockTransport, slept: list[float]) -> RemindersClient:
    return RemindersClient(
        "https://abc123.execute-api.eu-west-1.amazonaws.com",
        credentials=Credentials("AKIDEXAMPLE", "secret"),
        transport=handle,
        sleep=slept.append,
    )


@pytest.mark.parametrize("retry_after", ["86400", "1e9", "inf", "nan"])
def test_retry_after_is_never_waited_beyond_the_bound_when_an_answer_asks_for_more(retry_after: str) -> None:
    """A 429 asking for a day (or forever) is not slept on: the call answers Throttled now."""
    answers = [httpx.Response(429, json={"message": "slow"}, headers={"retry-after": retry_after})]
    answers.append(httpx.Response(200, json=REMINDER))
    slept: list[float] = []
    transport = httpx.MockTransport(lambda _r: answers.pop(0))
    with pytest.raises(Throttled):
        client(transport, slept).get(RID)
    assert slept == []  # asked for more than the bound: not slept on, not retried


def test_retry_after_is_waited_when_within_the_bound() -> None:
    wait = f"{MAX_RETRY_AFTER_SECONDS:g}"
    answers = [httpx.Response(429, json={"message": "slow"}, headers={"retry-after": wait})]
    answers.append(httpx.Response(200, json=REMINDER))
    slept: list[float] = []
    assert client(httpx.MockTransport(lambda _r: answers.pop(0)), slept).get(RID).id == RID
    assert slept == [MAX_RETRY_AFTER_SECONDS]


def test_attention_is_refused_when_a_page_repeats_its_cursor() -> None:
    """A listing whose next page names the cursor just followed would loop forever: an ApiError."""

    def page(_request: httpx.Request) -> httpx.Response:
        items = [{"id": RID, "state": "held", "due_at": "2026-12-20T09:00:00Z"}]
        return httpx.Response(200, json={"items": items, "next_cursor": "same"})

    listing = client(httpx.MockTransport(page), []).attention("acct-a")
    with pytest.raises(ApiError, match="cursor"):
        list(itertools.islice(listing, 50))  # bounded: today's code would never end


def test_client_is_refused_when_its_endpoint_is_plain_http_to_another_host() -> None:
    """A signed request over plain HTTP can be read and replayed within the signature's 5 minutes
    (a correct without If-Match applies again): only a loopback endpoint may be http."""
    with pytest.raises(ValueError, match="endpoint"):
        RemindersClient("http://api.example.com", credentials=Credentials("AKIDEXAMPLE", "secret"))


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_client_accepts_plain_http_when_the_endpoint_is_loopback(endpoint: str) -> None:
    RemindersClient(endpoint, credentials=Credentials("AKIDEXAMPLE", "secret"))


def test_client_accepts_plain_http_to_another_host_when_allowed_explicitly() -> None:
    RemindersClient(
        "http://reminders.internal", credentials=Credentials("AKIDEXAMPLE", "secret"), allow_plain_http=True
    )
