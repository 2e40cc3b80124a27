"""Issue 28 item 2: explain shows every history line that changed what happens next (a quiet-hours
deferral, a held endpoint's pause, a parked delivery's wait) and only real attempts as attempts (a
``deadline_passed`` dead letter sent nothing). On the in-memory world with the real deliverer."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from reminders.domain.endpoints import implicit_endpoint_id
from reminders.domain.health import EndpointHealth, EndpointState, HealthWhy
from reminders.domain.localtime import SendWindow
from reminders.domain.models import Reminder
from reminders.services import support

from tests.unit.fakes import World

NIGHT = SendWindow.parse("22:00", "06:00")  # T0 is 12:00 UTC: closed for ten hours


def create(w: World, key: str = "k", **fields: Any) -> Reminder:
    reminder, _ = w.reminders.create(replace(w.new(key), **fields))
    return reminder


def explained(w: World, rid: str) -> dict[str, Any]:
    (d,) = support.explain(support.reminder_view(w.get(rid)), w.clock.now())["deliveries"]
    return d


def hold(w: World, account_id: str = "acct-1") -> None:
    from tests.unit.fakes import WEBHOOK_URL

    endpoint = implicit_endpoint_id(account_id, WEBHOOK_URL)
    now = w.clock.now().timestamp()
    held = w.health.transition(
        EndpointHealth(endpoint, account_id), EndpointState.HELD, HealthWhy.OPERATOR, now
    )
    assert held is not None


def test_explain_shows_the_quiet_hours_deferral_when_a_window_holds_it_back() -> None:
    w = World(shards=1)
    r = create(w, send_window=NIGHT)
    assert [x.outcome for x in w.poll()] == ["deferred_quiet_hours"]
    d = explained(w, r.id)
    assert d["attempts"] == []
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("defer", "quiet_hours")]
    assert "quiet_hours" in d["next"] and "2026-11-29T22:00" in d["next"]


def test_explain_shows_the_held_endpoints_pause_and_the_parked_wait_when_its_endpoint_is_held() -> None:
    w = World(shards=1)
    hold(w)
    r = create(w)
    assert [x.outcome for x in w.poll()] == ["endpoint_parked"]
    d = explained(w, r.id)
    assert d["attempts"] == []
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("defer", "endpoint_hold")]
    # Past the park's first wait its message comes back and parks again without writing the row:
    # the next attempt is not "now", it waits for the endpoint.
    w.clock.advance(PARK_SECONDS)
    d = explained(w, r.id)
    assert "now" not in d["next"] and "endpoint_hold" in d["next"], d["next"]


PARK_SECONDS = 901


def test_explain_shows_no_attempt_when_a_deadline_dead_letters_it_unsent() -> None:
    w = World(shards=1)
    r = create(w, deliver_by=w.clock.now() + timedelta(seconds=30))
    (m,) = w.receive()
    w.clock.advance(31)
    assert w.process(m).outcome == "dead_lettered"
    d = explained(w, r.id)
    assert d["attempts"] == [], d["attempts"]
    assert d["stopped"] == "dead-lettered: deadline_passed after 0 attempt(s)"
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("gate", "deadline_passed")]
    assert w.get(r.id).deliveries["webhook-0"].maybe_accepted == []  # nothing was sent: no evidence


def test_explain_shows_no_attempt_when_a_row_written_before_the_gate_line_holds_a_gate_dead_letter() -> None:
    w = World(shards=1)
    r = create(w, deliver_by=w.clock.now() + timedelta(seconds=30))
    (m,) = w.receive()
    w.clock.advance(31)
    assert w.process(m).outcome == "dead_lettered"
    view = support.reminder_view(w.get(r.id))
    for line in view["deliveries"][0]["history"]:  # as the consumer wrote it before this change
        if line["event"] == "gate":
            line["event"] = "attempt"
    (d,) = support.explain(view, w.clock.now())["deliveries"]
    assert d["attempts"] == [], d["attempts"]
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("gate", "deadline_passed")]


def test_explain_shows_no_attempt_when_a_disabled_endpoint_dead_letters_it_unsent() -> None:
    from tests.unit.fakes import WEBHOOK_URL

    w = World(shards=1)
    endpoint = implicit_endpoint_id("acct-1", WEBHOOK_URL)
    assert w.health.transition(
        EndpointHealth(endpoint, "acct-1"),
        EndpointState.DISABLED,
        HealthWhy.OPERATOR,
        w.clock.now().timestamp(),
    )
    r = create(w)
    (m,) = w.receive()
    assert w.process(m).outcome == "dead_lettered"
    d = explained(w, r.id)
    assert d["attempts"] == [], d["attempts"]
    assert [(c["event"], c["detail"]) for c in d["changes"]] == [("gate", "endpoint_disabled")]
    view = support.reminder_view(w.get(r.id))
    for line in view["deliveries"][0]["history"]:  # as the consumer wrote it before this change
        line["event"] = "attempt"
    (old,) = support.explain(view, w.clock.now())["deliveries"]
    assert old["attempts"] == [] and [c["event"] for c in old["changes"]] == ["gate"]
