"""Operational events (issue 16): the pure diff of a table item's old and new image."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

from reminders.domain.models import Attempt, ChannelType, Delivery, Reminder
from reminders.domain.opevents import (
    EVENT_KIND,
    OpEvent,
    health_events,
    reminder_events,
)
from reminders.domain.states import DeliveryState
from reminders.services.render import render

AT = "2030-01-20T08:00:02.000000Z"


def _reminder(state: DeliveryState = DeliveryState.SENDING, **delivery: object) -> Reminder:
    d = Delivery(
        channel_id="webhook-0",
        type=ChannelType.WEBHOOK,
        destination="https://hooks.example.com/x",
        key="dlv_" + "1" * 32,
        state=state,
        history=[Attempt(at=AT, event="attempt", outcome="accepted", decision="delivered")],
    )
    d = replace(d, **delivery)  # type: ignore[arg-type]
    return Reminder(
        id="rem_" + "2" * 32,
        account_id="acct-1",
        key="renewal:1",
        kind="renewal",
        due_at=datetime(2030, 1, 20, 8, tzinfo=UTC),
        template_id="t",
        template_version=1,
        data={"email_of_the_customer": "someone@example.com"},
        version=1,
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        fingerprint="f",
        deliveries={"webhook-0": d},
    )


def test_a_delivery_that_became_delivered_is_reminder_delivered_keyed_by_its_key_and_cycle() -> None:
    (e,) = reminder_events(_reminder(), _reminder(DeliveryState.DELIVERED, delivered_at=AT))
    assert e.type == "reminder.delivered" and e.account_id == "acct-1"
    assert e.key == f"evt/reminder.delivered/dlv_{'1' * 32}/0"
    assert e.occurred_at == AT
    assert e.data["reminder_id"] == "rem_" + "2" * 32 and e.document()["timestamp"] == AT


def test_a_dead_letter_is_reminder_dead_lettered_with_its_reason() -> None:
    (e,) = reminder_events(
        _reminder(), _reminder(DeliveryState.DEAD_LETTER, dead_letter_reason="attempts_exhausted")
    )
    assert e.type == "reminder.dead_lettered" and e.data["reason"] == "attempts_exhausted"


def test_another_write_of_the_same_outcome_is_no_event() -> None:
    done = _reminder(DeliveryState.DELIVERED, delivered_at=AT)
    assert reminder_events(done, replace(done, version=2)) == []  # a receipt, a feedback note...


def test_a_dead_letter_again_after_a_redrive_is_a_second_event_with_its_own_key() -> None:
    first = _reminder(DeliveryState.DEAD_LETTER, dead_letter_reason="expired")
    again = _reminder(DeliveryState.DEAD_LETTER, dead_letter_reason="expired", cycle=1)
    (e1,) = reminder_events(_reminder(), first)
    (e2,) = reminder_events(_reminder(cycle=1), again)
    assert e1.key != e2.key and e2.key.endswith("/1")


def test_no_loop_an_event_reminders_own_delivery_is_never_an_event() -> None:
    event = replace(_reminder(DeliveryState.DELIVERED, delivered_at=AT), kind=EVENT_KIND, key="evt/x/y/0")
    assert reminder_events(replace(event, deliveries=_reminder().deliveries), event) == []


def test_payloads_carry_ids_types_reasons_and_times_never_personal_data() -> None:
    (e,) = reminder_events(_reminder(), _reminder(DeliveryState.DELIVERED, delivered_at=AT))
    text = json.dumps(e.document())
    assert "someone@example.com" not in text and "hooks.example.com" not in text and "renewal:1" not in text


def _health(st: str, tv: int, **extra: object) -> dict[str, object]:
    return {"pk": "E#ep_" + "a" * 32, "sk": "H", "st": st, "tv": tv, "acct": "acct-1", "since": AT, **extra}


def test_endpoint_transitions_are_held_resumed_and_disabled_keyed_by_the_transition_counter() -> None:
    (held,) = health_events(_health("active", 0), _health("held", 1, why="transient"))
    (resumed,) = health_events(_health("held", 1), _health("active", 2))
    (disabled,) = health_events(_health("held", 3), _health("disabled", 4, why="held_too_long"))
    assert (held.type, resumed.type, disabled.type) == (
        "endpoint.held",
        "endpoint.resumed",
        "endpoint.disabled",
    )
    assert held.key == f"evt/endpoint.held/ep_{'a' * 32}/1" and held.data["reason"] == "transient"
    assert "reason" not in resumed.data and resumed.data["previous_state"] == "held"


def test_a_first_health_item_already_held_is_a_transition_from_active() -> None:
    (e,) = health_events(None, _health("held", 1))
    assert e.type == "endpoint.held"


def test_a_health_write_that_keeps_the_state_or_is_malformed_is_no_event() -> None:
    assert health_events(_health("held", 1), _health("held", 1, why="probe_failed")) == []
    assert health_events(None, _health("active", 0)) == []
    assert health_events(None, _health("sideways", 1)) == []
    assert health_events(None, {**_health("held", 1), "acct": ""}) == []
    assert health_events(None, {**_health("held", 1), "sk": "E"}) == []  # the endpoint item itself
    assert health_events(_health("active", 0), None) == []  # removed


def test_an_event_reminder_renders_its_event_document_as_the_webhook_body() -> None:
    event = OpEvent("endpoint.held", "acct-1", "ep_x/1", AT, {"endpoint_id": "ep_x"})
    r = replace(_reminder(), kind=EVENT_KIND, data=event.document())
    body = json.loads(render(r, r.deliveries["webhook-0"]).body)
    assert body == {"type": "endpoint.held", "timestamp": AT, "data": {"endpoint_id": "ep_x"}}


def test_a_dead_letter_written_without_any_attempt_line_is_still_an_event_at_the_due_time() -> None:
    (e,) = reminder_events(
        _reminder(history=[]), _reminder(DeliveryState.DEAD_LETTER, dead_letter_reason="expired", history=[])
    )
    assert e.type == "reminder.dead_lettered" and e.occurred_at == "2030-01-20T08:00:00.000000Z"
