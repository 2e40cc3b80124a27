"""Tenant scoping of every API route by the caller's IAM principal: acting for an account not granted
is a 403 (nothing written); another account's reminder or endpoint is a 404 (no existence leak)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders import runtime
from reminders_ops.cli import main as cli

from tests.conftest import NO_TRANSACTIONS
from tests.support.lambda_runtime import call_api

ROLE_A = "arn:aws:iam::111111111111:role/shop-a"
A = "arn:aws:sts::111111111111:assumed-role/shop-a/backend-1"  # a session of the granted role
B = "arn:aws:iam::111111111111:user/shop-b"


@pytest.fixture
def tenants(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reminders.services.tenancy.GRANTS_CACHE_SECONDS", 0.0)
    runtime.grant_store().grant(ROLE_A, "acct-a")
    runtime.grant_store().grant(B, "acct-b")


def _body(account: str, key: str = "k1", **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "account_id": account,
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + timedelta(days=3)).isoformat(),
        "channels": [{"type": "email", "to": "user@example.com"}],
        "template": {"id": "renewal", "version": 1},
        **extra,
    }


def test_acting_for_another_account_is_403_and_nothing_is_written(tenants: None) -> None:
    status, body = call_api("POST", "/reminders", _body("acct-b"), principal=A)
    assert status == 403 and body["error"] == "forbidden", body
    assert call_api("GET", "/reminders", query={"account_id": "acct-b", "key": "k1"}, principal=B)[0] == 404
    status, _ = call_api("GET", "/reminders", query={"account_id": "acct-b", "key": "k1"}, principal=A)
    assert status == 403
    status, _ = call_api(
        "POST", "/endpoints", {"account_id": "acct-b", "url": "http://127.0.0.1:9/"}, principal=A
    )
    assert status == 403


def test_caller_of_account_a_gets_404_for_account_b_reminder(tenants: None) -> None:
    status, created = call_api("POST", "/reminders", _body("acct-b"), principal=B)
    assert status == 201, created
    rid = created["id"]
    assert call_api("GET", f"/reminders/{rid}", principal=A)[0] == 404
    later = (datetime.now(UTC) + timedelta(days=4)).isoformat()
    assert call_api("PATCH", f"/reminders/{rid}", {"due_at": later}, principal=A)[0] == 404
    assert call_api("DELETE", f"/reminders/{rid}", principal=A)[0] == 404
    # the 404 is the same as for an id that does not exist
    missing = call_api("GET", "/reminders/rem_" + "0" * 32, principal=A)
    assert missing[0] == 404 and missing[1]["error"] == "not_found"
    status, got = call_api("GET", f"/reminders/{rid}", principal=B)
    assert status == 200 and got["due_at"] == created["due_at"]  # untouched by A
    assert call_api("DELETE", f"/reminders/{rid}", principal=B)[0] == 200


def test_caller_of_account_a_gets_404_for_account_b_endpoint(tenants: None) -> None:
    status, ep = call_api(
        "POST", "/endpoints", {"account_id": "acct-b", "url": "http://127.0.0.1:9/"}, principal=B
    )
    assert status == 201, ep
    eid = ep["id"]
    assert call_api("GET", f"/endpoints/{eid}", principal=A)[0] == 404
    assert call_api("PATCH", f"/endpoints/{eid}", {"enabled": False}, principal=A)[0] == 404
    assert call_api("POST", f"/endpoints/{eid}/rotate-secret", principal=A)[0] == 404
    assert call_api("DELETE", f"/endpoints/{eid}", principal=A)[0] == 404
    # naming another account's endpoint in a reminder of one's own: no such endpoint for this account
    body = _body("acct-a", channels=[{"type": "webhook", "endpoint_id": eid}])
    status, payload = call_api("POST", "/reminders", body, principal=A)
    assert status == 422 and payload["field"] == "channels.endpoint_id"
    assert call_api("GET", f"/endpoints/{eid}", principal=B)[0] == 200


def test_no_principal_acts_for_no_account(tenants: None) -> None:
    assert call_api("POST", "/reminders", _body("acct-a"), principal=None)[0] == 403
    status, created = call_api("POST", "/reminders", _body("acct-a"), principal=A)
    assert status == 201
    assert call_api("GET", f"/reminders/{created['id']}", principal=None)[0] == 404
    assert call_api("GET", "/health", principal=None)[0] == 200


def test_bootstrap_principal_acts_for_every_account(tenants: None) -> None:
    status, created = call_api("POST", "/reminders", _body("acct-a"))  # the tests' bootstrap session
    assert status == 201
    assert call_api("GET", f"/reminders/{created['id']}")[0] == 200


def test_grant_and_revoke_through_the_cli(tenants: None, aws: dict[str, str], capsys: Any) -> None:
    c = "arn:aws:iam::111111111111:role/shop-c"
    assert call_api("POST", "/reminders", _body("acct-c"), principal=c)[0] == 403
    table = ["--table", aws["TABLE_NAME"]]
    assert cli(["accounts", "grant", c, "acct-c", *table, "--stack", "RemindersStack"]) == 0
    assert '"acct-c"' in capsys.readouterr().out
    assert call_api("POST", "/reminders", _body("acct-c"), principal=c)[0] == 201
    assert cli(["accounts", "revoke", c, "acct-c", *table, "--stack", "RemindersStack"]) == 0
    assert call_api("POST", "/reminders", _body("acct-c", key="k2"), principal=c)[0] == 403


def test_correction_naming_another_accounts_endpoint_is_refused_like_a_missing_one(
    tenants: None, aws: dict[str, str], receiver: Any
) -> None:
    """Issue 24 item 1, end to end: B re-pointing its reminder at A's endpoint is refused exactly as
    a missing endpoint is (and as POST refuses it); A's receiver never gets B's content."""
    import boto3
    from reminders.handlers.delivery import webhook_handler

    from tests.support.lambda_runtime import invoke_batch, receive

    status, ep = call_api(
        "POST", "/endpoints", {"account_id": "acct-a", "url": receiver.url + "/a"}, principal=A
    )
    assert status == 201, ep
    receiver.use_secret(ep["secret"])
    now = datetime.now(UTC).isoformat()
    body = _body("acct-b", due_at=now, channels=[{"type": "webhook", "url": "http://127.0.0.1:9/b"}])
    status, mine = call_api("POST", "/reminders", body, principal=B)
    assert status == 201, mine
    answers = [
        call_api("PATCH", f"/reminders/{mine['id']}", {"channels": {"webhook-0": {"url": t}}}, principal=B)
        for t in (ep["id"], "ep_" + "0" * 32)
    ]
    (foreign_status, foreign), (missing_status, missing) = answers
    assert foreign_status == missing_status == 422, answers
    assert foreign == missing and foreign["message"].endswith("no such endpoint for this account"), answers
    status, got = call_api("GET", f"/reminders/{mine['id']}", principal=B)
    assert status == 200 and got["version"] == mine["version"]
    assert got["deliveries"][0]["destination"] == "http://127.0.0.1:9/b"
    sqs = boto3.client("sqs")
    msgs = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
    if msgs:
        invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], msgs)
    assert not receiver.state.posts  # nothing of B's reached A's receiver, signed or not


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_foreign_endpoint_never_signs_or_receives_another_accounts_content_when_cached(
    tenants: None, aws: dict[str, str], receiver: Any
) -> None:
    """Issue 24 item 1, end to end through the handlers: B's row naming A's endpoint (as stored before
    create and correction checked it) is processed in the same batch, on the same consumer instance
    and cache, as A's own delivery to it: A's is sent signed with A's secret, B's never reaches A's
    receiver (dead letter endpoint_not_found), and A's endpoint health is A's alone."""
    import boto3
    from reminders.domain.models import ChannelType
    from reminders.handlers.delivery import webhook_handler
    from reminders.services.intents import ChannelSpec, NewReminder

    from tests.support.lambda_runtime import invoke_batch, receive

    theirs = {"account_id": "acct-a", "url": receiver.url + "/a"}
    status, ep = call_api("POST", "/endpoints", theirs, principal=A)
    assert status == 201, ep
    receiver.use_secret(ep["secret"])
    now = datetime.now(UTC) - timedelta(seconds=1)
    body = _body("acct-a", due_at=now.isoformat(), channels=[{"type": "webhook", "endpoint_id": ep["id"]}])
    status, own = call_api("POST", "/reminders", body, principal=A)
    assert status == 201, own
    foreign, _ = runtime.reminders_service().create(
        NewReminder(
            account_id="acct-b",
            key="b-legacy",
            kind="renewal",
            due_at=now,
            channels=(ChannelSpec(ChannelType.WEBHOOK, ep["id"]),),
            template_id="renewal",
            template_version=1,
            data={"plan": "b-content"},
        )
    )
    sqs = boto3.client("sqs")
    msgs = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
    assert len(msgs) == 2
    invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], msgs)
    key_a = own["deliveries"][0]["key"]
    assert receiver.state.accepted[key_a] == 1 and receiver.signed_by(ep["secret"], key_a)
    assert receiver.state.posts[foreign.deliveries["webhook-0"].key] == 0
    assert all("b-content" not in b for b in receiver.state.bodies.values())
    status, got = call_api("GET", f"/reminders/{foreign.id}", principal=B)
    d = got["deliveries"][0]
    assert d["state"] == "dead_letter" and d["last_error"]["detail"] == "endpoint_not_found", d
    health = boto3.client("dynamodb").get_item(
        TableName=aws["TABLE_NAME"], Key={"pk": {"S": f"E#{ep['id']}"}, "sk": {"S": "H"}}
    )["Item"]
    assert health["acct"]["S"] == "acct-a" and health["st"]["S"] == "active"
