"""The HTTP API through the real Lambda handler (API Gateway payload v2) on moto: idempotent create,
conflicts, reads, reschedule, cancel, validation that names the field and writes nothing, health and
the OpenAPI document."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.aws import table
from tests.support.lambda_runtime import call_api, receive


def body(**overrides: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "key": "renewal-reminder:acct-1:2026-12-20:webhook",
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": "2030-12-20T09:00:00+01:00",
        "channels": [{"type": "webhook", "url": "https://hooks.example.com/reminders"}],
        "template": {"id": "renewal", "version": 1},
        "data": {"renewal_date": "2026-12-20", "seats": 12},
    }
    b.update(overrides)
    return b


def soon(seconds: float = 60) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def items() -> list[dict[str, Any]]:
    return [i for i in table().scan()["Items"] if str(i["pk"]).startswith("R#")]


def all_queues_empty(env: dict[str, str]) -> bool:
    sqs = boto3.client("sqs")
    urls = [v for k, v in env.items() if k.endswith("_QUEUE_URL") or k.endswith("_DLQ_URL")]
    return all(
        int(
            sqs.get_queue_attributes(
                QueueUrl=u,
                AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
            )["Attributes"][a]
        )
        == 0
        for u in urls
        for a in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed")
    )


def _resolve(host: str, port: int) -> list[str]:
    """No DNS in tests: the one public host the tests use, and nothing else."""
    if host == "hooks.example.com":
        return ["93.184.216.34"]
    raise OSError(f"{host} does not resolve")


@pytest.fixture(scope="module")
def stack() -> Iterator[dict[str, str]]:
    """moto with the stack's resources, once for the module (like ``aws``, which costs a second per
    test); ``api`` empties the table and the queues after each test."""
    from moto import mock_aws
    from reminders import runtime
    from reminders.adapters.destinations import DestinationPolicy

    from tests.support.aws import create_resources

    policy = DestinationPolicy(allowed_networks=["127.0.0.0/8"], allow_http=True, resolver=_resolve)
    with mock_aws(), pytest.MonkeyPatch.context() as mp:
        env = create_resources()
        for k, v in env.items():
            mp.setenv(k, v)
        mp.setattr(runtime, "destination_policy", functools.cache(lambda: policy))
        runtime.reset()
        yield env
        runtime.reset()
    runtime.reset()


@pytest.fixture
def api(stack: dict[str, str]) -> Iterator[dict[str, str]]:
    yield stack
    t = table()
    for item in t.scan()["Items"]:
        t.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
    sqs = boto3.client("sqs")  # PurgeQueue allows one call a minute: receive and delete instead
    for k, url in stack.items():
        if k.endswith(("_QUEUE_URL", "_DLQ_URL")):
            while msgs := receive(sqs, url):
                for m in msgs:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


# -- create -------------------------------------------------------------------------------------------------
def test_create_201_then_200_for_the_same_key(api: dict[str, str]) -> None:
    status, first = call_api("POST", "/reminders", body())
    assert status == 201
    assert first["id"].startswith("rem_") and first["version"] == 1 and first["state"] == "scheduled"
    assert first["due_at"] == "2030-12-20T08:00:00.000000Z"  # stored UTC
    (d,) = first["deliveries"]
    assert d["key"].startswith("dlv_") and d["state"] == "scheduled" and d["attempts"] == 0
    status, again = call_api("POST", "/reminders", body())
    assert status == 200 and again["id"] == first["id"] and again["version"] == 1
    assert len(items()) == 1


def test_a_different_body_under_the_same_key_is_a_409_that_says_so(api: dict[str, str]) -> None:
    call_api("POST", "/reminders", body())
    status, err = call_api("POST", "/reminders", body(data={"renewal_date": "2027-01-01"}))
    assert status == 409
    assert err["error"] == "conflict" and "different body" in err["message"]
    assert "PATCH" in err["message"]  # and says what to do instead
    (item,) = items()
    assert item["data"]["renewal_date"] == "2026-12-20"


def test_keys_are_unique_per_account(api: dict[str, str]) -> None:
    s1, a = call_api("POST", "/reminders", body(account_id="acct-a"))
    s2, b = call_api("POST", "/reminders", body(account_id="acct-b"))
    assert (s1, s2) == (201, 201) and a["id"] != b["id"]
    assert a["deliveries"][0]["key"] != b["deliveries"][0]["key"]
    assert len(items()) == 2


def test_a_reminder_due_now_is_enqueued_at_once(api: dict[str, str]) -> None:
    status, r = call_api("POST", "/reminders", body(due_at=soon(0)))
    assert status == 201 and r["deliveries"][0]["state"] == "queued"
    (m,) = receive(boto3.client("sqs"), api["WEBHOOK_QUEUE_URL"])
    assert json.loads(m["Body"]) == {"reminder_id": r["id"], "channel_id": "webhook-0", "version": 1}


def test_two_channels_two_deliveries(api: dict[str, str]) -> None:
    channels = [
        {"type": "webhook", "url": "https://hooks.example.com/reminders"},
        {"type": "email", "to": "user@example.com"},
    ]
    status, r = call_api("POST", "/reminders", body(channels=channels))
    assert status == 201
    assert [d["channel_id"] for d in r["deliveries"]] == ["webhook-0", "email-0"]
    assert len({d["key"] for d in r["deliveries"]}) == 2


# -- read ---------------------------------------------------------------------------------------------------
def test_get_by_id_and_by_account_and_key(api: dict[str, str]) -> None:
    _, created = call_api("POST", "/reminders", body())
    status, by_id = call_api("GET", f"/reminders/{created['id']}")
    assert status == 200 and by_id == created
    status, by_key = call_api("GET", "/reminders", query={"account_id": "acct-1", "key": body()["key"]})
    assert status == 200 and by_key["id"] == created["id"]
    d = by_id["deliveries"][0]
    for f in ("key", "state", "attempts", "last_error", "next_attempt_at", "history"):
        assert f in d
    assert by_id["template"] == {"id": "renewal", "version": 1}


def test_unknown_reminders_are_404(api: dict[str, str]) -> None:
    status, err = call_api("GET", "/reminders/rem_" + "0" * 32)
    assert status == 404 and err["error"] == "not_found"
    status, _ = call_api("GET", "/reminders", query={"account_id": "acct-1", "key": "nope"})
    assert status == 404
    call_api("POST", "/reminders", body())
    status, _ = call_api("GET", "/reminders", query={"account_id": "acct-other", "key": body()["key"]})
    assert status == 404  # keys are per account
    assert call_api("PATCH", "/reminders/rem_" + "0" * 32, {"due_at": soon()})[0] == 404
    assert call_api("DELETE", "/reminders/rem_" + "0" * 32)[0] == 404


# -- reschedule and cancel -----------------------------------------------------------------------------------
def test_patch_reschedules_with_version_plus_one(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, moved = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": "2031-01-05T10:00:00Z"})
    assert status == 200 and moved["version"] == 2
    assert moved["due_at"] == "2031-01-05T10:00:00.000000Z"
    assert [d["state"] for d in moved["deliveries"]] == ["scheduled"]
    assert moved["deliveries"][0]["history"][-1]["event"] == "reschedule"


def test_patch_into_the_window_enqueues_the_new_version(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body())
    status, moved = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": soon(0)})
    assert status == 200 and moved["deliveries"][0]["state"] == "queued"
    (m,) = receive(boto3.client("sqs"), api["WEBHOOK_QUEUE_URL"])
    assert json.loads(m["Body"])["version"] == 2


def test_delete_cancels_and_answers_each_delivery_then_409(api: dict[str, str]) -> None:
    channels = [
        {"type": "webhook", "url": "https://hooks.example.com/reminders"},
        {"type": "email", "to": "user@example.com"},
    ]
    _, r = call_api("POST", "/reminders", body(channels=channels))
    status, canceled = call_api("DELETE", f"/reminders/{r['id']}")
    assert status == 200
    assert [d["state"] for d in canceled["deliveries"]] == ["canceled", "canceled"]
    assert canceled["state"] == "canceled"
    status, err = call_api("DELETE", f"/reminders/{r['id']}")
    assert status == 409 and "terminal" in err["message"]
    status, err = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": soon()})
    assert status == 409 and "terminal" in err["message"]


# -- validation: 422 naming the field, never a 500, nothing written ------------------------------------------
def _named(resp: dict[str, Any]) -> str:
    """The field a 422 names (Powertools' validation detail, or our own error body)."""
    if "field" in resp:
        return str(resp["field"])
    return ".".join(str(p) for p in resp["detail"][0]["loc"])


BAD = [
    ("unknown field", body(priority="high"), "priority"),
    (
        "unknown nested field",
        body(template={"id": "renewal", "version": 1, "lang": "en"}),
        "template.lang",
    ),
    ("unknown channel field", body(channels=[{"type": "email", "to": "a@example.com", "cc": "x"}]), "cc"),
    ("naive datetime", body(due_at="2030-12-20T09:00:00"), "due_at"),
    ("not a datetime", body(due_at="next tuesday"), "due_at"),
    ("empty channels", body(channels=[]), "channels"),
    ("unknown channel type", body(channels=[{"type": "sms", "to": "+15550100"}]), "channels"),
    ("bad email", body(channels=[{"type": "email", "to": "not-an-address"}]), "to"),
    ("bad url", body(channels=[{"type": "webhook", "url": "not a url at all"}]), "channels.url"),
    ("ftp url", body(channels=[{"type": "webhook", "url": "ftp://hooks.example.com/x"}]), "channels.url"),
    ("private url", body(channels=[{"type": "webhook", "url": "https://10.1.2.3/x"}]), "channels.url"),
    (
        "metadata url",
        body(channels=[{"type": "webhook", "url": "https://169.254.169.254/x"}]),
        "channels.url",
    ),
    ("key with bad chars", body(key="renewal reminder/1"), "key"),
    ("empty key", body(key=""), "key"),
    ("key too long", body(key="k" * 257), "key"),
    ("data over 4 KiB", body(data={"blob": "x" * 4100}), "data"),
    ("data not flat", body(data={"customer": {"name": "A"}}), "data"),
    ("missing field", {k: v for k, v in body().items() if k != "account_id"}, "account_id"),
    ("template version 0", body(template={"id": "renewal", "version": 0}), "template.version"),
    ("wrong type", body(channels="webhook"), "channels"),
]


@pytest.mark.parametrize(("name", "payload", "field"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_422_naming_the_field_and_writes_nothing(
    api: dict[str, str], name: str, payload: dict[str, Any], field: str
) -> None:
    status, resp = call_api("POST", "/reminders", payload)
    assert status == 422, resp
    assert field in _named(resp), resp
    assert items() == []
    assert all_queues_empty(api)


@pytest.mark.parametrize("raw", ["{not json", "[]", "", "null", '"text"', "42", '{"key": 1}'])
def test_malformed_bodies_are_4xx_not_500(api: dict[str, str], raw: str) -> None:
    status, _ = call_api("POST", "/reminders", raw=raw)
    assert 400 <= status < 500
    assert items() == []


def test_bad_path_and_query_parameters_are_422(api: dict[str, str]) -> None:
    assert call_api("GET", "/reminders/not-an-id")[0] == 422
    # Without ``key`` it is the attention listing (issue 18); its own parameters are checked.
    status, resp = call_api("GET", "/reminders", query={"account_id": "acct-1", "limit": "0"})
    assert status == 422 and "limit" in _named(resp)
    status, resp = call_api("GET", "/reminders", query={"key": "k"})
    assert status == 422 and "account_id" in _named(resp)
    status, resp = call_api("PATCH", "/reminders/rem_" + "0" * 32, {"due_at": "2030-01-01T00:00:00"})
    assert status == 422 and "due_at" in _named(resp)
    status, resp = call_api("PATCH", "/reminders/rem_" + "0" * 32, {"due_at": soon(), "kind": "x"})
    assert status == 422 and "kind" in _named(resp)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(body())), value=json_values)
def test_never_a_500_for_any_mangled_field(api: dict[str, str], field: str, value: Any) -> None:
    status, _ = call_api("POST", "/reminders", body(**{field: value}))
    assert status < 500


# -- health and the OpenAPI document -------------------------------------------------------------------------
def test_health(api: dict[str, str]) -> None:
    assert call_api("GET", "/health") == (200, {"status": "ok"})


def test_openapi_document_is_valid_and_lists_reminders(api: dict[str, str]) -> None:
    from openapi_spec_validator import validate

    status, doc = call_api("GET", "/openapi.json")
    assert status == 200
    validate(doc)
    assert doc["openapi"].startswith("3.")
    assert {"/reminders", "/reminders/{reminder_id}", "/health"} <= set(doc["paths"])
    assert {"post", "get"} <= set(doc["paths"]["/reminders"])
    assert {"get", "patch", "delete"} <= set(doc["paths"]["/reminders/{reminder_id}"])
    assert "CreateReminder" in json.dumps(doc["components"])


def test_a_json_array_of_bodies_is_refused_not_half_processed(api: dict[str, str]) -> None:
    status, _ = call_api("POST", "/reminders", raw=json.dumps([body(), body(key="second")]))
    assert status == 422
    assert items() == []
