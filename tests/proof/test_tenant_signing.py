"""Issue 24 items 2 and 3, through the real handlers on moto and a real local receiver: no stack-wide
secret signs or proves anything of an account. A bare URL's webhooks are signed with its account's
implicit endpoint (one per account and origin, its own envelope-sealed secret); during the migration
window they also carry the stack signature, after it only the account's; a receipt signed with the
stack secret is refused from the first day; a receipt proves only a delivery that was claimed for
its destination; and the public receipts route answers a missing reminder and a bad signature alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
from reminders.domain.endpoints import implicit_endpoint_id
from reminders.handlers.delivery import webhook_handler
from standardwebhooks.webhooks import Webhook

from tests.conftest import NO_TRANSACTIONS
from tests.proof.test_matrix_receipts import _body, _post, _receipt_items
from tests.support.lambda_runtime import call_api, invoke_batch, receive

T = datetime.now(UTC) - timedelta(minutes=1)


def _reminder(account: str, url: str, key: str, due: datetime | None = None) -> dict[str, Any]:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": key,
            "account_id": account,
            "kind": "renewal",
            "due_at": (due or datetime.now(UTC) - timedelta(seconds=1)).isoformat(),
            "channels": [{"type": "webhook", "url": url}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201, body
    return dict(body)


def _drain(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], receive(sqs, aws["WEBHOOK_QUEUE_URL"]))


def _account_secret(account: str, url: str) -> str:
    """The current secret of the account's implicit endpoint of ``url``'s origin (as stored)."""
    endpoint = runtime.endpoint_store().get(implicit_endpoint_id(account, url))
    assert endpoint is not None, "no implicit endpoint for this account and origin"
    return endpoint.signing_secrets(datetime.now(UTC))[0]


def _verifies(secret: str, raw: bytes, headers: dict[str, str]) -> bool:
    try:
        Webhook(signing_key(secret)).verify(raw, headers)
    except Exception:
        return False
    return True


def _state(rid: str) -> str:
    status, got = call_api("GET", f"/reminders/{rid}")
    assert status == 200, got
    return str(got["deliveries"][0]["state"])


def test_forged_receipt_with_the_stack_secret_never_marks_an_unsent_delivery_delivered(
    aws: dict[str, str], receiver: Any
) -> None:
    # Account A's reminder is due tomorrow: queued, never attempted. Account B holds the stack secret
    # (its own receivers verify with it during the migration) and can compute A's ids (hashes).
    victim = _reminder(
        "acct-a", receiver.url + "/hooks", "renewal:acct-a:1", datetime.now(UTC) + timedelta(days=1)
    )
    rid, key = victim["id"], victim["deliveries"][0]["key"]
    status, _ = _post(_body(rid, key, "evt-forged", "processed", T), secret=DEV_WEBHOOK_SECRET)
    assert status == 401
    assert _receipt_items(aws) == []
    assert _state(rid) != "delivered"


def test_bare_url_webhooks_of_two_accounts_are_signed_with_different_secrets(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNING_CUTOVER_AT", raising=False)  # a deployment with no migration window
    runtime.reset()
    url = receiver.url + "/hooks"
    a = _reminder("acct-a", url, "renewal:acct-a:2")
    b = _reminder("acct-b", url, "renewal:acct-b:2")
    _drain(aws)
    secret_a, secret_b = _account_secret("acct-a", url), _account_secret("acct-b", url)
    assert secret_a != secret_b
    for mine, other, reminder in ((secret_a, secret_b, a), (secret_b, secret_a, b)):
        raw, headers = receiver.state.last_post[reminder["deliveries"][0]["key"]]
        assert _verifies(mine, raw, headers)
        assert not _verifies(other, raw, headers)
        assert not _verifies(DEV_WEBHOOK_SECRET, raw, headers)  # nothing any other tenant holds


def test_migration_window_carries_both_signatures_then_only_the_accounts(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = receiver.url + "/hooks"
    # Within the window (cut over an hour ago, 7 days by default): the account's and the stack's.
    monkeypatch.setenv("SIGNING_CUTOVER_AT", (datetime.now(UTC) - timedelta(hours=1)).isoformat())
    runtime.reset()
    first = _reminder("acct-m", url, "renewal:acct-m:1")
    _drain(aws)
    raw, headers = receiver.state.last_post[first["deliveries"][0]["key"]]
    assert len(headers["webhook-signature"].split(" ")) == 2
    account = _account_secret("acct-m", url)
    assert _verifies(account, raw, headers) and _verifies(DEV_WEBHOOK_SECRET, raw, headers)
    # After it (cut over 8 days ago): the account's signature only.
    monkeypatch.setenv("SIGNING_CUTOVER_AT", (datetime.now(UTC) - timedelta(days=8)).isoformat())
    runtime.reset()
    second = _reminder("acct-m", url, "renewal:acct-m:2")
    _drain(aws)
    raw, headers = receiver.state.last_post[second["deliveries"][0]["key"]]
    assert len(headers["webhook-signature"].split(" ")) == 1
    assert _verifies(account, raw, headers) and not _verifies(DEV_WEBHOOK_SECRET, raw, headers)
    # A shorter window is configurable (never longer than 7 days).
    monkeypatch.setenv("SIGNING_CUTOVER_AT", (datetime.now(UTC) - timedelta(days=2)).isoformat())
    monkeypatch.setenv("STACK_SIGNATURE_DAYS", "1")
    runtime.reset()
    third = _reminder("acct-m", url, "renewal:acct-m:3")
    _drain(aws)
    raw, headers = receiver.state.last_post[third["deliveries"][0]["key"]]
    assert not _verifies(DEV_WEBHOOK_SECRET, raw, headers)


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_receipt_for_a_never_claimed_delivery_is_refused(aws: dict[str, str], receiver: Any) -> None:
    # The account's own endpoint secret, a correctly signed receipt: still no claim was ever written
    # for this webhook id, so nothing was sent and the receipt proves nothing.
    status, ep = call_api("POST", "/endpoints", {"account_id": "acct-c", "url": receiver.url + "/hooks"})
    assert status == 201, ep
    status, r = call_api(
        "POST",
        "/reminders",
        {
            "key": "renewal:acct-c:1",
            "account_id": "acct-c",
            "kind": "renewal",
            "due_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
            "channels": [{"type": "webhook", "endpoint_id": ep["id"]}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201, r
    rid, key = r["id"], r["deliveries"][0]["key"]
    status, _ = _post(_body(rid, key, "evt-early", "processed", T), secret=ep["secret"])
    assert status == 401
    assert _receipt_items(aws) == []
    assert _state(rid) != "delivered"


def test_receipts_route_answers_missing_and_bad_signature_alike(aws: dict[str, str], receiver: Any) -> None:
    existing = _reminder("acct-o", receiver.url + "/hooks", "renewal:acct-o:1")
    _drain(aws)
    rid, key = existing["id"], existing["deliveries"][0]["key"]
    wrong = "whsec_" + "Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0"
    bad_signature = _post(_body(rid, key, "evt-1", "processed", T), secret=wrong)
    missing_reminder = _post(_body("rem_" + "0" * 32, key, "evt-1", "processed", T), secret=wrong)
    missing_delivery = _post(_body(rid, "dlv_" + "0" * 32, "evt-1", "processed", T), secret=wrong)
    assert bad_signature == missing_reminder == missing_delivery
    assert bad_signature[0] == 401
    assert _receipt_items(aws) == []


def test_an_account_takes_over_its_implicit_endpoint_and_only_its_own(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``POST /endpoints`` with ``bare_urls`` on an origin whose implicit endpoint the service made
    answers 201 with a new secret (a rotation: the made one keeps signing for the overlap), and
    from then on that account's bare-URL webhooks verify with it. Another account registering the
    same origin gets its own endpoint (the id is a hash of account and origin), never this one."""
    monkeypatch.delenv("SIGNING_CUTOVER_AT", raising=False)
    runtime.reset()
    url = receiver.url + "/hooks"
    _reminder("acct-t", url, "renewal:acct-t:1")
    _drain(aws)
    made = runtime.endpoint_store().get(implicit_endpoint_id("acct-t", url))
    assert made is not None and made.implicit
    status, taken = call_api("POST", "/endpoints", {"account_id": "acct-t", "url": url, "bare_urls": True})
    assert status == 201, taken
    assert taken["id"] == made.id and taken["secret"] not in made.signing_secrets(datetime.now(UTC))
    status, again = call_api("POST", "/endpoints", {"account_id": "acct-t", "url": url, "bare_urls": True})
    assert status == 409, again  # now the account's own: registered once
    status, other = call_api("POST", "/endpoints", {"account_id": "acct-u", "url": url, "bare_urls": True})
    assert status == 201 and other["id"] != made.id and other["secret"] != taken["secret"]
    receiver.use_secret(taken["secret"])
    second = _reminder("acct-t", url, "renewal:acct-t:2")
    _drain(aws)
    key = second["deliveries"][0]["key"]
    assert receiver.state.accepted[key] == 1 and receiver.signed_by(taken["secret"], key)
    assert not receiver.signed_by(other["secret"], key) and not receiver.signed_by(DEV_WEBHOOK_SECRET, key)


def test_a_receipt_signed_with_another_accounts_secret_for_the_same_origin_is_refused(
    aws: dict[str, str], receiver: Any
) -> None:
    """Both accounts send to the same receiver origin (each its own implicit endpoint); B's secret
    proves nothing about A's delivery, A's own does."""
    url = receiver.url + "/hooks"
    a = _reminder("acct-a", url, "renewal:acct-a:same-origin")
    _reminder("acct-b", url, "renewal:acct-b:same-origin")
    _drain(aws)
    rid, key = a["id"], a["deliveries"][0]["key"]
    assert _state(rid) == "delivered"
    status, _ = _post(_body(rid, key, "evt-b", "processed", T), secret=_account_secret("acct-b", url))
    assert status == 401
    assert _receipt_items(aws) == []
    status, _ = _post(_body(rid, key, "evt-a", "processed", T), secret=_account_secret("acct-a", url))
    assert status == 202
