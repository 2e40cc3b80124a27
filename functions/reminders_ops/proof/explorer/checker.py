"""The promise, checked from the receivers' and SES's own records against the ledger.

After every step (the ledger-wide checks every ``FULL_EVERY`` steps and at the end):

- ``two_bodies_one_key``: at most one accepted body per delivery key, and a delivery recorded
  ``delivered`` names (by fingerprint) a body its receiver accepted under that key;
- ``signed_for_another_account``: no POST carries a signature made with one account's secret over
  another account's reminder;
- ``receipt_crossed_accounts``: no receipt signed with one account's secret lands on another's
  delivery; ``answer_crossed_accounts``: no 2xx answer to one account shows another's object (nor
  lists one in its ``items`` or ``entries``);
- ``delivered_without_acceptance``: no delivery ``delivered`` without an accepted attempt (a
  receiver's 2xx or its 409 for a key it accepted; SES's MessageId; or, once the webhook reached its
  receiver, a receipt (processed or rejected) signed by the reminder's own account only: the receiver
  is the authority on what it received, whatever it answered);
- ``dead_letter_disagrees``: every dead letter's reason agrees with the provider-side trace (of the
  key that earned it: a ``resend: true`` gives a dead letter a new key and keeps its reason): a
  receiver's answers for a webhook, SES's (``Sim.ses_trace``) for an email;
- ``sent_in_quiet_hours``: nothing reaches a provider while its reminder's send window is closed
  (``quiet_hours.py``);
- ``sent_early``: nothing reaches a receiver before its reminder's due time (lateness within its
  bound: ``late_without_reason``, ``lateness.py`` — in every step a delivery left with no message,
  and in the settle every expected instant);
- ``parked_copies``: at most one live queue message per parked delivery among those received
  while it is parked (beyond SQS duplicates and redrives the faults injected);
- ``template_crossed_accounts``: the subject and body a receiver sees (an email, a webhook's
  ``rendered``) carry only the reminder's own account's template text (every template the explorer
  writes carries its author's marker), and a reminder naming a version its account registered is
  rendered from it;
- ``sent_after_delivered``: no webhook POST or SES send of a key after the ledger recorded it
  ``delivered`` (a send needs a claim, and a delivered row is never claimed);
- ``sent_after_canceled``: no webhook POST or SES send of a key after a cancel's 2xx answer showed
  that delivery ``canceled`` (a queued message becomes a no-op);
- ``delivered_regressed``: a delivery recorded ``delivered`` stays delivered under its key, whatever
  receipts, stream records (replayed, out of order) or redrives arrive later;
- ``receipt_standing_wrong``: once the stream applied its records (in order, replayed or reversed),
  a delivery's standing receipt is the latest of those stored for its key (event time, then status
  rank, then event id), whatever order they arrived in;
- ``signature_missing_key``: a POST through an endpoint carries a signature by every key of it that
  is active at the send (a rotation's overlap: a receiver still on the old key verifies it);
- ``window_opening_skipped``: no quiet-hours deferral passes over an instant at which the send
  window is open by a wall-clock stepper (``windows.py``): a DST gap never loses a day's window;
- ``sent_under_a_live_lease`` (``concurrent.py``): two records of one delivery in a batch run at
  once, as the handler's thread pool runs them; no send of a key while another record holds its
  claim under a live lease;
- ``cycle_not_fresh`` (``cycles.py``): a redriven delivery dead-lettered ``attempts_exhausted``
  failed the policy's whole budget of provider contacts since its redrive (a fresh cycle);
- ``reference_crossed_accounts``: every stored endpoint reference (a delivery's channel, an account's
  event-endpoint registration) names an endpoint of its own account, whether or not a send follows;
- ``answer_disagrees_with_store``: a write the API refused (4xx/5xx) left the stores unchanged (an
  endpoint's use rows excepted: written ahead of the reminder by design, dropped once abandoned),
  and no answer is a 500 (a 503 only while producers are paused).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reminders.adapters.secrets import signing_key
from reminders.domain.schedule import parse_iso
from reminders.domain.states import DeliveryState
from reminders.services.deliver import PARK_RENEW_SECONDS
from reminders.services.endpoints import LOOKUP_CACHE_SECONDS
from standardwebhooks.webhooks import Webhook

from . import emails, opstream
from .quiet_hours import outside_window
from .violation import Violation
from .windows import check_deferrals

if TYPE_CHECKING:
    from .actions import Action, Ctx, Holdings, Request
    from .sim import Sim

FULL_EVERY = 20
SKEW_SECONDS = 300  # the largest clock skew the explorer gives a consumer (actions.generate)
PARKED_COPIES = 1


def body_fingerprint(key: str, body: bytes) -> str:
    """The fingerprint the renderer records for a webhook body (services/render.py)."""
    try:
        doc = json.loads(body)
        kind = doc["kind"] if "kind" in doc else doc["type"]  # an operational event's subject: its type
    except (ValueError, KeyError, TypeError):
        kind = ""
    return hashlib.sha256(f"{key}\n{kind}\n{body.decode()}".encode()).hexdigest()[:32]


class Checker:
    def __init__(self, sim: Sim, held: Holdings) -> None:
        self.sim, self.held = sim, held
        self.posts_seen = 0
        self.emails_seen = 0
        self.steps = 0
        self.accepted_bodies: dict[str, set[bytes]] = defaultdict(set)
        self.accepted_fps: dict[str, set[str]] = defaultdict(set)
        self.acknowledged: set[str] = set()  # keys a receiver took (2xx) or confirmed (409 of dedupe)
        self.refused: dict[str, list[int]] = defaultdict(list)  # key -> non-2xx statuses
        self.unanswered: set[str] = set()  # keys a POST of which got no answer back (a failed attempt)
        self.ses_keys: set[str] = set()
        self.receipt_signers: dict[tuple[str, str], set[str]] = defaultdict(set)  # (webhook id, event id)
        self.attested: dict[str, set[str]] = {}  # keys a receiver the webhook reached said it received
        self.extra_copies: dict[str, int] = defaultdict(int)  # reminder id -> injected extra messages
        self.processed: dict[str, float] = {}  # message id -> when a consumer last kept it
        #: key -> sends (POSTs and emails) the checker had seen when it first saw the key delivered
        self.delivered_mark: dict[str, int] = {}
        #: key -> sends the checker had seen when a cancel's 2xx answer showed it canceled
        self.canceled_mark: dict[str, int] = {}
        self.delivered_keys: dict[tuple[str, str], str] = {}  # (reminder, channel) -> key seen delivered
        self.deferrals_seen: set[tuple[str, str, str]] = set()  # quiet-hours lines judged (windows.py)
        #: more judges of a dead letter: (where, reminder, delivery, reason keys) (cycles.py)
        self.dead_letter_judges: list[Callable[[str, Any, Any, list[str]], None]] = []

    # -- snapshots for API answers ---------------------------------------------------------------
    def snapshot(self) -> str:
        s = self.sim
        # An endpoint's use rows (and the ``seq`` they bump) are written ahead of the reminder that
        # names it, by design, and dropped once abandoned (services/endpoints.open_uses): not data.
        endpoints = {
            k: {f: v for f, v in item.items() if f != "seq"} for k, item in s.endpoint_store.items.items()
        }
        state = (
            s.store.items,
            endpoints,
            getattr(s.event_endpoints, "items", None),
            getattr(s.suppressions, "entries", None) or getattr(s.suppressions, "items", None),
            s.receipt_log.items,
            s.template_store.items,
        )
        return hashlib.sha256(repr(state).encode()).hexdigest()

    def api_answer(
        self, route: tuple[str, str], ctx: Ctx, req: Request, status: int, answer: Any, before: str
    ) -> None:
        where = f"{route[0]} {route[1]} as {ctx.actor} naming {ctx.target}"
        paused = bool(self.sim.store.controls.get("producers_paused"))
        if status >= 500 and not (status == 503 and (paused or _code(answer) == "producers_paused")):
            raise Violation("answer_disagrees_with_store", f"{where}: {status} {answer}")
        if status >= 400 and route[0] != "GET" and self.snapshot() != before:
            raise Violation(
                "answer_disagrees_with_store", f"{where}: answered {status} {answer} after a write"
            )
        if 200 <= status < 300 and ctx.target != ctx.actor and isinstance(answer, dict):
            owner = answer.get("account_id")
            if isinstance(owner, str) and owner != ctx.actor and owner in self.sim.accounts:
                raise Violation("answer_crossed_accounts", f"{where}: {status} shows {owner}'s object")
        if 200 <= status < 300 and not req.public and isinstance(answer, dict):
            for item in [*(answer.get("items") or []), *(answer.get("entries") or [])]:  # a listing's
                owner = item.get("account_id") if isinstance(item, dict) else None
                if isinstance(owner, str) and owner != ctx.actor and owner in self.sim.accounts:
                    raise Violation("answer_crossed_accounts", f"{where}: {status} lists {owner}'s object")
        if 200 <= status < 300 and not req.public and isinstance(answer, dict):  # what it just stored
            owner = answer.get("account_id")
            if isinstance(owner, str) and isinstance(answer.get("endpoint_id"), str):
                self._own_endpoint(where, owner, answer["endpoint_id"])
            for d in answer.get("deliveries") or [] if isinstance(owner, str) else []:
                if isinstance(d, dict) and isinstance(d.get("destination"), str):
                    self._own_endpoint(where, str(owner), d["destination"])
        if (
            route == ("DELETE", "/reminders/{reminder_id}")
            and 200 <= status < 300
            and isinstance(answer, dict)
        ):
            sends = len(self.sim.posts) + len(self.sim.emails)
            for d in answer.get("deliveries") or []:
                if isinstance(d, dict) and d.get("state") == "canceled" and isinstance(d.get("key"), str):
                    self.canceled_mark.setdefault(d["key"], sends)
        if route == ("POST", "/inbound/receiver") and 200 <= status < 300 and req.raw is not None:
            doc = json.loads(req.raw)
            self.receipt_signers[(doc["webhook_id"], doc["event_id"])].add(ctx.actor)
            if any(p.key == doc["webhook_id"] for p in self.sim.posts):
                # The receiver the webhook reached says it got it (processed or rejected it), signed
                # with its own secret: evidence of receipt whatever it answered (a 503 after
                # processing, a lost answer).
                self.attested.setdefault(doc["webhook_id"], set()).add(ctx.actor)

    # -- every step --------------------------------------------------------------------------------
    def after_step(self, action: Action) -> None:
        self.steps += 1
        self._new_posts()
        self._new_emails()
        if self.steps % FULL_EVERY == 0:
            self.full()

    def _new_posts(self) -> None:
        posts = self.sim.posts
        while self.posts_seen < len(posts):
            p = posts[self.posts_seen]
            self.posts_seen += 1
            try:
                doc = json.loads(p.body)
            except ValueError:
                raise Violation("signed_for_another_account", f"unreadable body under {p.key}") from None
            reminder = self.sim.store.get(doc.get("id", "")) or opstream.event_post(self.sim, p.key, doc)
            owner = reminder.account_id if reminder is not None else doc.get("account_id")
            self._not_after_delivered(p.key, self.posts_seen + self.emails_seen - 1)
            if reminder is not None:
                self._every_active_key(p, reminder)
            for signer in self._signers(p):
                if signer != owner:
                    raise Violation(
                        "signed_for_another_account",
                        f"POST {p.key} to {p.host}: {owner}'s reminder signed with {signer}'s secret",
                    )
            if reminder is not None and p.at < reminder.due_at.timestamp() - 1:
                raise Violation(
                    "sent_early", f"{p.key} posted {reminder.due_at.timestamp() - p.at:.0f} s early"
                )
            if reminder is not None and (why := outside_window(reminder, p.at, SKEW_SECONDS)):
                raise Violation("sent_in_quiet_hours", f"POST {p.key} {why}")
            if reminder is not None and isinstance(doc.get("rendered"), dict):
                rendered = doc["rendered"]
                self._template_text(
                    reminder, f"POST {p.key}", f"{rendered.get('subject')}\n{rendered.get('text')}"
                )
            if p.timeout:
                self.unanswered.add(p.key)
            if p.accepted:
                self.accepted_bodies[p.key].add(p.body)
                self.accepted_fps[p.key].add(body_fingerprint(p.key, p.body))
                if len(self.accepted_bodies[p.key]) > 1:
                    raise Violation(
                        "two_bodies_one_key",
                        f"{p.key}: {len(self.accepted_bodies[p.key])} different bodies accepted",
                    )
                self.acknowledged.add(p.key)
            elif p.status == 409:
                self.acknowledged.add(p.key)
            else:
                self.refused[p.key].append(p.status)

    def _signers(self, p: Any) -> set[str]:
        try:
            msg_id, ts = p.headers["webhook-id"], int(p.headers["webhook-timestamp"])
            signatures = p.headers["webhook-signature"].split()
        except (KeyError, ValueError):
            return set()
        from datetime import UTC, datetime

        at = datetime.fromtimestamp(ts, tz=UTC)
        self.sim.learn_keys()
        out = set()
        for secret, account in self.sim.key_owner.items():
            expected = Webhook(signing_key(secret)).sign(msg_id, at, p.body.decode())
            if any(hmac.compare_digest(expected, s) for s in signatures):
                out.add(account)
        return out

    def _not_after_delivered(self, key: str, sends_before: int) -> None:
        mark = self.delivered_mark.get(key)
        if mark is not None and sends_before >= mark:
            raise Violation("sent_after_delivered", f"{key}: sent again after it was recorded delivered")
        mark = self.canceled_mark.get(key)
        if mark is not None and sends_before >= mark:
            raise Violation("sent_after_canceled", f"{key}: sent after a cancel answered it canceled")

    def _every_active_key(self, p: Any, reminder: Any) -> None:
        """The endpoint the POST went through: each of its keys active at the send signed it."""
        from datetime import UTC, datetime

        from reminders.domain.endpoints import implicit_endpoint_id, is_endpoint_id

        d = next((d for d in reminder.deliveries.values() if d.key == p.key), None)
        if d is None or d.type.value != "webhook":
            return
        eid = (
            d.destination
            if is_endpoint_id(d.destination)
            else implicit_endpoint_id(reminder.account_id, d.destination)
        )
        # Eventually consistent endpoint reads lag by writes here (not by time, as DynamoDB's do): the
        # sender may sign with a key set some writes old, without the newest key. The keys a rotation
        # left overlapping were in every older copy: those are required whatever the lag.
        stale = bool(self.sim.endpoint_store.stale.lag)
        endpoint = self.sim.endpoint_store.get(eid)
        if endpoint is None or endpoint.account_id != reminder.account_id:
            return
        try:
            msg_id, ts = p.headers["webhook-id"], int(p.headers["webhook-timestamp"])
            signatures = p.headers["webhook-signature"].split()
        except (KeyError, ValueError):
            signatures, msg_id, ts = [], p.key, int(p.at)
        signed_at = datetime.fromtimestamp(ts, tz=UTC)
        for k in endpoint.keys:  # active: not yet expired (read here, not through the sender's code)
            # A consumer's clock may run up to SKEW_SECONDS off, and a sender trusts its copy of an
            # endpoint for LOOKUP_CACHE_SECONDS: keys that near their expiry or that new are excused.
            if k.expires_at is not None and parse_iso(k.expires_at).timestamp() <= p.at + SKEW_SECONDS:
                continue
            if parse_iso(k.created_at).timestamp() > p.at - LOOKUP_CACHE_SECONDS - SKEW_SECONDS:
                continue
            if stale and k.expires_at is None:
                continue
            expected = Webhook(signing_key(k.secret)).sign(msg_id, signed_at, p.body.decode())
            if not any(hmac.compare_digest(expected, s) for s in signatures):
                raise Violation(
                    "signature_missing_key",
                    f"POST {p.key} through {eid}: not signed with its key created {k.created_at}"
                    " (a receiver still on it refuses the webhook)",
                )

    def _new_emails(self) -> None:
        emails = self.sim.emails
        while self.emails_seen < len(emails):
            e = emails[self.emails_seen]
            self.emails_seen += 1
            self.ses_keys.add(e.key)
            self._not_after_delivered(e.key, self.posts_seen + self.emails_seen - 1)
            reminder = self.sim.store.get(e.reminder_id)
            if reminder is not None and e.at < reminder.due_at.timestamp() - 1:
                raise Violation("sent_early", f"email {e.key} sent early")
            if reminder is not None and (why := outside_window(reminder, e.at, SKEW_SECONDS)):
                raise Violation("sent_in_quiet_hours", f"email {e.key} {why}")
            if reminder is not None:
                self._template_text(reminder, f"email {e.key}", _email_text(e.raw), email=True)

    def _template_text(self, reminder: Any, where: str, seen: str, *, email: bool = False) -> None:
        """Only the owner's template text; the owner's registered version when it has one."""
        from .actions import template_marker

        owner = reminder.account_id
        for other in self.sim.accounts:
            if other != owner and template_marker(other) in seen:
                raise Violation(
                    "template_crossed_accounts", f"{where}: {owner}'s reminder shows {other}'s template"
                )
        tv = self.sim.template_store.items.get((owner, reminder.template_id, reminder.template_version))
        # A version registered before its reminder was created: the reminder records it and renders
        # it. One registered at the same virtual instant may have come after the create (the clock
        # does not move between two API calls of one step sequence: explorer seed 10), and one
        # registered later never applies to it (issue 30: the reminder records what it was checked
        # against, tests/proof/test_explorer.py).
        registered = tv is not None and parse_iso(tv.created_at) < reminder.created_at
        if email and registered and template_marker(owner) not in seen:
            raise Violation(
                "template_crossed_accounts",
                f"{where}: {owner}'s reminder names its registered template"
                f" {reminder.template_id} v{reminder.template_version} but was not rendered from it",
            )

    def receipts_settled(self) -> None:
        """After the stream applied every stored receipt: each delivery's standing one is the latest."""
        from reminders.domain.receipts import RANK, ReceiptStatus, decode

        latest: dict[str, tuple[str, int, str]] = {}
        for item in self.sim.receipt_log.items.values():
            key = str(item["pk"]).removeprefix("RCPT#")
            order = (str(item["et"]), RANK[ReceiptStatus(item["st"])], str(item["sk"]).removeprefix("E#"))
            latest[key] = max(latest.get(key, order), order)
        for rid in list(self.sim.store.items):
            reminder = self.sim.store.get(rid)
            for cid, d in reminder.deliveries.items() if reminder else ():
                standing = decode(d.receiver_receipt)
                if standing is not None and d.key in latest and standing.order_key() != latest[d.key]:
                    raise Violation(
                        "receipt_standing_wrong",
                        f"{rid}/{cid} ({d.key}): stands {standing.order_key()}, latest {latest[d.key]}",
                    )

    # -- the ledger ---------------------------------------------------------------------------------
    def full(self) -> None:
        self._new_posts()
        self._new_emails()
        # Live copies of a parked delivery: messages of the reminder's current version (an older one is
        # dropped unsent) that a consumer processed since the park's last deferral (its history line)
        # and kept. One not processed since (unreceived, its batch crashed, its
        # deletion lost) is in flight: its processing decides.
        live: dict[tuple[str, str, int], list[float]] = defaultdict(list)
        for queue in ("webhook", "email"):
            for m in self.sim.sqs.queues[queue].messages.values():
                try:
                    body = json.loads(m.body)
                    live[(body["reminder_id"], body["channel_id"], int(body["version"]))].append(
                        self.processed.get(m.id, 0.0)
                    )
                except (ValueError, KeyError, TypeError):
                    continue
        for rid in list(self.sim.store.items):
            reminder = self.sim.store.get(rid)
            if reminder is None:
                continue
            for cid, d in reminder.deliveries.items():
                received = live.get((rid, cid, reminder.version), [])
                since = max(
                    (parse_iso(a.at).timestamp() for a in d.history if a.detail == "endpoint_hold"),
                    default=parse_iso(d.parked_until).timestamp() - PARK_RENEW_SECONDS
                    if d.parked_until
                    else 0.0,
                )
                self._delivery(reminder, cid, d, sum(1 for at in received if at and at >= since))
        opstream.check_events(self.sim)
        for account, registration in list(getattr(self.sim.event_endpoints, "items", {}).items()):
            self._own_endpoint(f"{account}'s event endpoint", account, registration.endpoint_id)

    def _delivery(self, reminder: Any, cid: str, d: Any, live: int) -> None:
        where = f"{reminder.id}/{cid} ({reminder.account_id}, key {d.key})"
        self._own_endpoint(where, reminder.account_id, d.destination)
        delivered_lines = [a for a in d.history if a.decision == "delivered"]
        seen = self.delivered_keys.get((reminder.id, cid))
        if seen == d.key and d.state is not DeliveryState.DELIVERED:
            raise Violation("delivered_regressed", f"{where}: delivered, now {d.state.value}")
        if d.state is DeliveryState.DELIVERED:
            self.delivered_keys[(reminder.id, cid)] = d.key
            # Sends from now on (the checker's order, not a consumer's skewed clock) follow the record.
            self.delivered_mark.setdefault(d.key, len(self.sim.posts) + len(self.sim.emails))
        if d.state is DeliveryState.DELIVERED or delivered_lines:
            if d.type.value == "webhook":
                if d.key not in self.acknowledged and self.attested.get(d.key) != {reminder.account_id}:
                    raise Violation("delivered_without_acceptance", f"{where}: no receiver took {d.key}")
                fps = {a.fingerprint for a in delivered_lines if a.fingerprint and a.event == "attempt"}
                if fps and self.accepted_fps[d.key] and not fps & self.accepted_fps[d.key]:
                    raise Violation(
                        "two_bodies_one_key", f"{where}: the ledger's body is not the one accepted"
                    )
            elif d.key not in self.ses_keys:
                raise Violation("delivered_without_acceptance", f"{where}: SES never took {d.key}")
            elif d.state is DeliveryState.DELIVERED:
                emails.check_delivered_to(self.sim, where, d)
        if d.receiver_receipt:
            event_id = d.receiver_receipt.split("|")[-1]
            signers = self.receipt_signers.get((d.key, event_id))
            if signers and reminder.account_id not in signers:
                raise Violation("receipt_crossed_accounts", f"{where}: receipt signed by {sorted(signers)}")
        skipped = check_deferrals(reminder, d, self.deferrals_seen)
        if skipped:
            raise Violation("window_opening_skipped", f"{where}: {skipped}")
        if d.state is DeliveryState.DEAD_LETTER:
            self._dead_letter(where, d, reminder)
        parked = bool(d.parked_until) and parse_iso(d.parked_until).timestamp() > self.sim.now_ts()
        if parked and not d.state.terminal and live > PARKED_COPIES + self.extra_copies[reminder.id]:
            raise Violation("parked_copies", f"{where}: {live} live messages for a parked delivery")

    def _own_endpoint(self, where: str, account: str, destination: str) -> None:
        """A stored endpoint reference (a channel, an event registration) names its owner's endpoint."""
        from reminders.domain.endpoints import is_endpoint_id

        endpoint = self.sim.endpoint_store.get(destination) if is_endpoint_id(destination) else None
        if endpoint is not None and endpoint.account_id != account:
            raise Violation(
                "reference_crossed_accounts", f"{where}: names {endpoint.account_id}'s endpoint {destination}"
            )

    def _dead_letter(self, where: str, d: Any, reminder: Any) -> None:
        reason = d.dead_letter_reason or ""
        keys = reason_keys(reminder, d)
        for judge in self.dead_letter_judges:
            judge(where, reminder, d, keys)
        if d.type.value != "webhook":
            self._email_dead_letter(where, reason, keys, reminder)
            return
        refused = [s for k in keys for s in self.refused.get(k, [])]
        acknowledged = any(k in self.acknowledged for k in keys)
        if (
            reason == "permanent_failure"
            and not any(400 <= s < 500 and s not in (408, 409, 425, 429) for s in refused)
            and not self._cannot_render(reminder)
        ):
            raise Violation(
                "dead_letter_disagrees", f"{where}: permanent_failure, receiver answered {refused}"
            )
        if reason == "receiver_aborted":
            raise Violation("dead_letter_disagrees", f"{where}: receiver_aborted, no receiver aborted")
        if reason == "conflict_unconfirmed" and 409 not in refused and not acknowledged:
            raise Violation("dead_letter_disagrees", f"{where}: conflict_unconfirmed without a 409")
        if reason == "attempts_exhausted" and not refused and not self.unanswered & set(keys):
            raise Violation("dead_letter_disagrees", f"{where}: attempts_exhausted without a failed attempt")

    def _email_dead_letter(self, where: str, reason: str, keys: list[str], reminder: Any) -> None:
        """An email's dead letter against SES's answers (the model refuses nothing permanently: it
        throttles, or takes the email and loses the answer)."""
        answers = [a for k in keys for a in self.sim.ses_trace.get(k, [])]
        if reason == "permanent_failure" and not self._cannot_render(reminder, email=True):
            raise Violation("dead_letter_disagrees", f"{where}: permanent_failure, SES answered {answers}")
        if reason == "attempts_exhausted" and not [a for a in answers if a not in ("accepted", "throttle")]:
            raise Violation("dead_letter_disagrees", f"{where}: attempts_exhausted, SES answered {answers}")
        if reason in ("conflict_unconfirmed", "receiver_aborted"):
            raise Violation("dead_letter_disagrees", f"{where}: {reason} for an email")

    def _cannot_render(self, reminder: Any, *, email: bool = False) -> bool:
        """The account registered the version its reminder names (maybe after the reminder was
        created: the create's check then had nothing to check) and it cannot render the data."""
        from reminders.domain.errors import ValidationError
        from reminders.domain.templates import RenderError
        from reminders.services.templating import render_version

        tv = self.sim.template_store.items.get(
            (reminder.account_id, reminder.template_id, reminder.template_version)
        )
        if tv is None or not (tv.webhook_rendered or email):
            return False
        try:
            render_version(tv, reminder.locale, reminder.data)
        except (RenderError, ValidationError):
            return True
        return False


def reason_keys(reminder: Any, d: Any) -> list[str]:
    """The keys a dead letter's reason may have been earned under: its own; and, when a ``resend``
    line follows its last dead-letter line (``resend: true`` on a dead letter gives it a new key for
    its redrive and keeps the reason the old key earned, domain/corrections.resend_generation), every
    earlier key of the delivery too."""
    from reminders.domain.models import delivery_key

    last_dead = max((i for i, a in enumerate(d.history) if a.decision == "dead_letter"), default=-1)
    last_resend = max((i for i, a in enumerate(d.history) if a.event == "resend"), default=-1)
    if not d.resend or last_resend < last_dead:
        return [d.key]
    return [
        delivery_key(reminder.account_id, reminder.key, d.channel_id, reminder.generation, n)
        for n in range(d.resend + 1)
    ]


def _email_text(raw: bytes) -> str:
    """An email's subject and every text part, decoded (MIME transfer encodings undone)."""
    from email import message_from_bytes, policy

    msg = message_from_bytes(raw, policy=policy.default)
    parts = [str(msg.get("subject", ""))]
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            parts.append(str(part.get_content()))
    return "\n".join(parts)


def _code(answer: Any) -> str:
    return str(answer.get("error", "")) if isinstance(answer, dict) else ""


def rid_of(body: str) -> str:
    try:
        return str(json.loads(body).get("reminder_id", ""))
    except (ValueError, AttributeError):
        return ""
