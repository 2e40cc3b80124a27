"""Issue 28 items 3-5: every time field of the API follows one rule (ISO-8601 text with an offset;
an epoch number, JSON number or numeric string, seconds or milliseconds, is a 422 naming the field),
the tzdata release a local time was resolved under is returned, and a 422 spells a field one way
(its path inside the body or the query, without ``body.``/``query.``) whoever refused it."""

from __future__ import annotations

from typing import Any

import pytest
from reminders.domain.localtime import rules_version

from tests.integration.test_api_time import api, body, rows  # noqa: F401 - the module's API on moto
from tests.support.lambda_runtime import call_api

EPOCHS = [1_900_000_000, 1_900_000_000_000, "1900000000", "1900000000000", 1_900_000_000.5]


@pytest.mark.parametrize("value", EPOCHS)
@pytest.mark.parametrize("field", ["due_at", "deliver_by"])
def test_an_epoch_time_is_422_naming_the_field_when_created(
    api: dict[str, str],  # noqa: F811
    field: str,
    value: Any,
) -> None:
    before = rows()
    extra = {"due_at": value, "due_local": None, "time_zone": None} if field == "due_at" else {field: value}
    status, err = call_api("POST", "/reminders", body(key=f"k-epoch-{field}", **extra))
    assert status == 422, err
    assert err["field"] == field, err
    assert rows() == before


def test_an_epoch_time_is_422_naming_the_field_when_rescheduled_or_listed(api: dict[str, str]) -> None:  # noqa: F811
    _, r = call_api("POST", "/reminders", body(key="k-epoch-patch"))
    status, err = call_api("PATCH", f"/reminders/{r['id']}", {"due_at": 1_900_000_000})
    assert (status, err.get("field")) == (422, "due_at"), err
    status, err = call_api("GET", "/reminders", query={"account_id": "acct-1", "due_before": "1900000000"})
    assert (status, err.get("field")) == (422, "due_before"), err
    _, now = call_api("GET", f"/reminders/{r['id']}")
    assert now["version"] == 1


def test_a_local_time_reminder_returns_the_tzdata_release_it_was_resolved_under(
    api: dict[str, str],  # noqa: F811
) -> None:
    status, r = call_api("POST", "/reminders", body(key="k-tzdata"))
    assert status == 201, r
    assert r["tzdata_release"] == rules_version()
    _, again = call_api("GET", f"/reminders/{r['id']}")
    assert again["tzdata_release"] == rules_version()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"due_local": "2027-13-01T09:00"}, "due_local"),  # the model
        ({"due_local": "1999-06-01T09:00"}, "due_local"),  # refused by our own check
        ({"send_window": {"start": "25:00", "end": "08:00"}}, "send_window.start"),
        ({"deliver_by": "2027-03-28T01:00:00Z"}, "deliver_by"),  # our check
    ],
)
def test_a_422_spells_the_field_one_way_when_the_model_or_our_check_refuses(
    api: dict[str, str],  # noqa: F811
    overrides: dict[str, Any],
    field: str,
) -> None:
    status, err = call_api("POST", "/reminders", body(key="k-spelling", **overrides))
    assert status == 422 and err["field"] == field, err
    assert err["message"].startswith(f"{field}: "), err


def test_a_422_on_a_query_parameter_names_it_without_its_location(api: dict[str, str]) -> None:  # noqa: F811
    status, err = call_api("GET", "/reminders/preview", query={"next_minutes": "0", "account_id": "acct-1"})
    assert (status, err.get("field")) == (422, "next_minutes"), err
