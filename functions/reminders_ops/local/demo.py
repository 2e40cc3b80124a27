"""``reminders local --demo``: every delivery path, driven the way a client drives the system —
over the HTTP API, with the webhook receiver scripted over its HTTP interface and the DLQ
redriven with the operator CLI's code — then a summary that proves one accepted send per key
from the receiver's own counts.

Far-future reminders go through the due index and the dispatcher because the local delay window
is short (DELAY_WINDOW_SECONDS, 20 s by default; 900 s in AWS): a reminder due beyond it is held in
DynamoDB, and the dispatcher's scheduled rule enqueues it with the exact remaining delay.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from reminders.domain.models import delivery_key
from reminders.domain.retention import generation_of

if TYPE_CHECKING:
    from .runtime import LocalRuntime

ACCOUNT = "acct-demo"
BOUNCE_ADDRESS = "bounce@simulator.amazonses.com"
WAIT_SECONDS = 150.0
#: Issue 30: the demo account's email template, in two locales; the 'email' case names it.
TEMPLATE_ID = "demo-welcome"
TEMPLATE: dict[str, Any] = {
    "default_locale": "en",
    "locales": {
        "en": {
            "subject": "Your {{ plan }} plan renews on {{ renews_at.strftime('%d %B') }}",
            "text": "Hello {{ name }},\n\nyour {{ plan }} plan renews for {{ amount }} EUR.\n"
            "{% for f in features %}- {{ f }}\n{% endfor %}",
            "html": "<h1>Hello {{ name }}</h1><p>Your <b>{{ plan }}</b> plan renews for {{ amount }} EUR:</p>"
            "<ul>{% for f in features %}<li>{{ f }}</li>{% endfor %}</ul>",
        },
        "fr": {
            "subject": "Votre formule {{ plan }} est renouvelée le {{ renews_at.strftime('%d/%m') }}",
            "text": "Bonjour {{ name }},\n\nvotre formule {{ plan }} est renouvelée pour {{ amount }} EUR.\n"
            "{% for f in features %}- {{ f }}\n{% endfor %}",
            "html": "<h1>Bonjour {{ name }}</h1><p>Votre formule <b>{{ plan }}</b> : {{ amount }} EUR</p>"
            "<ul>{% for f in features %}<li>{{ f }}</li>{% endfor %}</ul>",
        },
    },
    "variables": {
        "name": "string",
        "plan": "string",
        "amount": "decimal",
        "renews_at": "date-time",
        "features": "list",
    },
}
TEMPLATE_DATA: dict[str, Any] = {
    "name": "Zoé <zoe@example.com>",
    "plan": "pro",
    "amount": 19.9,
    "renews_at": "2027-03-28T09:00:00+02:00",
    "features": ["5 seats", "priority support"],
}
POLL_SECONDS = 0.5


def http(method: str, url: str, body: Any = None, timeout: float = 15.0) -> tuple[int, Any]:
    from reminders_ops.local.sigv4 import sign

    data = json.dumps(body).encode() if body is not None else None
    # Signed as the local operator (the bootstrap principal): the local API verifies SigV4.
    headers = sign(method, url, body=data or b"", headers={"content-type": "application/json"})
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw) if raw else None
        except ValueError:
            return exc.code, raw.decode(errors="replace")


@dataclass
class Case:
    name: str
    shows: str
    expect_state: str
    expect_accepted: int
    channel: str = "webhook"
    script: list[dict[str, Any]] = field(default_factory=list)
    due_in: float = 3.0
    expect_posts: int | None = None
    key: str = ""
    reminder_id: str = ""
    delivery_key: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)  # issue 17: due_local/time_zone/window/deadline
    to: str = "customer@example.com"


def _time_body(case: Case, due: datetime) -> dict[str, Any]:
    """Issue 17: a case with ``due_local`` states its due time as that zone's wall time instead."""
    if "time_zone" not in case.fields or "due_local" not in case.fields:
        return dict(case.fields)
    from reminders.domain.localtime import zone

    wall = due.astimezone(zone(case.fields["time_zone"])).replace(tzinfo=None, microsecond=0)
    return {**case.fields, "due_at": None, "due_local": wall.isoformat(timespec="seconds")}


class Demo:
    def __init__(self, rt: LocalRuntime, say: Callable[[Any], None]) -> None:
        self.rt = rt
        self.say = say
        self.api = rt.api_url
        self.receiver = rt.receiver_url
        self.run_id = datetime.now(UTC).strftime("%H%M%S")
        self.window = int(rt.environment.get("DELAY_WINDOW_SECONDS", "900"))
        self.notes: list[str] = []
        self.checks: list[tuple[str, bool]] = []

    # -- helpers -----------------------------------------------------------------------------------
    def _body(self, case: Case, due: datetime, data: dict[str, Any] | None = None) -> dict[str, Any]:
        channel = (
            {"type": "webhook", "url": f"{self.receiver}/hooks/{case.name}"}
            if case.channel == "webhook"
            else {"type": "email", "to": case.to}
        )
        return {
            "key": case.key,
            "account_id": ACCOUNT,
            "kind": "demo",
            "due_at": due.isoformat(),
            "channels": [channel],
            "template": {"id": "renewal", "version": 1},
            "data": data or {"case": case.name},
        } | _time_body(case, due)

    def _create(self, case: Case, due: datetime) -> dict[str, Any]:
        case.key = f"demo:{self.run_id}:{case.name}"
        # The key the API will derive (its generation is the creation time's, domain/retention.py).
        gen = generation_of(datetime.now(UTC))
        case.delivery_key = delivery_key(ACCOUNT, case.key, f"{case.channel}-0", gen)
        if case.script:
            status, _ = http("PUT", self.receiver, {"key": case.delivery_key, "behaviours": case.script})
            assert status == 204, f"receiver script: {status}"
        status, body = http(
            "POST", f"{self.api}/reminders", {k: v for k, v in self._body(case, due).items() if v is not None}
        )
        if status != 201:
            raise RuntimeError(f"create {case.name}: {status} {body}")
        case.reminder_id = body["id"]
        case.result["created_state"] = body["deliveries"][0]["state"]
        case.result["due_at"] = due
        return dict(body)

    def _get(self, case: Case) -> dict[str, Any]:
        status, body = http("GET", f"{self.api}/reminders/{case.reminder_id}")
        if status != 200:
            raise RuntimeError(f"get {case.name}: {status} {body}")
        return dict(body["deliveries"][0])

    def _wait(self, cases: list[Case], done: Callable[[Case, dict[str, Any]], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        pending = list(cases)
        while pending and time.monotonic() < deadline and not self.rt.stop_event.is_set():
            for c in list(pending):
                d = self._get(c)
                if done(c, d):
                    c.result["delivery"] = d
                    pending.remove(c)
            if pending:
                time.sleep(POLL_SECONDS)
        for c in pending:
            c.result["delivery"] = self._get(c)
            c.result["timed_out"] = True

    def _terminal(self, c: Case, d: dict[str, Any]) -> bool:
        return d["state"] in ("delivered", "dead_letter", "canceled")

    def _expected(self, c: Case, d: dict[str, Any]) -> bool:
        return d["state"] == c.expect_state

    def _next_dispatch_after(self, earliest: datetime) -> datetime:
        """A due time the dispatcher will hand to SQS on a tick (instead of one the API enqueues)."""
        rule = next((r for r in self.rt.spec.rules if r.schedule and r.targets), None)
        margin = min(120, self.window // 4)
        sched = self.rt.scheduler
        if rule is None or sched is None:
            return earliest + timedelta(seconds=self.window + 5)
        tick = sched.next_fire(rule.logical_id) or datetime.now(UTC)
        entry = next(e for e in sched.entries if e.rule.logical_id == rule.logical_id)
        # The first tick at which a reminder due (window - margin - 2) s later is beyond the window now.
        while tick + timedelta(seconds=self.window - margin - 2) <= earliest + timedelta(
            seconds=self.window + 1
        ):
            tick = entry.schedule.next_after(tick)
        return tick + timedelta(seconds=self.window - margin - 2)

    # -- the scenario --------------------------------------------------------------------------------
    def run(self) -> bool:
        say = self.say
        started = time.monotonic()
        say(
            f"[demo] starting (run {self.run_id}); local delay window {self.window}s — later reminders"
            " wait in the due index for the dispatcher"
        )
        now = datetime.now(UTC)
        ok = Case("ok", "delivered once", "delivered", 1, expect_posts=1)
        throttled = Case(
            "429",
            "429 + Retry-After honoured, then delivered",
            "delivered",
            1,
            script=[{"status": 429, "retry_after": "2"}],
            expect_posts=2,
        )
        transient = Case(
            "500",
            "500 then 503: backoff retries, then delivered",
            "delivered",
            1,
            script=[{"status": 500}, {"status": 503}],
            expect_posts=3,
        )
        timeout = Case(
            "timeout",
            "accepted but answered too late: retry is reconciled by 409",
            "delivered",
            1,
            script=[{"status": 200, "hang_seconds": 5, "accept": True}],
            due_in=6,
            expect_posts=2,
        )
        bad = Case(
            "400",
            "400 → dead letter; redriven after the receiver is fixed",
            "delivered",
            1,
            script=[{"status": 400}],
            expect_posts=2,
        )
        self._register_template()
        email = Case(
            "email",
            "email from the account's template (fr, text + HTML) through SES, captured by the emulator",
            "delivered",
            0,
            channel="email",
            fields={"template": {"id": TEMPLATE_ID, "version": 1}, "data": TEMPLATE_DATA, "locale": "fr-FR"},
        )
        cancel = Case(
            "cancel", "queued, cancelled: the message is a no-op", "canceled", 0, due_in=12, expect_posts=0
        )
        moved = Case(
            "reschedule",
            "queued, rescheduled later: old message stale, new time honoured",
            "delivered",
            1,
            due_in=8,
            expect_posts=1,
        )
        far = Case(
            "far-future",
            "beyond the window: due index → dispatcher → delivered",
            "delivered",
            1,
            expect_posts=1,
        )
        # Issue 17: a local-time reminder, a quiet-hours deferral and a deadline dead letter.
        local = Case(
            "local-time",
            "due_local + time_zone (Europe/Berlin wall time) → delivered at that instant",
            "delivered",
            1,
            expect_posts=1,
            fields={"due_local": True, "time_zone": "Europe/Berlin"},
        )
        opens = (now + timedelta(seconds=70)).replace(second=0, microsecond=0)
        quiet = Case(
            "quiet-hours",
            f"send window opens {opens:%H:%M} UTC: deferred (deferred_quiet_hours), no attempt spent",
            "delivered",
            1,
            expect_posts=1,
            fields={"send_window": {"start": f"{opens:%H:%M}", "end": f"{opens + timedelta(hours=2):%H:%M}"}},
        )
        deadline = Case(
            "deadline",
            "deliver_by 5 s after due, receiver says 429 Retry-After 30 → dead letter deadline_passed",
            "dead_letter",
            0,
            script=[{"status": 429, "retry_after": "30"}],
            expect_posts=1,
            fields={"deliver_by": (now + timedelta(seconds=8)).isoformat()},
        )
        bounced = Case(
            "bounce",
            "SES mailbox simulator: a permanent bounce after delivery (annotated, address suppressed)",
            "delivered",
            0,
            channel="email",
            to=BOUNCE_ADDRESS,
        )
        suppressed = Case(
            "suppressed",
            "the next email to the bounced address: dead letter 'suppressed', never sent",
            "dead_letter",
            0,
            channel="email",
            to=BOUNCE_ADDRESS,
        )
        timed = [local, quiet, deadline]
        cases = [ok, throttled, transient, timeout, bad, email, cancel, moved, far, *timed]
        cases += [bounced, suppressed]

        for c in (ok, throttled, transient, timeout, bad, email, cancel, moved, *timed, bounced):
            self._create(c, now + timedelta(seconds=c.due_in))
        status, body = http("GET", f"{self.api}/reminders/{local.reminder_id}")
        say(
            f"[demo] local time: due_local {body.get('due_local')} {body.get('time_zone')} → due_at"
            f" {body.get('due_at')}; quiet hours until {opens:%H:%M} UTC; a deadline 5 s after due"
        )
        say(
            "[demo] created 9 near-term reminders (webhook: ok, 429, 500/503, timeout-after-accept, 400;"
            " email; email to SES's bounce simulator; one to cancel; one to reschedule)"
        )

        status, _ = http("DELETE", f"{self.api}/reminders/{cancel.reminder_id}")
        self.checks.append(("cancel answered 200", status == 200))
        far_due = self._next_dispatch_after(datetime.now(UTC))
        new_due = far_due + timedelta(seconds=2)
        status, body = http(
            "PATCH", f"{self.api}/reminders/{moved.reminder_id}", {"due_at": new_due.isoformat()}
        )
        self.checks.append(("reschedule answered 200", status == 200))
        moved.result["due_at"] = new_due
        say(
            f"[demo] cancelled '{cancel.name}'; rescheduled '{moved.name}' to {new_due:%H:%M:%S}"
            " (beyond the window)"
        )

        status, body = http("POST", f"{self.api}/reminders", self._body(ok, ok.result["due_at"]))
        self.checks.append(
            ("duplicate create → 200, same reminder", status == 200 and body["id"] == ok.reminder_id)
        )
        status, body = http(
            "POST", f"{self.api}/reminders", self._body(ok, ok.result["due_at"], {"case": "changed"})
        )
        self.checks.append(("same key, different body → 409", status == 409))
        say("[demo] duplicate create answered 200 with the same reminder; a different body for the key 409")

        self._create(far, far_due)
        self.checks.append(("far-future held in the due index", far.result["created_state"] == "scheduled"))
        say(
            f"[demo] far-future reminder due {far_due:%H:%M:%S} is '{far.result['created_state']}'"
            " (the dispatcher"
            f" enqueues it on its tick)"
        )

        self._wait([ok, throttled, transient, timeout, bad, email], self._terminal, 60)
        dl = bad.result["delivery"]
        say(
            f"[demo] '400' is {dl['state']} (reason {dl['dead_letter_reason']}); the others: "
            + ", ".join(
                f"{c.name}={c.result['delivery']['state']}"
                for c in (ok, throttled, transient, timeout, email)
            )
        )
        self._redrive(bad)
        self._after_bounce(bounced, suppressed)
        self._templated_email(email)
        self._unsubscribe_click(email)
        self._late_receipt(ok)

        self._wait([deadline], self._terminal, 30)
        dd = deadline.result["delivery"]
        say(
            f"[demo] 'deadline' is {dd['state']} (reason {dd['dead_letter_reason']}):"
            " no attempt starts after deliver_by"
        )
        self._wait([far, moved, bad, local, quiet], self._expected, WAIT_SECONDS)
        defers = [h for h in quiet.result["delivery"]["history"] if h["event"] == "defer"]
        self.checks.append(("quiet hours deferred the first attempt, spending none", bool(defers)))
        self.checks.append(
            ("deadline dead letter says deadline_passed", dd["dead_letter_reason"] == "deadline_passed")
        )
        wait_cancel = (cancel.result["due_at"] - datetime.now(UTC)).total_seconds() + 3
        if wait_cancel > 0:
            time.sleep(wait_cancel)
        self._wait([cancel], self._terminal, 10)
        for c in (ok, throttled, transient, timeout, email, bounced):
            c.result.setdefault("delivery", self._get(c))
        self.summary(cases, time.monotonic() - started)
        return all(ok for _, ok in self.checks)

    def _after_bounce(self, bounced: Case, suppressed: Case) -> None:
        """Wait for the simulator's bounce to reach the suppression list, then mail the address again."""
        deadline = time.monotonic() + 30
        listed = False
        while time.monotonic() < deadline and not listed:
            status, body = http("GET", f"{self.api}/suppressions?account_id={ACCOUNT}")
            # The hash is keyed by the stack's secret (the demo does not hold it): the bounce's entry.
            listed = status == 200 and any(
                e["reason"] == "bounce_permanent" and e["source"].startswith("ses:") for e in body["entries"]
            )
            if not listed:
                time.sleep(POLL_SECONDS)
        d = self._get(bounced)
        bounced.result["delivery"] = d
        self.checks.append(("bounce: suppression list has the address (by hash)", listed))
        self.checks.append(("bounce: delivered delivery annotated 'bounced'", d.get("feedback") == "bounced"))
        self.say(
            f"[demo] SES bounced '{bounced.name}': delivery stays {d['state']}, feedback={d.get('feedback')};"
            f" the address is on the account's suppression list: {listed}"
        )
        self._create(suppressed, datetime.now(UTC) + timedelta(seconds=1))
        self._wait([suppressed], self._terminal, 30)
        d = suppressed.result["delivery"]
        self.checks.append(
            (
                "suppressed: ended unsent",
                d.get("dead_letter_reason") == "suppressed" and d.get("attempts") == 0,
            )
        )
        self.say(f"[demo] next email to it: {d['state']} (reason {d.get('dead_letter_reason')}), no attempt")

    def _register_template(self) -> None:
        """Issue 30: the account registers its template (text and HTML, en and fr) over the API."""
        status, _ = http(
            "PUT", f"{self.api}/templates/{TEMPLATE_ID}/versions/1", {"account_id": ACCOUNT, **TEMPLATE}
        )
        self.checks.append(
            ("template version registered (201, or 200 when already there)", status in (200, 201))
        )
        self.say(f"[demo] registered template {TEMPLATE_ID} v1 (en, fr; text + HTML): {status}")

    def _templated_email(self, case: Case) -> None:
        """The email SES captured is multipart/alternative, rendered from the template in French,
        the HTML part escaped."""
        from email import message_from_bytes
        from email import policy as email_policy

        for raw in reversed(self.rt.emulator.ses_raw_messages()):
            msg = message_from_bytes(raw, policy=email_policy.default)
            if msg.get("X-Reminder-Key") != case.delivery_key:
                continue
            parts = {p.get_content_type(): p.get_content() for p in msg.walk() if not p.is_multipart()}
            html = str(parts.get("text/html", ""))
            self.checks.append(
                (
                    "email is multipart/alternative (text + HTML)",
                    msg.get_content_type() == "multipart/alternative",
                )
            )
            self.checks.append(
                (
                    "email rendered from the template (fr), HTML escaped",
                    str(msg["Subject"]).startswith("Votre formule pro")
                    and "Zoé &lt;zoe@example.com&gt;" in html,
                )
            )
            self.say(f"[demo] templated email captured: subject {str(msg['Subject'])!r}; HTML {html[:72]!r}…")
            return
        self.checks.append(("templated email captured by the emulator", False))

    def _unsubscribe_click(self, case: Case) -> None:
        """A recipient's mail client: the List-Unsubscribe link of the email SES captured, POSTed the
        RFC 8058 way (twice: a repeated click answers the same); the address is then suppressed for
        this account and this reminder kind."""
        import re
        from email import message_from_bytes
        from email import policy as email_policy

        link = None
        for raw in reversed(self.rt.emulator.ses_raw_messages()):
            msg = message_from_bytes(raw, policy=email_policy.default)
            if msg.get("X-Reminder-Key") == case.delivery_key:
                m = re.match(r"<(https?://[^>]+/unsubscribe/[^>]+)>", str(msg.get("List-Unsubscribe") or ""))
                link = m.group(1) if m else None
                self.checks.append(
                    (
                        "email carries List-Unsubscribe-Post",
                        msg.get("List-Unsubscribe-Post") == "List-Unsubscribe=One-Click",
                    )
                )
                break
        self.checks.append(("email carries a List-Unsubscribe link", link is not None))
        if link is None:
            return
        token = link.rsplit("/", 1)[1]
        answers = [self._one_click(token) for _ in range(2)]
        good = answers == [(200, {"status": "unsubscribed"})] * 2
        self.checks.append(("unsubscribe click (and its replay) answered 200", good))
        status, body = http("GET", f"{self.api}/suppressions?account_id={ACCOUNT}")
        scopes = [e["scope"] for e in body.get("entries", [])] if status == 200 else []
        self.checks.append(("unsubscribe suppressed the address for kind 'demo'", "demo" in scopes))
        self.say(
            f"[demo] one-click unsubscribe from '{case.name}' (POSTed twice): {answers[0][0]};"
            f" suppression scopes now {scopes}"
        )

    def _late_receipt(self, case: Case) -> None:
        """The receiver reports 'processed', then an older 'rejected' arrives late: recorded as
        stale, the delivered delivery stays delivered and 'processed' stands."""
        from reminders.adapters.secrets import signing_key
        from reminders.domain.endpoints import implicit_endpoint_id
        from standardwebhooks.webhooks import Webhook

        # Issue 24: receipts verify with the account's own secret, never the stack's. The account
        # reads it by rotating its implicit endpoint of the receiver's origin (the old secret keeps
        # signing for the overlap, and the migration window's stack signature stays beside them).
        eid = implicit_endpoint_id(ACCOUNT, self.receiver)
        answer, rotated = http(
            "POST", f"{self.api}/endpoints/{eid}/rotate-secret", {"expires_in_seconds": 86400}
        )
        self.checks.append(("the account's implicit endpoint rotated (its secret read)", answer == 200))
        wh = Webhook(signing_key(rotated["secret"] if answer == 200 else "whsec_" + "A" * 32))
        now = datetime.now(UTC)
        statuses = []
        for event_id, status, at in (
            ("evt-new", "processed", now),
            ("evt-old", "rejected", now - timedelta(seconds=30)),
        ):
            body = json.dumps(
                {
                    "webhook_id": case.delivery_key,
                    "reminder_id": case.reminder_id,
                    "status": status,
                    "event_time": at.isoformat(),
                    "event_id": f"{self.run_id}-{event_id}",
                }
            )
            signed_at = datetime.now(UTC)
            msg_id = f"msg-{self.run_id}-{event_id}"
            req = urllib.request.Request(
                f"{self.api}/inbound/receiver",
                data=body.encode(),
                method="POST",
                headers={
                    "content-type": "application/json",
                    "webhook-id": msg_id,
                    "webhook-timestamp": str(int(signed_at.timestamp())),
                    "webhook-signature": wh.sign(msg_id, signed_at, body),
                },
            )
            try:
                with urllib.request.urlopen(req, timeout=15) as resp:
                    statuses.append(resp.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
            time.sleep(1.0)  # the newer one first, as the scenario says
        deadline = time.monotonic() + 20
        d = self._get(case)
        while time.monotonic() < deadline and not any(h.get("decision") == "stale" for h in d["history"]):
            time.sleep(POLL_SECONDS)
            d = self._get(case)
        standing = (d.get("receiver_receipt") or "").split("|")
        good = statuses == [202, 202] and d["state"] == "delivered" and standing[:1] == ["p"]
        self.checks.append(("late older receipt: delivered stays delivered, 'processed' stands", good))
        self.say(
            f"[demo] receipts for '{case.name}': processed, then an older rejected ({statuses});"
            f" state {d['state']}, standing receipt {standing[0] if standing else '-'}"
        )

    def _one_click(self, token: str) -> tuple[int, Any]:
        req = urllib.request.Request(
            f"{self.api}/unsubscribe/{token}",
            data=b"List-Unsubscribe=One-Click",
            method="POST",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, None

    def _redrive(self, case: Case) -> None:
        from reminders_ops.cli.dlq import peek, redrive
        from reminders_ops.stackrefs import StackTarget

        target = StackTarget(endpoint_url=self.rt.emulator.endpoint, region=self.rt.emulator.region)
        sqs = target.client("sqs")
        dlq, source = target.dlq_url("webhook"), target.queue_url("webhook")
        deadline = time.monotonic() + 20
        mine: list[Any] = []
        while time.monotonic() < deadline and not mine:
            mine = [m for m in peek(sqs, dlq) if m.delivery_key == case.delivery_key]
            if not mine:
                time.sleep(POLL_SECONDS)
        if not mine:
            self.checks.append(("400 delivery's message in the webhook DLQ", False))
            return
        s = mine[0].summary()
        case.result["dlq"] = s
        self.checks.append(("400 delivery's message in the webhook DLQ", s["reason"] == "permanent_failure"))
        self.say(
            f"[demo] webhook DLQ: reason={s['reason']} attempts={s['attempts']} last={s['last_error']}/"
            f"{s['last_status']} key={s['delivery_key']}"
        )
        self.say(
            "[demo] receiver fixed (answers 2xx again); redriving the DLQ"
            " (reminders dlq redrive --channel webhook)"
        )
        report = redrive(sqs, dlq, source, max_messages=10, reason="permanent_failure", rate_per_second=5)
        case.result["redrive"] = report.as_dict()
        self.checks.append(("redrive moved the message back", len(report.moved) >= 1))

    # -- the proof -----------------------------------------------------------------------------------
    def summary(self, cases: list[Case], elapsed: float) -> None:
        from rich.table import Table

        _, rcv = http("GET", self.receiver)
        accepted: dict[str, int] = rcv["accepted"]
        posts: dict[str, int] = rcv["posts"]
        ses_sent = self.rt.emulator.ses_sent_count()
        table = Table(title=f"demo summary ({elapsed:.0f}s)", title_justify="left")
        for col in ("case", "what it shows", "state", "attempts", "posts", "accepted", "late", "ok"):
            table.add_column(
                col, justify="right" if col in ("attempts", "posts", "accepted", "late") else "left"
            )
        for c in cases:
            d = c.result.get("delivery") or {}
            n_attempts = sum(1 for h in d.get("history", []) if h["event"] == "attempt")
            k = c.delivery_key
            p, a = posts.get(k, 0), accepted.get(k, 0)
            late = ""
            if d.get("delivered_at") and c.result.get("due_at"):
                first = next(
                    (h["at"] for h in d.get("history", []) if h["event"] == "attempt"), d["delivered_at"]
                )
                started_at = datetime.fromisoformat(first.replace("Z", "+00:00"))
                late = f"{(started_at - c.result['due_at']).total_seconds():.1f}s"
            good = d.get("state") == c.expect_state and (c.channel != "webhook" or a == c.expect_accepted)
            if c.expect_posts is not None and c.channel == "webhook":
                good = good and p == c.expect_posts
            if c.channel == "email":
                good = good and ses_sent >= 1
            self.checks.append((f"{c.name}: {c.shows}", good))
            table.add_row(
                c.name,
                c.shows,
                d.get("state", "?"),
                str(n_attempts),
                str(p) if c.channel == "webhook" else "-",
                str(a) if c.channel == "webhook" else "-",
                late,
                "✔" if good else "✘",
                style="" if good else "red",
            )
        self.say(table)
        max_accepted = max(accepted.values(), default=0)
        cancel_key = next(c.delivery_key for c in cases if c.name == "cancel")
        duplicates = int(rcv["duplicates_accepted"])
        demo_keys = {c.delivery_key for c in cases if c.channel == "webhook"}
        accepted_demo = {k: v for k, v in accepted.items() if k in demo_keys}
        self.checks.append(
            ("one accepted send per key (receiver's own counts)", max_accepted <= 1 and duplicates == 0)
        )
        self.checks.append(("SES captured the email", ses_sent >= 1))
        lines = [
            "[demo] proof, from the webhook receiver's own counts"
            " (it dedups by webhook-id and counts every POST):",
            f"  keys posted: {len(posts)}  ·  accepted sends per key: max {max_accepted}"
            f"  ·  duplicates accepted: {duplicates}  ·  POSTs in total: {sum(posts.values())}",
            f"  demo webhook keys accepted exactly once: {sum(1 for v in accepted_demo.values() if v == 1)}"
            f" of {len([c for c in cases if c.channel == 'webhook' and c.expect_accepted == 1])} expected;"
            f" cancelled key POSTs: {posts.get(cancel_key, 0)}",
            f"  emails captured by the emulator's SES: {ses_sent}",
        ]
        bus = self.rt.bus
        if bus is not None and bus.rules:
            st = bus.stats
            lines.append(
                f"  SES events on the local bus: {st.put} published, {st.matched} matched the template's"
                f" rule, {st.delivered} delivered to its function ({st.errors} errors)"
            )
        for name, good in self.checks:
            if not good:
                lines.append(f"  FAILED: {name}")
        verdict = all(g for _, g in self.checks)
        if not self.rt.options.exit_after_demo:
            lines.append(f"  (still serving: API {self.api}, receiver {self.receiver}; Ctrl-C stops)")
        lines.append(
            "  RESULT: "
            + (
                "PASS — every path ended where it should, one accepted send per key"
                if verdict
                else "FAIL (see above)"
            )
        )
        self.say("\n".join(lines))
