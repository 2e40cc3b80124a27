"""The support desk's API on moto through the real handler: PATCH corrections under If-Match
(412 stale, optional), ETag, field validation; the attention listing; the preview."""

from __future__ import annotations

import json
from typing import Any

from tests.integration.test_api import api as api
from tests.integration.test_api import body, soon
from tests.integration.test_api import stack as stack
from tests.support.aws import table
from tests.support.lambda_runtime import FakeContext, call_api, http_event


def patch(rid: str, payload: Any, if_match: str | None = None) -> tuple[int, Any, dict[str, str]]:
    from reminders.handlers.api import handler

    event = http_event("PATCH", f"/reminders/{rid}", payload)
    if if_match is not None:
        event["headers"]["if-match"] = if_match
    resp = handler(event, FakeContext(function_name="api"))
    return resp["statusCode"], json.loads(resp["body"]), resp.get("headers") or {}


def test_patch_corrects_destination_template_and_data_under_if_match(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, out, headers = patch(
        r["id"],
        {
            "channels": {"webhook-0": {"url": "https://hooks.example.com/corrected"}},
            "template": {"version": 2},
            "data": {"seats": 13},
        },
        if_match='"1"',
    )
    assert status == 200, out
    assert out["version"] == 2 and headers["ETag"] == '"2"'
    assert out["deliveries"][0]["destination"] == "https://hooks.example.com/corrected"
    assert out["template"] == {"id": "renewal", "version": 2} and out["data"] == {"seats": 13}
    line = out["deliveries"][0]["history"][-1]
    assert (line["event"], line["detail"]) == ("correct", "destination,template.version,data")


def test_patch_with_a_stale_if_match_is_412_and_writes_nothing(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    patch(r["id"], {"data": {"seats": 1}})
    before = table().scan()["Items"]
    status, err, _ = patch(r["id"], {"data": {"seats": 2}}, if_match="1")
    assert status == 412 and err["error"] == "precondition_failed" and err["field"] == "If-Match"
    assert table().scan()["Items"] == before


def test_patch_without_if_match_applies_to_the_current_version(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, out, _ = patch(r["id"], {"due_at": soon(3600)})
    assert status == 200 and out["version"] == 2


def test_patch_with_a_malformed_if_match_or_nothing_to_change_is_422(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, err, _ = patch(r["id"], {"data": {"seats": 2}}, if_match="version-one")
    assert status == 422 and err["field"] == "If-Match"
    status, err, _ = patch(r["id"], {})
    assert status == 422 and err["field"] == "body"


def test_patch_with_a_bad_destination_names_the_field(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, err, _ = patch(r["id"], {"channels": {"webhook-0": {"to": "not-an-address"}}})
    assert status == 422 and err["field"].startswith("channels")
    status, err, _ = patch(r["id"], {"channels": {"webhook-0": {"to": "user@example.com"}}})
    assert status == 422 and err["field"] == "channels" and "webhook channel" in err["message"]
    status, err, _ = patch(r["id"], {"channels": {"sms-0": {"to": "user@example.com"}}})
    assert status == 422
    status, err, _ = patch(r["id"], {"channels": {"webhook-0": {"url": "http://10.0.0.1/x"}}})
    assert status == 422
    assert len([i for i in table().scan()["Items"] if i["pk"].startswith("R#")]) == 1
    status, out = call_api("GET", f"/reminders/{r['id']}")
    assert out["version"] == 1


def test_get_answers_the_version_as_etag(api: dict[str, str]) -> None:
    from reminders.handlers.api import handler

    _, r = call_api("POST", "/reminders", body())
    resp = handler(http_event("GET", f"/reminders/{r['id']}"), FakeContext(function_name="api"))
    assert resp["headers"]["ETag"] == '"1"'
