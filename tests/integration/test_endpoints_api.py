"""Webhook endpoints through the API on moto (DynamoDB, KMS, SQS) and a real local receiver: their
own secret shown once and stored envelope-encrypted, rotation signing with old and new, delete
refused while in use, the SSRF guard at creation, disabled endpoints, bare URLs through the implicit
endpoint."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.handlers.delivery import webhook_handler

from tests.conftest import NO_TRANSACTIONS
from tests.support.lambda_runtime import call_api, invoke_batch, receive


def _endpoint(url: str, **extra: Any) -> dict[str, Any]:
    status, body = call_api("POST", "/endpoints", {"account_id": "acct-1", "url": url + "/hooks", **extra})
    assert status == 201, body
    return body


def _reminder(channel: dict[str, Any], key: str = "renewal:acct-1:1") -> dict[str, Any]:
    body = {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat(),
        "channels": [channel],
        "template": {"id": "renewal", "version": 1},
        "data": {"plan": "pro"},
    }
    status, payload = call_api("POST", "/reminders", body)
    assert status == 201, payload
    return payload


def _drain(aws: dict[str, str]) -> dict[str, Any]:
    sqs = boto3.client("sqs")
    msgs = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
    assert msgs
    return invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], msgs)


def test_endpoint_secret_is_shown_once_and_stored_encrypted(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url, rate_per_second=5, description="billing")
    secret = created["secret"]
    assert secret.startswith("whsec_") and created["id"].startswith("ep_")
    status, got = call_api("GET", f"/endpoints/{created['id']}")
    assert status == 200 and "secret" not in got and secret not in json.dumps(got)
    assert got["rate_per_second"] == 5 and got["signing_keys"][0]["expires_at"] is None
    raw = boto3.client("dynamodb").get_item(
        TableName=aws["TABLE_NAME"], Key={"pk": {"S": f"E#{created['id']}"}, "sk": {"S": "E"}}
    )["Item"]
    stored = repr(raw).encode()
    assert secret.encode() not in stored and secret[6:].encode() not in stored
    assert "dk" in raw and "B" in raw["dk"]  # the KMS-wrapped data key


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_endpoint_channel_is_signed_with_the_endpoint_secret(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url)
    receiver.use_secret(created["secret"])
    reminder = _reminder({"type": "webhook", "endpoint_id": created["id"]})
    assert reminder["deliveries"][0]["destination"] == created["id"]
    _drain(aws)
    key = reminder["deliveries"][0]["key"]
    assert receiver.state.accepted[key] == 1 and receiver.state.rejected_signatures == 0
    assert not receiver.signed_by(DEV_WEBHOOK_SECRET, key)  # not the shared key


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_rotation_signs_with_old_and_new_until_expiry(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url)
    old = created["secret"]
    status, rotated = call_api(
        "POST", f"/endpoints/{created['id']}/rotate-secret", {"expires_in_seconds": 3600}
    )
    assert status == 200, rotated
    new = rotated["secret"]
    assert new != old and len(rotated["signing_keys"]) == 2
    assert [k["expires_at"] is None for k in rotated["signing_keys"]] == [True, False]
    receiver.use_secret(old)  # a receiver not yet told about the new secret still verifies
    reminder = _reminder({"type": "webhook", "endpoint_id": created["id"]})
    _drain(aws)
    key = reminder["deliveries"][0]["key"]
    assert receiver.state.accepted[key] == 1
    sig = receiver.state.signatures[key][-1]
    assert len(sig.split(" ")) == 2
    assert receiver.signed_by(old, key) and receiver.signed_by(new, key)


def test_rotate_secret_default_overlap_is_24_hours(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url)
    status, rotated = call_api("POST", f"/endpoints/{created['id']}/rotate-secret")
    assert status == 200, rotated
    expiry = datetime.fromisoformat(rotated["signing_keys"][1]["expires_at"].replace("Z", "+00:00"))
    assert timedelta(hours=23, minutes=59) < expiry - datetime.now(UTC) <= timedelta(hours=24)


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_delete_is_refused_while_deliveries_use_the_endpoint(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url)
    receiver.use_secret(created["secret"])
    _reminder({"type": "webhook", "endpoint_id": created["id"]})
    status, body = call_api("DELETE", f"/endpoints/{created['id']}")
    assert status == 409 and body["open_deliveries"] == 1, body
    _drain(aws)  # delivered: terminal
    status, body = call_api("DELETE", f"/endpoints/{created['id']}")
    assert status == 200, body
    assert call_api("GET", f"/endpoints/{created['id']}")[0] == 404


def test_ssrf_guard_at_endpoint_creation_and_change(aws: dict[str, str], receiver: Any) -> None:
    status, body = call_api("POST", "/endpoints", {"account_id": "acct-1", "url": "https://10.0.0.7/x"})
    assert status == 422 and body["field"] == "url", body
    created = _endpoint(receiver.url)
    status, body = call_api("PATCH", f"/endpoints/{created['id']}", {"url": "https://169.254.169.254/"})
    assert status == 422 and body["field"] == "url", body


def test_unknown_endpoint_in_a_channel_is_a_422_and_nothing_is_written(aws: dict[str, str]) -> None:
    body = {
        "key": "k1",
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": datetime.now(UTC).isoformat(),
        "channels": [{"type": "webhook", "endpoint_id": "ep_" + "0" * 32}],
        "template": {"id": "renewal", "version": 1},
    }
    status, payload = call_api("POST", "/reminders", body)
    assert status == 422 and payload["field"] == "channels.endpoint_id", payload
    both = {
        **body,
        "channels": [{"type": "webhook", "endpoint_id": "ep_" + "0" * 32, "url": "https://a.example"}],
    }
    assert call_api("POST", "/reminders", both)[0] == 422
    assert call_api("GET", "/reminders", query={"account_id": "acct-1", "key": "k1"})[0] == 404


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_disabled_endpoint_dead_letters_endpoint_disabled(aws: dict[str, str], receiver: Any) -> None:
    created = _endpoint(receiver.url)
    status, patched = call_api(
        "PATCH", f"/endpoints/{created['id']}", {"enabled": False, "rate_per_second": 3}
    )
    assert status == 200 and patched["enabled"] is False and patched["rate_per_second"] == 3
    reminder = _reminder({"type": "webhook", "endpoint_id": created["id"]})
    _drain(aws)
    _, got = call_api("GET", f"/reminders/{reminder['id']}")
    d = got["deliveries"][0]
    assert d["state"] == "dead_letter" and d["last_error"]["detail"] == "endpoint_disabled", d
    assert receiver.state.posts == {}
    status, cleared = call_api("PATCH", f"/endpoints/{created['id']}", {"rate_per_second": None})
    assert status == 200 and cleared["rate_per_second"] is None


def test_bare_url_signs_with_its_implicit_endpoint_once_registered(
    aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sender trusts its lookup for LOOKUP_CACHE_SECONDS (5 s): here it looks again at once.
    monkeypatch.setattr("reminders.services.endpoints.LOOKUP_CACHE_SECONDS", 0.0)
    first = _reminder({"type": "webhook", "url": receiver.url + "/a"}, key="k-before")
    _drain(aws)  # no endpoint for the origin yet: the stack's channel secret signs
    assert receiver.state.accepted[first["deliveries"][0]["key"]] == 1
    created = _endpoint(receiver.url, bare_urls=True)
    assert (
        call_api(
            "POST", "/endpoints", {"account_id": "acct-1", "url": receiver.url + "/b", "bare_urls": True}
        )[0]
        == 409
    )  # one implicit endpoint per account and origin
    receiver.use_secret(created["secret"])
    second = _reminder({"type": "webhook", "url": receiver.url + "/other-path"}, key="k-after")
    _drain(aws)
    assert receiver.state.accepted[second["deliveries"][0]["key"]] == 1
    assert receiver.state.rejected_signatures == 0


@pytest.mark.parametrize("body", [{"url": "ftp://x.example/"}, {"enabled": "maybe"}, {"nope": 1}, [1]])
def test_bad_endpoint_patch_is_a_422(aws: dict[str, str], receiver: Any, body: Any) -> None:
    created = _endpoint(receiver.url)
    status, payload = call_api("PATCH", f"/endpoints/{created['id']}", body)
    assert status == 422, payload


def test_a_rate_too_small_to_store_is_a_422_naming_it_when_creating_or_changing_an_endpoint(
    aws: dict[str, str], receiver: Any
) -> None:
    """Found by the stateful fuzz run: ``rate_per_second: 5e-324`` is > 0, and DynamoDB cannot hold
    it (magnitude under 1e-130): the write raised, a 500."""
    created = _endpoint(receiver.url)
    # a Python float that passes gt=0 (the JSON literal would be one too: 5e-324)
    status, err = call_api("PATCH", f"/endpoints/{created['id']}", {"rate_per_second": 5e-324})
    assert status == 422 and err["field"].endswith("rate_per_second"), err
    body = {"account_id": "acct-1", "url": receiver.url + "/b", "rate_per_second": 5e-324}
    status, err = call_api("POST", "/endpoints", body)
    assert status == 422 and err["field"].endswith("rate_per_second"), err
    status, got = call_api("GET", f"/endpoints/{created['id']}")
    assert status == 200 and got["rate_per_second"] is None
