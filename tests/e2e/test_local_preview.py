"""Issue 28 item 1 once on the local runtime (``reminders local``: moto server, real HTTP, the real
handlers): an account's preview promises what then happens. A cancelled reminder, one quiet hours
hold for hours and one certain to dead-letter are not promised (the last is listed as not attempted);
a 429's retry that comes due inside the horizon is. Every promised attempt reaches the receiver,
none before its promised time, and nothing unpromised does (within the one-minute horizon)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from reminders.domain.models import delivery_key
from reminders.domain.retention import generation_of

from .local_process import http, local_runtime

pytestmark = pytest.mark.e2e

ACCOUNT = "acct-e2e-preview"


def _key(name: str) -> str:
    return delivery_key(ACCOUNT, f"e2e-preview:{name}", "webhook-0", generation_of(datetime.now(UTC)))


def _posts(receiver: str) -> dict[str, int]:
    status, snap = http("GET", receiver)
    assert status == 200
    return dict(snap["posts"])


def test_an_accounts_preview_promises_what_the_local_runtime_then_attempts(tmp_path: Path) -> None:
    with local_runtime(tmp_path) as info:
        api, receiver = info["api"], info["receiver"]
        now = datetime.now(UTC)
        closed = {
            "start": f"{(now + timedelta(hours=3)).hour:02d}:00",
            "end": f"{(now + timedelta(hours=4)).hour:02d}:00",
        }

        def create(name: str, due: datetime, **extra: Any) -> str:
            body = {
                "key": f"e2e-preview:{name}",
                "account_id": ACCOUNT,
                "kind": "e2e",
                "due_at": due.isoformat(),
                "channels": [{"type": "webhook", "url": f"{receiver}/hooks/{name}"}],
                "template": {"id": "t", "version": 1},
                **extra,
            }
            status, got = http("POST", f"{api}/reminders", body)
            assert status == 201, got
            return str(got["id"])

        # A 429 with Retry-After first (its retry comes due inside the horizon), then a 200.
        behaviours = [{"status": 429, "retry_after": "20"}, {"status": 200}]
        assert http("PUT", receiver, {"key": _key("throttled"), "behaviours": behaviours})[0] == 204
        ids = {"throttled": create("throttled", now)}
        deadline = time.monotonic() + 60
        while not _posts(receiver).get(_key("throttled")) and time.monotonic() < deadline:
            time.sleep(0.25)
        assert _posts(receiver).get(_key("throttled")) == 1
        soon = datetime.now(UTC) + timedelta(seconds=15)
        ids["plain"] = create("plain", soon)
        ids["cancelled"] = create("cancelled", soon)
        assert http("DELETE", f"{api}/reminders/{ids['cancelled']}")[0] == 200
        ids["quiet"] = create("quiet", soon, time_zone="UTC", send_window=closed)
        ids["doomed"] = create(
            "doomed",
            soon,
            time_zone="UTC",
            send_window=closed,
            deliver_by=(soon + timedelta(seconds=10)).isoformat(),
        )
        # Every account preview reads the parks' minutes too (~93 minutes x 16 shards of due-index
        # queries, as a 60-minute one did: issue 28, seed 16): ~20 s on moto, more than http's 15 s.
        status, out = http(
            "GET", f"{api}/reminders/preview?next_minutes=1&account_id={ACCOUNT}", timeout=60.0
        )
        assert status == 200 and out["counts_of"] == "consumer_rules", out
        promised = {a["reminder_id"]: a for a in out["attempts"]}
        assert set(promised) == {ids["plain"], ids["throttled"]}, out
        assert promised[ids["throttled"]]["reason"] == "retry"
        assert [(x["reminder_id"], x["reason"]) for x in out["not_attempted"]] == [
            (ids["doomed"], "deadline_passed")
        ]

        # What happens until the horizon ends: the first post of each key, seen from here.
        names = {rid: name for name, rid in ids.items()}
        first: dict[str, datetime] = {}
        until = datetime.fromisoformat(out["until"].replace("Z", "+00:00"))
        while datetime.now(UTC) < until:
            seen = _posts(receiver)
            for rid, name in names.items():
                wanted = 2 if name == "throttled" else 1  # the throttled one's retry is its 2nd post
                if seen.get(_key(name), 0) >= wanted and rid not in first:
                    first[rid] = datetime.now(UTC)
            if set(first) == set(promised):
                break
            time.sleep(0.25)
        assert set(first) == set(promised), (first, out)
        for rid, seen_at in first.items():
            assert seen_at >= datetime.fromisoformat(promised[rid]["at"].replace("Z", "+00:00")), (rid, out)
        assert not any(_posts(receiver).get(_key(n)) for n in ("cancelled", "quiet", "doomed"))
