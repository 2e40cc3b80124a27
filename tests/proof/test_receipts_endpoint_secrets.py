"""Receiver receipts are verified with the endpoint's own secrets (issues 15 and 19 together): a
receipt for a delivery sent through an endpoint verifies with that endpoint's secret — during a
rotation's overlap with the old or the new — and not with the stack's channel secret or another
endpoint's; a bare-URL delivery verifies with its account's implicit endpoint (issue 24), never the
channel secret."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET

from tests.conftest import NO_TRANSACTIONS
from tests.integration.test_endpoints_api import _drain, _endpoint, _reminder
from tests.proof.test_matrix_receipts import _body, _post, _receipt_items


def _delivered_through(
    aws: dict[str, str], receiver: Any, endpoint: dict[str, Any], key: str
) -> tuple[str, str]:
    r = _reminder({"type": "webhook", "endpoint_id": endpoint["id"]}, key=key)
    receiver.use_secret(endpoint["secret"])
    _drain(aws)
    return r["id"], r["deliveries"][0]["key"]


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_a_receipt_verifies_with_its_endpoints_secret_not_the_channel_secret(
    aws: dict[str, str], receiver: Any
) -> None:
    ep = _endpoint(receiver.url)
    rid, key = _delivered_through(aws, receiver, ep, "renewal:acct-1:ep-receipt")
    now = datetime.now(UTC)
    status, err = _post(_body(rid, key, "evt-1", "processed", now), secret=DEV_WEBHOOK_SECRET)
    assert status == 401, err  # the stack's channel secret does not sign this endpoint's receipts
    other = _endpoint(receiver.url + "/other")
    status, err = _post(_body(rid, key, "evt-1", "processed", now), secret=other["secret"])
    assert status == 401, err  # nor does another endpoint's
    assert _receipt_items(aws) == []
    status, ok = _post(_body(rid, key, "evt-1", "processed", now), secret=ep["secret"])
    assert status == 202, ok


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_during_a_rotation_a_receipt_verifies_with_the_old_or_the_new_secret(
    aws: dict[str, str], receiver: Any
) -> None:
    from tests.support.lambda_runtime import call_api

    ep = _endpoint(receiver.url)
    rid, key = _delivered_through(aws, receiver, ep, "renewal:acct-1:ep-rotation")
    status, rotated = call_api("POST", f"/endpoints/{ep['id']}/rotate-secret", {"expires_in_seconds": 3600})
    assert status == 200, rotated
    now = datetime.now(UTC)
    assert _post(_body(rid, key, "evt-old", "processed", now), secret=ep["secret"])[0] == 202
    assert _post(_body(rid, key, "evt-new", "processed", now), secret=rotated["secret"])[0] == 202


def test_a_bare_url_delivery_verifies_with_its_accounts_implicit_endpoint_not_the_channel_secret(
    aws: dict[str, str], receiver: Any
) -> None:
    from reminders import runtime
    from reminders.domain.endpoints import implicit_endpoint_id

    url = receiver.url + "/hooks"
    r = _reminder({"type": "webhook", "url": url}, key="renewal:acct-1:bare-receipt")
    _drain(aws)
    rid, key = r["id"], r["deliveries"][0]["key"]
    now = datetime.now(UTC)
    # Issue 24: the stack's channel secret (every tenant's receivers held it) proves nothing.
    assert _post(_body(rid, key, "evt-1", "processed", now), secret=DEV_WEBHOOK_SECRET)[0] == 401
    implicit = runtime.endpoint_store().get(implicit_endpoint_id("acct-1", url))
    assert implicit is not None and implicit.implicit
    secret = implicit.signing_secrets(now)[0]
    assert _post(_body(rid, key, "evt-1", "processed", now), secret=secret)[0] == 202


def test_a_receipt_naming_an_unknown_reminder_is_401_and_writes_nothing(aws: dict[str, str]) -> None:
    status, err = _post(_body("rem_" + "0" * 32, "dlv_" + "0" * 32, "evt-1", "processed", datetime.now(UTC)))
    assert status == 401, err
    assert _receipt_items(aws) == []
