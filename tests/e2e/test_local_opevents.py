"""Operational events (issue 16) end to end against ``reminders local`` (moto server, the template's
two stream mappings, real HTTP), driven over HTTP: an account registers an event endpoint (a second
local receiver that verifies with that endpoint's own secret), one reminder is delivered and one
dead-lettered (400 at the local receiver), and ``reminder.delivered`` and ``reminder.dead_lettered``
arrive at the event endpoint, once each, signed with its secret."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from reminders.domain.models import delivery_key
from reminders.domain.retention import generation_of
from reminders_ops.local.receiver import WebhookReceiver

from .local_process import http, local_runtime

pytestmark = pytest.mark.e2e

ACCOUNT = "acct-e2e-events"


def test_reminder_delivered_and_dead_lettered_events_arrive_signed_over_the_local_runtime(
    tmp_path: Path,
) -> None:
    with (
        local_runtime(tmp_path, env={"REMINDERS_RETRY_BASE_SECONDS": "1"}) as info,
        WebhookReceiver("whsec_" + "A" * 32) as events,
    ):
        api, receiver = info["api"], info["receiver"]
        status, endpoint = http(
            "POST", f"{api}/endpoints", {"account_id": ACCOUNT, "url": events.url + "/events"}
        )
        assert status == 201, endpoint
        events.use_secret(endpoint["secret"])
        status, reg = http("PUT", f"{api}/accounts/{ACCOUNT}/event-endpoint", {"endpoint_id": endpoint["id"]})
        assert status == 200 and reg["event_types"], reg
        ids = {}
        for name, behaviours in (("ok", [{"status": 200}]), ("bad", [{"status": 400}])):
            body = {
                "key": f"e2e-events:{name}",
                "account_id": ACCOUNT,
                "kind": "e2e",
                "due_at": datetime.now(UTC).isoformat(),
                "channels": [{"type": "webhook", "url": f"{receiver}/hooks/{name}"}],
                "template": {"id": "t", "version": 1},
                "data": {"case": name},
            }
            key = delivery_key(ACCOUNT, body["key"], "webhook-0", generation_of(datetime.now(UTC)))
            assert http("PUT", receiver, {"key": key, "behaviours": behaviours})[0] == 204
            status, got = http("POST", f"{api}/reminders", body)
            assert status == 201, got
            ids[name] = got["id"]
        deadline = time.monotonic() + 60
        while len(events.state.bodies) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        bodies = {k: json.loads(v) for k, v in events.state.bodies.items()}
        by_type = {b["type"]: (k, b["data"]) for k, b in bodies.items()}
        assert set(by_type) == {"reminder.delivered", "reminder.dead_lettered"}, bodies
        key, delivered = by_type["reminder.delivered"]
        assert delivered["reminder_id"] == ids["ok"] and events.signed_by(endpoint["secret"], key)
        key, dead = by_type["reminder.dead_lettered"]
        assert (
            dead["reminder_id"] == ids["bad"] and dead["reason"] and events.signed_by(endpoint["secret"], key)
        )
        time.sleep(2)  # no loop: the events' own deliveries add nothing
        assert len(events.state.bodies) == 2
        assert events.snapshot()["duplicates_accepted"] == 0
