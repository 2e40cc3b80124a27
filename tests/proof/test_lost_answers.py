"""Issue 25 item 5: an API write that landed but whose answer was lost (botocore retried the
conditional write and the retry failed its own condition) answers what it did: the stored
correction, the cancellation, the rotated secret, the created or deleted endpoint; never 412, 409 or
404 for a write that is there, and never a second write.

Each case runs twice: on the in-memory world (the store twins' lost-answer fault mode) and on moto
behind the fault proxy (functions/reminders_ops/proof/faultproxy.py), which forwards the write and drops its
response, so the project's real botocore client retries it for real."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders.adapters.clients import make_client
from reminders.adapters.clock import SystemClock
from reminders.adapters.dynamodb import DynamoReminderStore
from reminders.adapters.endpoints_store import DynamoEndpointStore, MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.suppression import DynamoSuppressionList, MemorySuppressionList
from reminders.adapters.templates_store import DynamoTemplateStore, MemoryTemplateStore
from reminders.domain.corrections import Data
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.services.endpoints import Endpoints, NewEndpoint
from reminders.services.intents import ChannelSpec, NewReminder, Reminders
from reminders.services.templates import Templates, VersionConflictError
from reminders_ops.proof.faultproxy import FaultProxy
from reminders_ops.world import InMemoryWorld

from tests.unit.fakes import WEBHOOK_URL, RecordingTelemetry

#: The DynamoDB operation each store write is.
OPERATION = {
    "save_reminder": "UpdateItem",
    "save": "UpdateItem",
    "put_new": "PutItem",
    "delete": "DeleteItem",
}


@dataclass
class Side:
    name: str
    reminders: Reminders
    endpoints: Endpoints
    lose: Callable[[str, str], None]  # (store "reminders" | "endpoints", write): lose its next answer
    lost: Callable[[], int]  # how many answers were lost so far
    raw: Callable[[str], dict[str, Any]]  # the stored reminder item, as the store holds it
    suppressions: Any = None  # the account suppression list on the same store
    templates: Any = None  # the account template versions (services/templates.py) on the same store

    def new(self, key: str, *, due_in: float = 86400.0) -> NewReminder:
        return NewReminder(
            account_id="acct-1",
            key=f"{key}:{uuid.uuid4().hex}",
            kind="renewal",
            due_at=datetime.now(UTC) + timedelta(seconds=due_in),
            channels=(ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL),),
            template_id="renewal",
            template_version=1,
            data={"plan": "pro"},
        )


@pytest.fixture(scope="module")
def moto_server() -> Iterator[int]:
    from moto.server import ThreadedMotoServer
    from reminders_ops.bench.sim.embedded import create_stack_resources
    from reminders_ops.local.faithful import faithful_moto

    faithful_moto()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    saved = dict(os.environ)
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server.get_host_and_port()[1]
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    try:
        create_stack_resources()
        del os.environ["AWS_ENDPOINT_URL"]
        yield port
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)


def _memory() -> Side:
    store = MemoryReminderStore()
    endpoint_store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
    template_store = MemoryTemplateStore()
    world = InMemoryWorld.build(clock=SystemClock(), telemetry=RecordingTelemetry(), store=store, shards=1)
    before = {"n": 0}

    def lose(which: str, write: str) -> None:
        before["n"] += 1
        {"reminders": store, "endpoints": endpoint_store, "templates": template_store}[
            which
        ].lose_next_answer(write)

    def lost() -> int:
        left = sum(
            sum(s.lost_answers.values())
            for s in (store, endpoint_store, template_store)
            if hasattr(s, "lost_answers")
        )
        return before["n"] - left

    return Side(
        "memory",
        world.reminders(),
        Endpoints(store=endpoint_store, reminders=store, clock=SystemClock(), telemetry=world.telemetry),
        lose,
        lost,
        lambda rid: store.items[rid],
        MemorySuppressionList(),
        Templates(store=template_store, clock=SystemClock()),
    )


@pytest.fixture(params=["memory", "moto"])
def side(request: pytest.FixtureRequest) -> Iterator[Side]:
    if request.param == "memory":
        yield _memory()
        return
    port: int = request.getfixturevalue("moto_server")
    with FaultProxy(port, rates={}, seed=1, services=frozenset({"dynamodb"})) as proxy:
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        try:
            client = make_client("dynamodb")
        finally:
            del os.environ["AWS_ENDPOINT_URL"]
        store = DynamoReminderStore(client, table_name="reminders", clock_reference=False)
        endpoint_store = DynamoEndpointStore(client, "reminders", SecretSealer(LocalKeyWrapper()))
        world = InMemoryWorld.build(
            clock=SystemClock(), telemetry=RecordingTelemetry(), store=store, shards=1
        )

        def lose(which: str, write: str) -> None:
            proxy.operations = frozenset({OPERATION[write]})
            proxy.forced.append("drop_after_apply")

        def lost() -> int:
            return sum(1 for e in proxy.stats.exchanges if e.fault == "drop_after_apply")

        def raw(rid: str) -> dict[str, Any]:
            item = store._get({"pk": {"S": f"R#{rid}"}, "sk": {"S": "R"}})
            assert item is not None
            return item

        yield Side(
            "moto",
            world.reminders(),
            Endpoints(store=endpoint_store, reminders=store, clock=SystemClock(), telemetry=world.telemetry),
            lose,
            lost,
            raw,
            DynamoSuppressionList(client, "reminders"),
            Templates(store=DynamoTemplateStore(client, "reminders"), clock=SystemClock()),
        )


# -- reminders -----------------------------------------------------------------------------------
def test_patch_whose_answer_was_lost_answers_the_stored_correction_not_412(side: Side) -> None:
    r, _ = side.reminders.create(side.new("patch"))
    side.lose("reminders", "save_reminder")
    data = {"plan": "enterprise", "seats": 12, "price": 9.99, "tags": ["a", 2], "limits": {"x": -1.5e-3}}
    updated = side.reminders.correct(r.id, [Data(data)], if_match=1)
    assert side.lost() == 1, "the answer was not lost"
    assert updated.version == 2 and updated.data == data
    stored = side.reminders.get(r.id)
    assert stored.version == 2 and stored.data == data
    assert [h.event for h in stored.deliveries["webhook-0"].history].count("correct") == 1


def test_reschedule_whose_answer_was_lost_is_applied_once(side: Side) -> None:
    r, _ = side.reminders.create(side.new("reschedule"))
    due = r.due_at + timedelta(hours=1)
    side.lose("reminders", "save_reminder")
    updated = side.reminders.reschedule(r.id, due)
    assert side.lost() == 1, "the answer was not lost"
    assert updated.version == 2 and updated.due_at == due
    stored = side.reminders.get(r.id)
    assert stored.version == 2 and stored.due_at == due
    assert [h.event for h in stored.deliveries["webhook-0"].history].count("reschedule") == 1


def test_delete_whose_answer_was_lost_answers_cancelled_not_409(side: Side) -> None:
    r, _ = side.reminders.create(side.new("cancel"))
    side.lose("reminders", "save_reminder")
    canceled = side.reminders.cancel(r.id)
    assert side.lost() == 1, "the answer was not lost"
    assert canceled.deliveries["webhook-0"].state is DeliveryState.CANCELED
    stored = side.reminders.get(r.id)
    assert stored.deliveries["webhook-0"].state is DeliveryState.CANCELED
    assert [h.event for h in stored.deliveries["webhook-0"].history].count("cancel") == 1


# -- endpoints -----------------------------------------------------------------------------------
def test_endpoint_create_whose_answer_was_lost_answers_created_not_409(side: Side) -> None:
    side.lose("endpoints", "put_new")
    endpoint, secret = side.endpoints.create(NewEndpoint("acct-1", "https://hooks.example.com/lost"))
    assert side.lost() == 1, "the answer was not lost"
    stored = side.endpoints.get(endpoint.id)
    assert [k.secret for k in stored.keys] == [secret]


def test_endpoint_rotation_whose_answer_was_lost_rotates_once(side: Side) -> None:
    endpoint, first = side.endpoints.create(NewEndpoint("acct-1", "https://hooks.example.com/rotate"))
    side.lose("endpoints", "save")
    rotated, secret = side.endpoints.rotate_secret(endpoint.id, 3600)
    assert side.lost() == 1, "the answer was not lost"
    stored = side.endpoints.get(endpoint.id)
    assert [k.secret for k in stored.keys] == [secret, first]  # the shown secret signs; no unseen one
    assert stored.rev == rotated.rev == endpoint.rev + 1


def test_endpoint_delete_whose_answer_was_lost_answers_deleted_not_404(side: Side) -> None:
    endpoint, _ = side.endpoints.create(NewEndpoint("acct-1", "https://hooks.example.com/delete"))
    side.lose("endpoints", "delete")
    side.endpoints.delete(endpoint.id)
    assert side.lost() == 1, "the answer was not lost"
    assert side.endpoints.store.get(endpoint.id) is None


def test_endpoint_patch_whose_answer_was_lost_is_applied_once(side: Side) -> None:
    from reminders.services.endpoints import EndpointChange

    endpoint, _ = side.endpoints.create(NewEndpoint("acct-1", "https://hooks.example.com/patch"))
    side.lose("endpoints", "save")
    changed = side.endpoints.change(endpoint.id, EndpointChange(description="renamed"))
    assert side.lost() == 1, "the answer was not lost"
    stored = side.endpoints.get(endpoint.id)
    assert stored.description == changed.description == "renamed"
    assert stored.rev == changed.rev == endpoint.rev + 1


def test_delete_whose_answer_was_lost_while_a_send_was_recorded_answers_cancelled() -> None:
    """The worker sending when the cancel landed records its attempt before the cancel reads the
    row again: the cancel is still recognised by its line (the revision moved on)."""
    from tests.unit.fakes import World

    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.store.claim(r.id, "webhook-0", 1, "w9", w.clock.now(), w.clock.now() + timedelta(seconds=60))
    real = w.store.save_reminder

    def save_then_worker_records(reminder: Any, expected: Any, index: Any) -> bool:
        w.store.lose_next_answer("save_reminder")
        ok = real(reminder, expected, index)
        d = w.delivery(r.id)
        d.history.append(replace(d.history[-1], at="2099-01-01T00:00:00.000000Z", event="attempt"))
        assert w.store.save_delivery(r.id, d, d.rev)  # the worker's own write, after ours
        return ok

    w.store.save_reminder = save_then_worker_records  # type: ignore[method-assign]
    canceled = w.reminders.cancel(r.id)
    assert canceled.deliveries["webhook-0"].state is DeliveryState.CANCELED
    assert [h.event for h in w.delivery(r.id).history].count("cancel") == 1


@pytest.mark.parametrize("side", ["moto"], indirect=True)  # the memory twin removes what it read
@pytest.mark.parametrize("scope", [None, "*"])
def test_suppression_removal_whose_answer_was_lost_answers_removed_not_404(
    side: Side, scope: str | None
) -> None:
    """``DELETE /suppressions/{hash}`` answers 404 when nothing was removed."""
    from reminders.domain.suppression import SuppressionEntry, SuppressionReason

    account = f"acct-{uuid.uuid4().hex[:8]}"
    entry = SuppressionEntry(
        account, "h" * 16, SuppressionReason.OPERATOR, "operator", "2030-01-01T00:00:00Z"
    )
    assert side.suppressions.add(entry)
    side.lose("suppressions", "delete")
    removed = side.suppressions.remove(account, "h" * 16, scope)
    assert side.lost() == 1, "the answer was not lost"
    assert removed == 1
    assert side.suppressions.list(account) == []


# -- templates -----------------------------------------------------------------------------------
TEMPLATE: dict[str, Any] = {
    "default_locale": "en",
    "locales": {"en": {"subject": "Hi {{ name }}", "text": "Hello {{ name }}", "html": "<p>{{ name }}</p>"}},
    "variables": {"name": "string"},
}


def test_template_version_put_whose_answer_was_lost_answers_the_stored_version_not_409(side: Side) -> None:
    """The PUT landed and its answer was lost: the same content again is the stored version (200 as
    the API documents a repeated PUT), never a 409 nor a second write; other content is a 409
    naming the field that differs."""
    tid = f"lost-{uuid.uuid4().hex[:8]}"
    side.lose("templates", "put_new")
    tv, created = side.templates.register("acct-1", tid, 1, TEMPLATE)
    assert side.lost() == 1, "the answer was not lost"
    assert created is False and tv.encode() == side.templates.get("acct-1", tid, 1).encode()
    again, created = side.templates.register("acct-1", tid, 1, TEMPLATE)  # the client's own retry
    assert created is False and again.encode() == tv.encode()
    assert [v.version for v in side.templates.versions("acct-1", tid)] == [1]
    other = {**TEMPLATE, "locales": {"en": {**TEMPLATE["locales"]["en"], "text": "Bye {{ name }}"}}}
    with pytest.raises(VersionConflictError) as refused:
        side.templates.register("acct-1", tid, 1, other)
    assert refused.value.field == "locales.en.text"
