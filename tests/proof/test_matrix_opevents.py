"""Failure matrix, operational events (issue 16; MISSION §8): through the real handlers on moto
(the API function, the webhook consumer, the table's real stream read by the local runtime's stream
mapping with OpEventsFunction's filters) and real HTTP to two local receivers: the application's
webhook endpoint and the account's event endpoint (which verifies with that endpoint's own secret).

Cases: the event arrives once when a consumer crashes between recording the outcome and emitting
the event; a duplicated stream record makes one event reminder; an event endpoint that is down gets
its event retried like any webhook; no loop (an event's own delivery is no event); an account without
an event endpoint gets nothing written; endpoint health transitions (items written directly in the
health part's attribute shape) become endpoint.* events.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.domain.opevents import EVENT_KIND
from reminders.handlers.delivery import webhook_handler
from reminders.handlers.opevents import handler as opevents_handler
from reminders.services.opevents import OpEvents
from reminders_ops.bench.opevents import FILTERS as OPEVENTS_FILTERS
from reminders_ops.local.receiver import Behaviour, WebhookReceiver
from reminders_ops.local.streams import DynamoStreamMapping

from tests.conftest import NO_STREAMS
from tests.support.lambda_runtime import FakeContext, call_api, invoke_batch, receive
from tests.support.streams import table_stream

pytestmark = pytest.mark.moto_only(NO_STREAMS)

ACCOUNT = "acct-ev"
#: OpEventsFunction's mapping filters, as infra/opevents.py writes them (tests/infra asserts the same).
FILTERS = OPEVENTS_FILTERS


class _Fn:
    """OpEventsFunction as the mapping invokes it; ``repeat`` invokes every batch that many times
    (the stream's at-least-once delivery: a batch seen again after a retry or a shard hand-over)."""

    name = "OpEventsFunction"

    def __init__(self) -> None:
        self.repeat = 1
        self.invocations = 0
        self.records = 0

    def invoke(self, event: dict[str, Any]) -> Any:
        result: Any = None
        for _ in range(self.repeat):
            self.invocations += 1
            self.records += len(event["Records"])
            result = opevents_handler(event, FakeContext("opevents"))
        return result


@pytest.fixture
def stream(aws: dict[str, str]) -> DynamoStreamMapping:
    return table_stream(
        aws["TABLE_NAME"], _Fn(), view="NEW_AND_OLD_IMAGES", filters=FILTERS, logical_id="OpEventsMapping"
    )


@pytest.fixture
def events_receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver("whsec_" + "A" * 32) as r:  # told the endpoint's secret once it exists
        yield r


def _register(
    events_receiver: WebhookReceiver, account: str = ACCOUNT, types: list[str] | None = None
) -> str:
    status, created = call_api(
        "POST", "/endpoints", {"account_id": account, "url": events_receiver.url + "/events"}
    )
    assert status == 201, created
    events_receiver.use_secret(created["secret"])
    body: dict[str, Any] = {"endpoint_id": created["id"]}
    if types is not None:
        body["event_types"] = types
    status, reg = call_api("PUT", f"/accounts/{account}/event-endpoint", body)
    assert status == 200, reg
    return str(created["secret"])


def _create(receiver: Any, key: str, account: str = ACCOUNT, path: str = "/hooks") -> str:
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": key,
            "account_id": account,
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "webhook", "url": receiver.url + path}],
            "template": {"id": "renewal", "version": 1},
            "data": {"customer_email": "someone@example.com"},
        },
    )
    assert status == 201, body
    return str(body["id"])


def _drain_webhooks(aws: dict[str, str], *, wait_seconds: float = 0.0) -> int:
    """Run the webhook consumer over what the queue holds now (and what becomes visible within
    ``wait_seconds``): how many messages it handled."""
    sqs = boto3.client("sqs")
    handled = 0
    deadline = time.monotonic() + wait_seconds
    while True:
        messages = receive(sqs, aws["WEBHOOK_QUEUE_URL"])
        if messages:
            invoke_batch(webhook_handler, sqs, aws["WEBHOOK_QUEUE_URL"], messages)
            handled += len(messages)
            continue
        if time.monotonic() >= deadline:
            return handled
        time.sleep(0.25)


def _event_reminders(aws: dict[str, str]) -> list[dict[str, Any]]:
    items = boto3.resource("dynamodb").Table(aws["TABLE_NAME"]).scan()["Items"]
    return [i for i in items if str(i["pk"]).startswith("R#") and i.get("kind") == EVENT_KIND]


def _bodies(r: WebhookReceiver) -> dict[str, dict[str, Any]]:
    return {k: json.loads(v) for k, v in r.state.bodies.items()}


def _deliver_and_emit(aws: dict[str, str], stream: DynamoStreamMapping) -> None:
    _drain_webhooks(aws)  # the application's reminders
    stream.poll_once()  # their outcomes → event reminders (due now: queued at once)
    _drain_webhooks(aws)  # the events themselves


# -- end to end: reminder.delivered and reminder.dead_lettered, signed with the endpoint's secret ---
def test_reminder_delivered_and_dead_lettered_events_arrive_signed_with_the_event_endpoints_secret(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    secret = _register(events_receiver)
    ok = _create(receiver, "renewal:ok")
    receiver.script("*", [Behaviour(status=200)])
    _drain_webhooks(aws)
    receiver.script("*", [Behaviour(status=410)])  # permanent: dead-lettered at once
    gone = _create(receiver, "renewal:gone")
    _drain_webhooks(aws)
    stream.poll_once()
    _drain_webhooks(aws)
    bodies = _bodies(events_receiver)
    by_type = {b["type"]: (k, b) for k, b in bodies.items()}
    assert set(by_type) == {"reminder.delivered", "reminder.dead_lettered"}
    key, delivered = by_type["reminder.delivered"]
    assert delivered["data"]["reminder_id"] == ok and delivered["data"]["channel_type"] == "webhook"
    assert events_receiver.signed_by(secret, key)
    key, dead = by_type["reminder.dead_lettered"]
    assert dead["data"]["reminder_id"] == gone and dead["data"]["reason"]
    assert events_receiver.signed_by(secret, key)
    text = json.dumps(bodies)
    assert "someone@example.com" not in text and receiver.url not in text  # no personal data, no URL
    assert events_receiver.snapshot()["duplicates_accepted"] == 0


# -- hostile cases ---------------------------------------------------------------------------------
def test_consumer_crash_between_recording_the_outcome_and_emitting_the_event_still_emits_it_exactly_once(
    aws: dict[str, str],
    receiver: Any,
    events_receiver: WebhookReceiver,
    stream: DynamoStreamMapping,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The events function crashes after it created the event reminder and before it returned (its
    checkpoint): the mapping retries the record, the create is a duplicate by its stable key. The
    webhook consumer itself needs no second step: the outcome's own write is the stream record."""
    _register(events_receiver)
    _create(receiver, "renewal:crash")
    _drain_webhooks(aws)
    real = OpEvents.emit
    crashes = {"left": 1}

    def crash_after_emit(self: OpEvents, events: Any, lookup: Any) -> int:
        n = real(self, events, lookup)
        if crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("instance lost after the event reminder was written")
        return n

    monkeypatch.setattr(OpEvents, "emit", crash_after_emit)
    monkeypatch.setattr("reminders_ops.local.streams.RETRY_DELAY_SECONDS", 0.0)
    stream.poll_once()
    assert crashes["left"] == 0 and stream.stats.retried >= 1
    _drain_webhooks(aws)
    assert len(_event_reminders(aws)) == 1
    assert [b["type"] for b in _bodies(events_receiver).values()] == ["reminder.delivered"]
    assert events_receiver.snapshot()["duplicates_accepted"] == 0
    assert sum(events_receiver.snapshot()["posts"].values()) == 1


def test_duplicated_stream_record_makes_one_event_reminder(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    _register(events_receiver)
    _create(receiver, "renewal:dup")
    _drain_webhooks(aws)
    stream.function.repeat = 3  # type: ignore[attr-defined]
    stream.poll_once()
    _drain_webhooks(aws)
    assert len(_event_reminders(aws)) == 1
    assert events_receiver.snapshot()["duplicates_accepted"] == 0
    assert sum(events_receiver.snapshot()["posts"].values()) == 1


def test_event_endpoint_down_the_event_retries_like_any_webhook(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    _register(events_receiver)
    _create(receiver, "renewal:down")
    _drain_webhooks(aws)
    events_receiver.script("*", [Behaviour(status=503), Behaviour(status=503)])
    stream.poll_once()
    _drain_webhooks(aws, wait_seconds=30)  # the retries come back on the queue after their delay
    (event,) = _event_reminders(aws)
    history = [line.split("|") for line in event["dl"]["webhook-0"]["h"]]
    assert event["dl"]["webhook-0"]["st"] == "delivered"
    assert [h[4] for h in history if h[1] == "a"] == ["r", "r", "dv"]  # retry, retry, delivered
    assert sum(events_receiver.snapshot()["posts"].values()) == 3
    assert events_receiver.snapshot()["duplicates_accepted"] == 0


def test_no_loop_an_events_own_delivery_emits_nothing(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    _register(events_receiver)
    _create(receiver, "renewal:loop")
    _deliver_and_emit(aws, stream)
    assert len(_event_reminders(aws)) == 1
    for _ in range(3):  # the event reminder's own delivered write is on the stream now
        stream.poll_once()
        _drain_webhooks(aws)
    assert len(_event_reminders(aws)) == 1
    assert sum(events_receiver.snapshot()["posts"].values()) == 1


def test_account_without_an_event_endpoint_gets_nothing_written_one_lookup_per_invocation(
    aws: dict[str, str], receiver: Any, stream: DynamoStreamMapping
) -> None:
    reads = {"n": 0}
    store = runtime.event_endpoint_store()
    real_get = store.get

    def counted(account_id: str) -> Any:
        reads["n"] += 1
        return real_get(account_id)

    store.get = counted  # type: ignore[method-assign]
    for i in range(5):
        _create(receiver, f"renewal:plain:{i}", account="acct-plain")
    _drain_webhooks(aws)
    stream.poll_once()
    fn = stream.function
    assert _event_reminders(aws) == []
    assert reads["n"] == fn.invocations  # type: ignore[attr-defined]  # one account, one read per invocation
    assert fn.records >= 5  # type: ignore[attr-defined]


def test_an_event_type_the_account_did_not_ask_for_is_not_sent(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    _register(events_receiver, types=["reminder.dead_lettered"])
    _create(receiver, "renewal:unasked")
    _deliver_and_emit(aws, stream)
    assert _event_reminders(aws) == []


# -- endpoint.* events, from health items in the health part's attribute shape -------------------------
def _health(aws: dict[str, str], endpoint_id: str, st: str, tv: int, why: str = "") -> None:
    item: dict[str, Any] = {
        "pk": {"S": f"E#{endpoint_id}"},
        "sk": {"S": "H"},
        "st": {"S": st},
        "tv": {"N": str(tv)},
        "acct": {"S": ACCOUNT},
        "since": {"S": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")},
    }
    if why:
        item["why"] = {"S": why}
    boto3.client("dynamodb").put_item(TableName=aws["TABLE_NAME"], Item=item)


def test_endpoint_held_resumed_and_disabled_events_arrive_once_per_transition(
    aws: dict[str, str], events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    secret = _register(events_receiver)
    status, other = call_api(
        "POST", "/endpoints", {"account_id": ACCOUNT, "url": events_receiver.url + "/app"}
    )
    assert status == 201
    eid = other["id"]
    _health(aws, eid, "held", 1, "transient")
    _health(aws, eid, "held", 1, "transient")  # rewritten, same state: no event
    _health(aws, eid, "active", 2)
    _health(aws, eid, "held", 3, "transient")
    _health(aws, eid, "disabled", 4, "held_too_long")
    stream.function.repeat = 2  # type: ignore[attr-defined]  # and every record seen twice
    stream.poll_once()
    _drain_webhooks(aws)
    got = sorted((b["data"]["transition"], b["type"]) for b in _bodies(events_receiver).values())
    assert got == [
        (1, "endpoint.held"),
        (2, "endpoint.resumed"),
        (3, "endpoint.held"),
        (4, "endpoint.disabled"),
    ]
    assert all(events_receiver.signed_by(secret, k) for k in events_receiver.state.bodies)
    disabled = next(b for b in _bodies(events_receiver).values() if b["type"] == "endpoint.disabled")
    assert disabled["data"] == {
        "endpoint_id": eid,
        "account_id": ACCOUNT,
        "state": "disabled",
        "previous_state": "held",
        "transition": 4,
        "since": disabled["data"]["since"],
        "reason": "held_too_long",
    }
    assert events_receiver.snapshot()["duplicates_accepted"] == 0


def test_event_endpoint_deleted_after_registration_refuses_the_event_without_blocking_the_stream(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    _register(events_receiver)
    status, reg = call_api("GET", f"/accounts/{ACCOUNT}/event-endpoint")
    assert status == 200
    assert call_api("DELETE", f"/endpoints/{reg['endpoint_id']}")[0] == 200
    _create(receiver, "renewal:orphan")
    _deliver_and_emit(aws, stream)
    assert _event_reminders(aws) == []
    assert stream.stats.retried == 0 and stream.stats.sent_to_dlq == 0  # refused, not retried forever


def test_producers_paused_by_an_operator_still_get_their_events(
    aws: dict[str, str], receiver: Any, events_receiver: WebhookReceiver, stream: DynamoStreamMapping
) -> None:
    """A producers pause refuses clients' creates; the outcome an event reports already happened."""
    _register(events_receiver)
    _create(receiver, "renewal:paused")
    _drain_webhooks(aws)
    runtime.store().set_controls({"producers_paused": True})
    runtime.reminders_service()._controls = None  # read the controls now, not within 15 s
    status, _ = call_api(
        "POST",
        "/reminders",
        {
            "key": "renewal:refused",
            "account_id": ACCOUNT,
            "kind": "renewal",
            "due_at": datetime.now(UTC).isoformat(),
            "channels": [{"type": "webhook", "url": receiver.url + "/hooks"}],
            "template": {"id": "renewal", "version": 1},
            "data": {},
        },
    )
    assert status == 503  # the clients' creates are refused
    stream.poll_once()
    _drain_webhooks(aws)
    assert len(_event_reminders(aws)) == 1
    assert [b["type"] for b in _bodies(events_receiver).values()] == ["reminder.delivered"]
