"""Review 29: ``If-Match`` (routes/reminders.py ``_if_match``) is a version in ASCII digits; any other
text — a Unicode digit ``str.isdigit`` accepts but ``int`` refuses (superscripts, circled digits),
or one ``int`` reads as another number (Arabic-Indic digits) — is a 422 naming If-Match, never a 5xx,
and nothing is written."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.test_api import api as api
from tests.integration.test_api import body
from tests.integration.test_api import stack as stack
from tests.support.aws import table
from tests.support.lambda_runtime import FakeContext, call_api, http_event


def _patch(rid: str, if_match: str) -> tuple[int, Any]:
    from reminders.handlers.api import handler

    event = http_event("PATCH", f"/reminders/{rid}", {"data": {"seats": 2}})
    event["headers"]["if-match"] = if_match
    resp = handler(event, FakeContext(function_name="api"))
    return resp["statusCode"], json.loads(resp["body"])


@pytest.mark.parametrize(
    "if_match", ["\u00b2", '"\u2460"', "\u0661"], ids=["superscript", "circled", "arabic-indic"]
)
def test_a_correction_answers_422_naming_if_match_when_it_holds_a_non_ascii_digit(
    api: dict[str, str], if_match: str
) -> None:
    _, r = call_api("POST", "/reminders", body())
    before = table().scan()["Items"]
    status, err = _patch(r["id"], if_match)
    assert status == 422 and err["field"] == "If-Match", (status, err)
    assert table().scan()["Items"] == before
