"""The demo's paths, end to end against ``reminders local`` in a subprocess, driven only over HTTP:
delivered once; retried after 429 (Retry-After) and 500; dead-lettered on 400 with the DLQ message
carrying its reason; redriven after the receiver is fixed and delivered once; cancel; reschedule;
a far-future reminder through the due index and the dispatcher; duplicate create; email via SES,
whose send event comes back through the event-pattern rule to the reconciler."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from reminders.domain.models import delivery_key
from reminders.domain.retention import generation_of

from .local_process import cli, http, local_runtime

pytestmark = pytest.mark.e2e

ACCOUNT = "acct-e2e"
WINDOW_SECONDS = 6  # local delay window: anything due later waits for the dispatcher
FAST = {
    "DELAY_WINDOW_SECONDS": str(WINDOW_SECONDS),
    "REMINDERS_RETRY_BASE_SECONDS": "1",
    "REMINDERS_RETRY_CAP_SECONDS": "2",
    "REMINDERS_RETRY_JITTER_SECONDS": "0.5",
    "DUE_SHARDS": "4",  # fewer index shards: less work per dispatcher tick on a shared 2-core box
}


class Client:
    def __init__(self, info: dict[str, Any]) -> None:
        self.api = info["api"]
        self.receiver = info["receiver"]
        self.emulator = info["emulator"]

    def body(self, name: str, due: datetime, **extra: Any) -> dict[str, Any]:
        channel = (
            {"type": "email", "to": "someone@example.com"}
            if name == "email"
            else {"type": "webhook", "url": f"{self.receiver}/hooks/{name}"}
        )
        return {
            "key": f"e2e:{name}",
            "account_id": ACCOUNT,
            "kind": "e2e",
            "due_at": due.isoformat(),
            "channels": [channel],
            "template": {"id": "t", "version": 1},
            "data": {"case": name},
            **extra,
        }

    def create(self, name: str, due_in: float, script: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        if script:
            status, _ = http("PUT", self.receiver, {"key": key(name), "behaviours": script})
            assert status == 204
        status, got = http(
            "POST", f"{self.api}/reminders", self.body(name, now() + timedelta(seconds=due_in))
        )
        assert status == 201, got
        return dict(got)

    def delivery(self, reminder: dict[str, Any]) -> dict[str, Any]:
        status, got = http("GET", f"{self.api}/reminders/{reminder['id']}")
        assert status == 200, got
        return dict(got["deliveries"][0])

    def wait(
        self, reminder: dict[str, Any], done: Callable[[dict[str, Any]], bool], timeout: float = 40
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            d = self.delivery(reminder)
            if done(d):
                return d
            if time.monotonic() > deadline:
                pytest.fail(f"{reminder['key']} stuck: {d['state']} {d['history']}")
            time.sleep(0.5)


def now() -> datetime:
    return datetime.now(UTC)


def key(name: str) -> str:
    channel = "email-0" if name == "email" else "webhook-0"
    return delivery_key(ACCOUNT, f"e2e:{name}", channel, generation_of(now()))


def state(s: str) -> Callable[[dict[str, Any]], bool]:
    return lambda d: d["state"] == s


def reports(log: Path, function: str) -> int:
    """Successful invocations of a function, from the platform.report lines of the runtime's log."""
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for x in lines if '"platform.report"' in x and f'"{function}"' in x and '"success"' in x)


def outcomes(d: dict[str, Any]) -> list[str]:
    return [h["outcome"] for h in d["history"] if h["event"] == "attempt"]


def test_demo_paths_over_http(tmp_path: Path) -> None:
    with local_runtime(tmp_path, "--tick-seconds", "3", env=FAST) as info:
        c = Client(info)
        ok = c.create("ok", 2)
        throttled = c.create("throttled", 2, [{"status": 429, "retry_after": "1"}])
        flaky = c.create("flaky", 2, [{"status": 500}])
        bad = c.create("bad", 2, [{"status": 400}])
        email = c.create("email", 2)
        canceled = c.create("cancel", 5)
        moved = c.create("moved", 4)
        far = c.create("far", WINDOW_SECONDS + 5)
        assert far["deliveries"][0]["state"] == "scheduled"  # beyond the window: the due index holds it

        status, got = http("DELETE", f"{c.api}/reminders/{canceled['id']}")
        assert status == 200 and got["deliveries"][0]["state"] == "canceled"
        later = now() + timedelta(seconds=WINDOW_SECONDS + 4)
        status, got = http("PATCH", f"{c.api}/reminders/{moved['id']}", {"due_at": later.isoformat()})
        assert status == 200 and got["version"] == 2
        status, got = http("POST", f"{c.api}/reminders", c.body("ok", datetime.fromisoformat(ok["due_at"])))
        assert status == 200 and got["id"] == ok["id"]  # duplicate create: the same reminder
        status, got = http("POST", f"{c.api}/reminders", c.body("ok", now(), data={"changed": True}))
        assert status == 409
        status, got = http(
            "POST", f"{c.api}/reminders", {**c.body("x", now()), "due_at": "2026-01-01T00:00:00"}
        )
        assert status == 422  # naive datetime: named, nothing written

        assert outcomes(c.wait(ok, state("delivered"))) == ["accepted"]
        assert outcomes(c.wait(throttled, state("delivered"))) == ["throttled", "accepted"]
        assert outcomes(c.wait(flaky, state("delivered"))) == ["transient", "accepted"]
        assert c.wait(email, state("delivered"))["receipt"]
        # SES's send and delivery events (emulated: moto publishes none) reach the reconciling
        # function through the template's event-pattern rule (its platform reports are in the log).
        ses_rules = [
            r
            for r in info["wired"]["rules"].values()
            if "aws.ses" in r.get("event_pattern", {}).get("source", [])
        ]
        assert ses_rules, "the template routes SES events to a function"
        reconciler = info["functions"][ses_rules[0]["targets"][0]]
        deadline = time.monotonic() + 20
        while reports(info["_log"], reconciler) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert reports(info["_log"], reconciler) >= 2
        assert c.delivery(email)["state"] == "delivered"
        dead = c.wait(bad, state("dead_letter"))
        assert dead["dead_letter_reason"] == "permanent_failure" and dead["attempts"] == 1

        # The DLQ message carries reason, attempts and the delivery key (read without consuming).
        listed = cli("dlq", "list", "--channel", "webhook", endpoint=c.emulator)["webhook"]
        mine = [m for m in listed if m["delivery_key"] == key("bad")]
        assert len(mine) == 1
        assert mine[0]["reason"] == "permanent_failure" and mine[0]["attempts"] == "1"
        assert mine[0]["last_status"] == "400"

        # The receiver is fixed (its script is used up); redrive: delivered once, in a new cycle. The
        # listing left the message in place (it is moved now), and the DLQ is empty afterwards.
        args = ("dlq", "redrive", "--channel", "webhook", "--reason", "permanent_failure", "--max", "5")
        report = cli(*args, endpoint=c.emulator)
        assert report["moved"] == 1 and report["recurred"] is None and report["stopped"] == "dlq_empty"
        redriven = c.wait(bad, state("delivered"))
        assert redriven["cycle"] == 1 and any(h["event"] == "redrive" for h in redriven["history"])

        assert outcomes(c.wait(far, state("delivered"))) == ["accepted"]
        assert outcomes(c.wait(moved, state("delivered"))) == ["accepted"]
        time.sleep(max(0.0, (datetime.fromisoformat(canceled["due_at"]) - now()).total_seconds() + 2))
        assert c.delivery(canceled)["state"] == "canceled"

        _, seen = http("GET", c.receiver)
        for name in ("ok", "throttled", "flaky", "bad", "moved", "far"):
            assert seen["accepted"].get(key(name)) == 1, name  # one accepted send per key
        assert seen["posts"][key("throttled")] == 2
        assert seen["posts"][key("flaky")] == 2
        assert seen["posts"][key("bad")] == 2
        assert key("cancel") not in seen["posts"]
        assert seen["duplicates_accepted"] == 0 and seen["rejected_signatures"] == 0
