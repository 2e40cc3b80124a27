"""Local time, send windows and deadlines through the real API handler on moto (DynamoDB stores
them; the API returns wall time, zone and instant), and bad time input: a 422 naming the field,
nothing written."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders import runtime

from tests.support.aws import table
from tests.support.lambda_runtime import call_api


def body(**overrides: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "key": "renewal-reminder:acct-1:2027-03-28:webhook",
        "account_id": "acct-1",
        "kind": "renewal",
        "due_local": "2027-03-28T02:30",
        "time_zone": "Europe/Berlin",
        "channels": [{"type": "webhook", "url": "https://hooks.example.com/reminders"}],
        "template": {"id": "renewal", "version": 1},
    }
    b.update(overrides)
    return {k: v for k, v in b.items() if v is not None}


def rows() -> int:
    return sum(1 for i in table().scan(ProjectionExpression="pk")["Items"] if str(i["pk"]).startswith("R#"))


@pytest.fixture(scope="module")
def api() -> Iterator[dict[str, str]]:
    from moto import mock_aws
    from reminders.adapters.destinations import DestinationPolicy

    from tests.support.aws import create_resources

    def resolve(host: str, port: int) -> list[str]:  # no DNS in tests
        return ["93.184.216.34"]

    policy = DestinationPolicy(allowed_networks=["127.0.0.0/8"], allow_http=True, resolver=resolve)
    with mock_aws(), pytest.MonkeyPatch.context() as mp:
        env = create_resources()
        for k, v in env.items():
            mp.setenv(k, v)
        mp.setattr(runtime, "destination_policy", functools.cache(lambda: policy))
        runtime.reset()
        yield env
        runtime.reset()


def test_a_local_time_create_returns_wall_time_zone_and_instant(api: dict[str, str]) -> None:
    window = {"start": "08:00", "end": "21:00"}
    status, r = call_api("POST", "/reminders", body(send_window=window, deliver_by="2027-03-29T00:00:00Z"))
    assert status == 201, r
    assert r["due_at"] == "2027-03-28T01:30:00.000000Z"  # inside the gap: the offset before it
    assert (r["due_local"], r["time_zone"]) == ("2027-03-28T02:30", "Europe/Berlin")
    assert r["send_window"] == window and r["deliver_by"] == "2027-03-29T00:00:00.000000Z"
    status, again = call_api("GET", f"/reminders/{r['id']}")
    assert status == 200 and again["due_local"] == "2027-03-28T02:30" and again["send_window"] == window
    status, same = call_api("POST", "/reminders", body(send_window=window, deliver_by="2027-03-29T00:00:00Z"))
    assert status == 200 and same["id"] == r["id"]  # idempotent create


def test_a_reschedule_in_local_time_keeps_the_zone_and_reads_the_overlap_first(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body(key="k-overlap"))
    status, moved = call_api("PATCH", f"/reminders/{r['id']}", {"due_local": "2027-10-31T02:30"})
    assert status == 200, moved
    assert moved["due_at"] == "2027-10-31T00:30:00.000000Z" and moved["time_zone"] == "Europe/Berlin"
    assert moved["version"] == 2
    status, moved = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": "2027-11-01T08:00:00Z"})
    assert status == 200 and moved["due_local"] is None and moved["time_zone"] == "Europe/Berlin"


def test_old_style_reminders_read_without_the_new_fields(api: dict[str, str]) -> None:
    due = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    status, r = call_api(
        "POST", "/reminders", body(key="k-plain", due_local=None, time_zone=None, due_at=due)
    )
    assert status == 201, r
    assert (r["due_local"], r["time_zone"], r["send_window"], r["deliver_by"]) == (None, None, None, None)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"time_zone": "Mars/Olympus_Mons"}, "time_zone"),
        ({"time_zone": "../../etc/passwd"}, "time_zone"),
        ({"time_zone": None}, "time_zone"),
        ({"due_local": "2027-13-01T09:00"}, "due_local"),
        ({"due_local": "2027-03-28T09:00+01:00"}, "due_local"),
        ({"due_at": "2027-03-28T09:00:00Z"}, "due_at"),  # both
        ({"due_local": None}, "due_at"),  # neither
        ({"due_local": "9999-12-31T23:59", "time_zone": "America/Los_Angeles"}, "due_local"),
        ({"due_local": "1999-06-01T09:00"}, "due_local"),
        ({"send_window": {"start": "08:00", "end": "08:00"}}, "send_window"),
        ({"send_window": {"start": "25:00", "end": "08:00"}}, "send_window.start"),
        ({"send_window": {"start": "08:00"}}, "send_window.end"),
        ({"send_window": {"start": "08:00", "end": "21:00", "tz": "UTC"}}, "send_window.tz"),
        ({"deliver_by": "2027-03-28T01:00:00Z"}, "deliver_by"),  # before the due time
        ({"deliver_by": "2027-03-29T00:00:00"}, "deliver_by"),  # naive
    ],
)
def test_bad_time_input_is_422_naming_the_field_and_writes_nothing(
    api: dict[str, str], overrides: dict[str, Any], field: str
) -> None:
    before = rows()
    status, err = call_api("POST", "/reminders", body(key="k-bad", **overrides))
    assert status == 422, err
    names = err.get("field") == field or any(
        ".".join(str(p) for p in d.get("loc", [])[1:]) == field for d in err.get("detail") or []
    )
    assert names, err
    assert rows() == before


def test_a_bad_local_reschedule_is_422_and_changes_nothing(api: dict[str, str]) -> None:
    _, r = call_api("POST", "/reminders", body(key="k-resched"))
    for patch, field in [
        ({"due_local": "2027-04-01T09:00", "time_zone": "Nowhere/Else"}, "time_zone"),
        ({"due_local": "2027-04-01T09:00", "due_at": "2027-04-01T09:00:00Z"}, "due_at"),
        ({}, "body"),
    ]:
        status, err = call_api("PATCH", f"/reminders/{r['id']}", patch)
        assert status == 422 and field in (
            err.get("field"),
            *[".".join(map(str, d["loc"][1:])) for d in err.get("detail") or []],
        ), err
    _, now = call_api("GET", f"/reminders/{r['id']}")
    assert now["version"] == 1 and now["due_at"] == r["due_at"]
