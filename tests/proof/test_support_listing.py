"""The support desk's listing through the real API and handlers on moto: the sparse attention index
holds exactly the reminders that need a person (dead letter, retry cycle), pages with a validated
cursor, and a reminder delivered at its first attempt is never written to it."""

from __future__ import annotations

from typing import Any

import pytest
from reminders_ops.local.receiver import Behaviour

from tests.proof.harness import Harness
from tests.support.aws import table
from tests.support.lambda_runtime import call_api

pytestmark = pytest.mark.usefixtures("no_sleep")


def _list(**query: str) -> tuple[int, Any]:
    return call_api("GET", "/reminders", query={"account_id": "acct-1", **query})


def _item(rid: str) -> dict[str, Any]:
    return dict(table().get_item(Key={"pk": f"R#{rid}", "sk": "R"})["Item"])


def test_listing_finds_dead_letters_and_retries_and_never_a_first_time_delivery(proof: Harness) -> None:
    ok = proof.create("support:acct-1:fine")
    dead = proof.create("support:acct-1:dead")
    retry = proof.create("support:acct-1:retry")
    proof.receiver.script(dead["deliveries"][0]["key"], [Behaviour(410)])
    proof.receiver.script(retry["deliveries"][0]["key"], [Behaviour(429)])
    first = proof.webhook.poll()
    assert first is not None
    assert "nx" not in _item(ok["id"]) and "nxs" not in _item(ok["id"])  # never indexed
    status, page = _list()
    assert status == 200
    assert [(x["id"], x["state"]) for x in page["items"]] == [
        (dead["id"], "dead_letter"),
        (retry["id"], "retryable"),
    ]
    status, page = _list(state="dead_letter")
    assert [x["id"] for x in page["items"]] == [dead["id"]] and page["next_cursor"] is None
    status, page = _list(state="retryable", due_before="2000-01-02T00:00:00Z")
    assert status == 200 and page["items"] == []

    # The retry ends delivered: the reminder leaves the index (the write that recorded it settled it).
    proof.past_next_attempt(retry["id"])
    proof.webhook.reappear(first.messages)
    while proof.webhook.poll() is not None:
        pass
    assert proof.delivery(retry["id"])["state"] == "delivered"
    status, page = _list()
    assert [x["id"] for x in page["items"]] == [dead["id"]]
    assert "nx" not in _item(retry["id"])


def test_listing_pages_with_a_cursor_that_is_validated(proof: Harness) -> None:
    proof.receiver.script("*", [Behaviour(410)] * 3)
    ids = [proof.create(f"support:acct-1:dead-{n}")["id"] for n in range(3)]
    assert proof.webhook.poll() is not None
    status, first = _list(state="dead_letter", limit="2")
    assert status == 200 and len(first["items"]) == 2 and first["next_cursor"]
    status, second = _list(state="dead_letter", limit="2", cursor=first["next_cursor"])
    assert status == 200 and second["next_cursor"] is None
    assert sorted(x["id"] for x in first["items"] + second["items"]) == sorted(ids)

    cursor = first["next_cursor"]
    for bad in ("garbage", cursor[:-3], cursor[:10] + ("A" if cursor[10] != "A" else "B") + cursor[11:]):
        status, err = _list(state="dead_letter", limit="2", cursor=bad)
        assert status == 422 and err["field"] == "cursor", bad
    status, err = _list(state="retryable", cursor=cursor)  # issued for another query
    assert status == 422 and err["field"] == "cursor" and "different" in err["message"]
    status, err = call_api(
        "GET", "/reminders", query={"account_id": "acct-2", "state": "dead_letter", "cursor": cursor}
    )
    assert status == 422


def test_lookup_by_key_still_answers_the_reminder_and_refuses_listing_parameters(proof: Harness) -> None:
    r = proof.create("support:acct-1:lookup")
    status, got = _list(key="support:acct-1:lookup")
    assert status == 200 and got["id"] == r["id"]
    status, err = _list(key="support:acct-1:lookup", state="dead_letter")
    assert status == 422 and err["field"] == "key"
    status, err = _list(state="sent")
    assert status == 422
