"""POST /unsubscribe/{token} end to end on moto (issue 19): the email the consumer sends carries the
link; POSTing it (as a mail client does, with the RFC 8058 body, no credentials) suppresses that
address for that account and kind; a repeat answers the same; forged and expired tokens are a 4xx
with nothing written; no answer names the address or its hash."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.domain.suppression import address_hash
from reminders.handlers.delivery import email_handler

from tests.support.aws import sent_emails
from tests.support.lambda_runtime import call_api, invoke_batch, receive

TO = "reader@example.com"


@pytest.fixture
def unsub_env(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("UNSUBSCRIBE_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("UNSUBSCRIBE_SIGNING_SECRET", "local-unsubscribe-test-secret")
    runtime.reset()
    return aws


def _create(key: str, due: datetime | None = None, kind: str = "renewal") -> dict[str, Any]:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": key,
            "account_id": "acct-u",
            "kind": kind,
            "due_at": (due or datetime.now(UTC)).isoformat(),
            "channels": [{"type": "email", "to": TO}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 201, body
    return body


def _post(token: str) -> tuple[int, Any]:
    return call_api("POST", f"/unsubscribe/{token}", raw="List-Unsubscribe=One-Click")


def test_the_link_in_the_sent_email_unsubscribes_that_kind_and_a_repeat_answers_the_same(
    unsub_env: dict[str, str],
) -> None:
    sqs = boto3.client("sqs")
    _create("renewal:acct-u:1")
    invoke_batch(email_handler, sqs, unsub_env["EMAIL_QUEUE_URL"], receive(sqs, unsub_env["EMAIL_QUEUE_URL"]))
    (sent,) = sent_emails()
    msg = message_from_bytes(
        sent.raw_data.encode() if isinstance(sent.raw_data, str) else sent.raw_data, policy=policy.default
    )
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    match = re.fullmatch(r"<https://api\.example\.com/unsubscribe/([^>]+)>", msg["List-Unsubscribe"])
    assert match is not None
    token = match.group(1)
    first, again = _post(token), _post(token)
    assert first == again == (200, {"status": "unsubscribed"})
    assert TO not in str(first) and address_hash(TO) not in str(first)
    (entry,) = runtime.suppressions().list("acct-u")
    assert entry.scope == "renewal" and entry.reason.value == "unsubscribe"

    _create("renewal:acct-u:2")
    _create("other:acct-u:3", kind="newsletter")
    invoke_batch(email_handler, sqs, unsub_env["EMAIL_QUEUE_URL"], receive(sqs, unsub_env["EMAIL_QUEUE_URL"]))
    assert len(sent_emails()) == 2  # the newsletter went out; the second renewal did not


def test_forged_and_expired_tokens_are_refused_and_write_nothing(unsub_env: dict[str, str]) -> None:
    r = _create("renewal:acct-u:old", due=datetime.now(UTC) - timedelta(hours=1))
    rem = runtime.store().get(r["id"])
    assert rem is not None
    token = runtime.unsubscribe().token(rem, rem.deliveries["email-0"])
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    status, body = _post(forged)
    assert status == 400 and body["error"] == "invalid_token" and body["field"] == "token"
    status, body = _post("not-a-token")
    assert status == 422
    old = rem.__class__(
        **{**{f: getattr(rem, f) for f in rem.__slots__}, "due_at": rem.due_at - timedelta(days=90)}
    )
    status, body = _post(runtime.unsubscribe().token(old, old.deliveries["email-0"]))
    assert status == 410 and body["error"] == "expired_token"
    assert runtime.suppressions().list("acct-u") == []


def test_without_a_signing_secret_the_route_is_a_503_not_a_500(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSUBSCRIBE_SIGNING_SECRET", raising=False)
    monkeypatch.delenv("UNSUBSCRIBE_SECRET_ARN", raising=False)
    runtime.reset()
    status, body = _post("abc.def")
    assert status == 503 and "secret" in body["message"]
