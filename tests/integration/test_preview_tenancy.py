"""The preview by tenant (issue 24 item 4), through the API on moto with two accounts: an account's
preview counts that account's due-index entries only and carries no queue counts (the channel
queues are shared by every account); the all-accounts preview (the bootstrap principal only) adds
the queues' counts and reads the due index, not the reminders' rows."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders import runtime

from tests.support.lambda_runtime import call_api

ROLE_A = "arn:aws:iam::111111111111:role/shop-a"
A = "arn:aws:sts::111111111111:assumed-role/shop-a/backend-1"
B = "arn:aws:iam::111111111111:user/shop-b"


@pytest.fixture
def tenants(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reminders.services.tenancy.GRANTS_CACHE_SECONDS", 0.0)
    runtime.grant_store().grant(ROLE_A, "acct-a")
    runtime.grant_store().grant(B, "acct-b")


def _create(principal: str, account: str, key: str) -> str:
    body = {
        "key": key,
        "account_id": account,
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + timedelta(minutes=20)).isoformat(),
        "channels": [{"type": "email", "to": "user@example.com"}],
        "template": {"id": "renewal", "version": 1},
    }
    status, created = call_api("POST", "/reminders", body, principal=principal)
    assert status == 201, created
    return str(created["id"])


def _preview(principal: str | None = None, account: str | None = None) -> tuple[int, Any]:
    query = {"next_minutes": "30"} | ({"account_id": account} if account else {})
    if principal is None:
        return call_api("GET", "/reminders/preview", query=query)  # the bootstrap principal
    return call_api("GET", "/reminders/preview", query=query, principal=principal)


def _b_messages_in_the_shared_queues(n: int) -> None:
    """Account B's work already handed to SQS: the email queue every account shares."""
    queues = runtime.queues()
    for i in range(n):
        queues.client.send_message(QueueUrl=queues.queue_urls["email"], MessageBody=f'{{"b":{i}}}')


def test_account_preview_never_shows_another_accounts_queue_counts(tenants: None) -> None:
    mine = _create(A, "acct-a", "a:1")
    theirs = {_create(B, "acct-b", f"b:{i}") for i in range(2)}
    _b_messages_in_the_shared_queues(3)

    status, a = _preview(A, "acct-a")
    assert status == 200, a
    assert a["first_ids"] == [mine] and a["totals"] == {"attempts": 1, "may_attempt": 0, "not_attempted": 0}
    assert a.get("queues") is None, a["queues"]  # B's three queued messages are not A's to count
    status, b = _preview(B, "acct-b")
    assert status == 200 and set(b["first_ids"]) == theirs and b.get("queues") is None
    # the operator naming one account gets that account's preview, the same as its owner's
    status, named = _preview(account="acct-a")
    assert status == 200 and named.get("queues") is None and named["first_ids"] == [mine]

    # every account's preview, for the all-accounts principal only, has the queues' counts
    status, every = _preview()
    assert status == 200 and set(every["first_ids"]) == theirs | {mine}
    assert every["queues"]["email"]["visible"] == 3
    assert _preview(A)[0] == 403 and _preview(B)[0] == 403


@pytest.fixture
def dynamodb_calls(aws: dict[str, str]) -> Counter[str]:
    """DynamoDB calls by operation, and ``rows`` the reminder rows read (``R#…`` keys), counted at the
    botocore layer of the clients the handler makes from here on (a client copies its session's
    event hooks when it is made)."""
    calls: Counter[str] = Counter()

    def count(model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.service_model.service_name != "dynamodb":
            return
        calls[model.name] += 1
        keys = [params.get("Key") or {}]
        for request in (params.get("RequestItems") or {}).values():
            keys += request.get("Keys", [])
        calls["rows"] += sum(1 for k in keys if str(k.get("pk", {}).get("S", "")).startswith("R#"))

    boto3._get_default_session().events.register("before-parameter-build.dynamodb", count)
    return calls


def test_all_accounts_preview_reads_the_due_index_not_any_accounts_rows(
    dynamodb_calls: Counter[str], tenants: None
) -> None:
    for i in range(3):
        _create(A, "acct-a", f"a:{i}")
        _create(B, "acct-b", f"b:{i}")
    calls = dynamodb_calls
    calls.clear()
    status, every = _preview()
    assert status == 200 and every["totals"]["to_dispatch"] == 6
    # one due-index query per minute bucket and shard (besides the controls and the caller's
    # grants): no reminder row is read, however many accounts have entries in the window
    assert calls["rows"] == 0 and calls["BatchGetItem"] == 0, dict(calls)
    assert calls["Query"] <= 31 * runtime.settings().due_shards + 2, dict(calls)
    # an account's preview reads only its own entries (its tag's key range in each minute) and its
    # own rows, and applies the consumer's rules to them (issue 28 item 1): acct-b's are not read
    calls.clear()
    status, a = _preview(A, "acct-a")
    assert status == 200 and a["totals"]["attempts"] == 3 and a["counts_of"] == "consumer_rules"
    assert calls["rows"] == 3, dict(calls)
