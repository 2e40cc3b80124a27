"""The account's event endpoint (issue 16): PUT, GET, DELETE /accounts/{account_id}/event-endpoint,
tenant-scoped by the caller's grants; bad input is a 422 naming the field, nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import NO_TRANSACTIONS
from tests.support.lambda_runtime import call_api

OTHER = "arn:aws:sts::111111111111:assumed-role/someone-else/tests"


def _endpoint(receiver: Any, account: str = "acct-reg") -> str:
    status, created = call_api("POST", "/endpoints", {"account_id": account, "url": receiver.url + "/events"})
    assert status == 201, created
    return str(created["id"])


def test_register_read_and_remove_the_event_endpoint(aws: dict[str, str], receiver: Any) -> None:
    eid = _endpoint(receiver)
    assert call_api("GET", "/accounts/acct-reg/event-endpoint")[0] == 404
    status, reg = call_api(
        "PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": eid, "event_types": ["endpoint.held"]}
    )
    assert status == 200 and reg["endpoint_id"] == eid and reg["event_types"] == ["endpoint.held"]
    status, all_types = call_api("PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": eid})
    assert status == 200 and len(all_types["event_types"]) == 5  # none named: all of them
    assert call_api("GET", "/accounts/acct-reg/event-endpoint")[1]["event_types"] == all_types["event_types"]
    assert call_api("DELETE", "/accounts/acct-reg/event-endpoint")[0] == 200
    assert call_api("GET", "/accounts/acct-reg/event-endpoint")[0] == 404
    assert call_api("DELETE", "/accounts/acct-reg/event-endpoint")[0] == 404


def test_another_accounts_endpoint_or_an_unknown_type_is_422_and_nothing_is_written(
    aws: dict[str, str], receiver: Any
) -> None:
    theirs = _endpoint(receiver, account="acct-theirs")
    status, err = call_api("PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": theirs})
    assert status == 422 and err["field"] == "endpoint_id"
    mine = _endpoint(receiver)
    status, err = call_api(
        "PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": mine, "event_types": ["reminder.due"]}
    )
    assert status == 422
    status, err = call_api("PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": "ep_nope"})
    assert status == 422
    assert call_api("GET", "/accounts/acct-reg/event-endpoint")[0] == 404


def test_a_caller_without_a_grant_for_the_account_is_403(aws: dict[str, str], receiver: Any) -> None:
    eid = _endpoint(receiver)
    for method in ("PUT", "GET", "DELETE"):
        status, _ = call_api(
            method,
            "/accounts/acct-reg/event-endpoint",
            {"endpoint_id": eid} if method == "PUT" else None,
            principal=OTHER,
        )
        assert status == 403, method


@pytest.mark.moto_only(NO_TRANSACTIONS)
def test_endpoint_event_about_another_accounts_endpoint_never_goes_to_the_account_the_item_names(
    aws: dict[str, str], receiver: Any, monkeypatch: Any
) -> None:
    """Issue 24 item 1: a health item of another account's endpoint that names this account (written
    by this account's deliveries before the owner was fixed at creation) sends it no event; the
    stream function checks the endpoint's owner without opening any secret (it holds no key)."""
    from datetime import UTC, datetime

    from reminders import runtime
    from reminders.handlers.opevents import events_of

    theirs = _endpoint(receiver, account="acct-theirs")
    mine = _endpoint(receiver)
    assert call_api("PUT", "/accounts/acct-reg/event-endpoint", {"endpoint_id": mine})[0] == 200

    def no_key(*_: Any) -> bytes:
        raise AssertionError("the stream function opened an endpoint secret")

    monkeypatch.setattr(runtime.endpoint_store().sealer, "open", no_key)
    since = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    held = {"sk": "H", "st": "held", "acct": "acct-reg", "tv": 1, "since": since, "why": "failure_ratio"}
    service = runtime.opevents_service()
    foreign = events_of(None, {"pk": f"E#{theirs}", **held})
    assert [e.account_id for e in foreign] == ["acct-reg"]
    assert service.emit(foreign, service.lookups()) == 0
    assert service.emit(events_of(None, {"pk": f"E#{mine}", **held}), service.lookups()) == 1
