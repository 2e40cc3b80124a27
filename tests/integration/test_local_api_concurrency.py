"""The local runtime's HTTP API serves requests on threads, but the API function keeps the request
it resolves on shared objects (Powertools' ``BaseRouter.current_event``, the resolver's context), as
Lambda allows: one instance runs one request at a time. Two accounts' concurrent requests must not
read each other's event — the caller one account signs for must never become the other's."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders import runtime
from reminders.handlers.routes import shared
from reminders_ops.local.http_api import HttpApi
from reminders_ops.local.lambdas import LocalFunction
from reminders_ops.local.sigv4 import credentials_for, sign
from reminders_ops.local.spec import FunctionSpec, RouteSpec

from tests.support.lambda_runtime import call_api

ROLE_A = "arn:aws:iam::111111111111:role/shop-a"
ROLE_B = "arn:aws:iam::111111111111:role/shop-b"
#: How long the first request waits, inside its route, for the second one to reach the same point.
#: Not an assertion: with one request at a time the second never arrives, and the first goes on.
INTERLEAVE_WAIT_SECONDS = 2.0


@pytest.fixture
def api(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpApi]:
    monkeypatch.setattr("reminders.services.tenancy.GRANTS_CACHE_SECONDS", 0.0)
    runtime.grant_store().grant(ROLE_A, "acct-a")
    runtime.grant_store().grant(ROLE_B, "acct-b")
    spec = FunctionSpec("Api", "reminders-api", "reminders.handlers.api.handler", 30, 512, {})
    routes = [RouteSpec("GET /reminders/{id}", "Api", "AWS_IAM")]
    server = HttpApi(
        routes, {"Api": LocalFunction(spec, "111111111111", "us-east-1")}, account_id="111111111111"
    ).start()
    try:
        yield server
    finally:
        server.stop()


def _get(api: HttpApi, path: str, principal: str) -> tuple[int, Any]:
    url = f"{api.url}{path}"
    req = urllib.request.Request(url, headers=sign("GET", url, credentials=credentials_for(principal)))
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _principal(event: Any) -> str:
    return str(((event.raw_event.get("requestContext") or {}).get("authorizer") or {})["iam"]["userArn"])


def test_caller_of_account_b_gets_404_for_account_a_reminder_when_account_a_reads_it_concurrently(
    api: HttpApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    due = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    body = {
        "key": "k1",
        "account_id": "acct-a",
        "kind": "renewal",
        "due_at": due,
        "channels": [{"type": "email", "to": "user@example.com"}],
        "template": {"id": "renewal", "version": 1},
    }
    status, created = call_api("POST", "/reminders", body, principal=ROLE_A)
    assert status == 201, created
    path = f"/reminders/{created['id']}"

    # B's request stops inside its route, just before the tenant check reads the event, until A's
    # request has reached the same point (or cannot: one request at a time).
    b_inside, a_inside, b_checked = threading.Event(), threading.Event(), threading.Event()
    real_current_event = shared.current_event

    def interleaved() -> Any:
        if _principal(real_current_event()) == ROLE_B and not b_inside.is_set():
            b_inside.set()
            a_inside.wait(INTERLEAVE_WAIT_SECONDS)
            try:
                return real_current_event()
            finally:
                b_checked.set()
        if _principal(real_current_event()) == ROLE_A and not a_inside.is_set():
            a_inside.set()
            b_checked.wait(INTERLEAVE_WAIT_SECONDS)
        return real_current_event()

    monkeypatch.setattr(shared, "current_event", interleaved)
    answers: dict[str, tuple[int, Any]] = {}
    b = threading.Thread(target=lambda: answers.__setitem__("b", _get(api, path, ROLE_B)))
    b.start()
    assert b_inside.wait(30), "B's request never reached its route"
    answers["a"] = _get(api, path, ROLE_A)
    b.join(30)

    assert answers["a"][0] == 200 and answers["a"][1]["account_id"] == "acct-a", answers["a"]
    assert answers["b"][0] == 404 and answers["b"][1]["error"] == "not_found", answers["b"]


class Probe:
    """An API function that records how many calls run at once; the first waits inside for another."""

    def __init__(self, shared_state: dict[str, Any], lock: threading.Lock, second: threading.Event) -> None:
        self.state, self.lock, self.second = shared_state, lock, second

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.state["active"] += 1
            self.state["entered"] += 1
            self.state["peak"] = max(self.state["peak"], self.state["active"])
            first = self.state["entered"] == 1
        if first:
            self.state["first_inside"].set()
            self.second.wait(INTERLEAVE_WAIT_SECONDS)
        else:
            self.second.set()
        with self.lock:
            self.state["active"] -= 1
        return {"statusCode": 200, "body": "{}"}


def test_api_and_public_functions_never_run_at_once_when_their_requests_arrive_together() -> None:
    """PublicFunction resolves with the API function's own ``app``: one lock per function would let
    a public request and an API request share it at once."""
    state: dict[str, Any] = {"active": 0, "entered": 0, "peak": 0, "first_inside": threading.Event()}
    lock, second = threading.Lock(), threading.Event()
    routes = [
        RouteSpec("GET /reminders/{id}", "Api", "NONE"),
        RouteSpec("POST /unsubscribe/{token}", "Public", "NONE"),
    ]
    functions = {"Api": Probe(state, lock, second), "Public": Probe(state, lock, second)}
    server = HttpApi(routes, functions, account_id="111111111111").start()  # type: ignore[arg-type]
    try:
        answers: list[int] = []
        first = threading.Thread(
            target=lambda: answers.append(
                urllib.request.urlopen(f"{server.url}/reminders/r1", timeout=30).status
            )
        )
        first.start()
        assert state["first_inside"].wait(30), "the first request never reached its function"
        req = urllib.request.Request(f"{server.url}/unsubscribe/t1", data=b"{}", method="POST")
        answers.append(urllib.request.urlopen(req, timeout=30).status)
        first.join(30)
    finally:
        server.stop()
    assert answers == [200, 200]
    assert state["peak"] == 1
