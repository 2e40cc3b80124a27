"""A delivery's write moves its reminder's watch entry back to the delivery's next instant when the
entry sits later (domain/watch.py: after a park, a retry or a deferral comes sooner), on DynamoDB
(moto: ``ReturnValues=ALL_NEW`` and the conditional move) as on the in-memory twin; a dispatch entry
and a later next instant leave it where it is."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from reminders import runtime
from reminders.domain.models import Attempt, add_history
from reminders.domain.schedule import iso, sk_due, watch_key
from reminders.domain.states import DeliveryState

from tests.support.lambda_runtime import call_api


def _create(key: str) -> str:
    body = {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + timedelta(minutes=20)).isoformat(),
        "channels": [{"type": "email", "to": "user@example.com"}],
        "template": {"id": "renewal", "version": 1},
    }
    status, created = call_api("POST", "/reminders", body)
    assert status == 201, created
    return str(created["id"])


def _retry_in(rid: str, seconds: float) -> str:
    """Write email-0 as retrying ``seconds`` from now; the stored entry's due time after it."""
    store = runtime.store()
    r = store.get(rid)
    assert r is not None
    d = r.deliveries["email-0"]
    now = datetime.now(UTC)
    line = Attempt(at=iso(now), event="attempt", outcome="transient", status=503, decision="retry")
    retrying = replace(
        d,
        state=DeliveryState.RETRYABLE,
        attempts=1,
        next_attempt_at=iso(now + timedelta(seconds=seconds)),
        **add_history(d, line),
    )
    assert store.save_delivery(rid, retrying, d.rev)
    item = store.table.get_item(Key={"pk": f"R#{rid}", "sk": "R"})["Item"]
    return sk_due(str(item["gsk"])) + ("|watch" if item["w"] else "")


def test_a_retry_sooner_than_its_watch_entry_moves_the_entry_back_on_dynamodb(aws: dict[str, str]) -> None:
    rid = _create("pull:1")
    r = runtime.store().get(rid)
    assert r is not None
    far = datetime.now(UTC) + timedelta(hours=1)
    assert runtime.store().move_index(rid, watch_key(rid, r.shard, far, r.account_id))
    moved = _retry_in(rid, 30)
    assert moved.endswith("|watch") and moved < iso(far)
    assert abs(datetime.fromisoformat(moved.split("|")[0]) - datetime.now(UTC)) < timedelta(seconds=60)


def test_a_dispatch_entry_or_a_later_next_instant_stays_where_it_is_on_dynamodb(aws: dict[str, str]) -> None:
    rid = _create("pull:2")
    r = runtime.store().get(rid)
    assert r is not None and r.index_sort_key is not None
    assert _retry_in(rid, 30) == sk_due(r.index_sort_key)  # the dispatcher's own entry: not a watch entry
    soon = datetime.now(UTC) + timedelta(minutes=5)
    assert runtime.store().move_index(rid, watch_key(rid, r.shard, soon, r.account_id))
    assert _retry_in(rid, 4 * 3600) == iso(soon) + "|watch"  # later: the watchdog moves it forward
