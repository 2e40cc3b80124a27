"""The explorer's actions: every operation of the route catalogue (``proof/routes.py``, itself checked
against ``/openapi.json``) as a request builder keyed by ``(METHOD, path template)``, plus the
operator's, the platform's and the faults' actions. ``uncovered_operations(document)`` lists the
document's operations no builder serves (a test fails on any).

An action is ``(name, args)``, JSON-serialisable: a trace prints and replays as it is. Arguments
name things symbolically — an account, an index into what that account owns *when the action
runs* — so a shrunk trace (earlier actions removed) still means something.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from reminders.domain.schedule import iso
from reminders.domain.templates import MAX_VERSION_NUMBER

from reminders_ops.proof.routes import CATALOGUE, uncovered

from .faults import LOSABLE
from .quiet_hours import local_time_fields
from .sim import RECEIVER_KINDS, Sim, url_of

Action = tuple[str, dict[str, Any]]


@dataclass
class Request:
    method: str
    path: str
    body: Any = None
    query: dict[str, str] | None = None
    headers: dict[str, str] | None = None
    raw: bytes | None = None
    public: bool = False


# -- what each account holds (its own, as the API answered it) ------------------------------------------
class Holdings:
    """Per account: reminder ids, endpoint ids and secrets, delivery keys, unsubscribe tokens — what
    it legitimately learnt from the API's answers and its own receivers."""

    def __init__(self, accounts: tuple[str, ...]) -> None:
        self.reminders: dict[str, list[str]] = {a: [] for a in accounts}
        self.endpoints: dict[str, list[str]] = {a: [] for a in accounts}
        self.secrets: dict[str, list[str]] = {a: [] for a in accounts}
        self.keys: dict[str, list[tuple[str, str]]] = {a: [] for a in accounts}  # (rid, delivery key)
        self.tokens: dict[str, list[str]] = {a: [] for a in accounts}
        self.hashes: dict[str, list[str]] = {a: [] for a in accounts}
        self.versions: dict[str, int] = {}
        #: (template id, version) the account registered (issue 30), as the API answered them
        self.templates: dict[str, list[tuple[str, int]]] = {a: [] for a in accounts}

    def learn(self, account: str, answer: Any) -> None:
        if not isinstance(answer, dict):
            return
        rid = answer.get("id")
        if isinstance(rid, str) and rid.startswith("rem_") and rid not in self.reminders[account]:
            self.reminders[account].append(rid)
        if isinstance(rid, str) and rid.startswith("ep_") and rid not in self.endpoints[account]:
            self.endpoints[account].append(rid)
        if isinstance(answer.get("secret"), str):
            self.secrets[account].append(answer["secret"])
        if isinstance(rid, str) and isinstance(answer.get("version"), int):
            self.versions[rid] = answer["version"]
        tid, tver = answer.get("template_id"), answer.get("version")
        if isinstance(tid, str) and isinstance(tver, int) and (tid, tver) not in self.templates[account]:
            self.templates[account].append((tid, tver))
        for d in answer.get("deliveries") or []:
            key = d.get("key")
            if isinstance(rid, str) and isinstance(key, str) and (rid, key) not in self.keys[account]:
                self.keys[account].append((rid, key))
        for item in [*(answer.get("items") or []), *(answer.get("entries") or [])]:  # suppressions: entries
            h = item.get("address_hash") if isinstance(item, dict) else None
            if isinstance(h, str) and h not in self.hashes[account]:
                self.hashes[account].append(h)


def pick(items: list[Any], i: int, missing: Any) -> Any:
    return items[i % len(items)] if items else missing


MISSING_REMINDER = "rem_" + "0" * 32
MISSING_ENDPOINT = "ep_" + "0" * 32
TEMPLATE_IDS = ("renewal", "notice")


def template_marker(account: str) -> str:
    """Text every template an account writes carries: a receiver of another account's reminder must
    never see it (the checker's ``template_crossed_accounts``)."""
    return f"tpl:{account}"


class Ctx:
    """What a builder sees: the world, the holdings, the acting account and the one it names."""

    def __init__(self, sim: Sim, held: Holdings, args: Mapping[str, Any]) -> None:
        self.sim, self.held, self.args = sim, held, args
        self.actor: str = args["as"]
        #: whose objects the request names: the actor's own, or (the adversary) another account's
        self.target: str = args.get("target", self.actor)
        self.i: int = int(args.get("i", 0))
        self.v: int = int(args.get("v", 0))

    def rid(self) -> str:
        if "rid" in self.args:  # named outright (an interleaving's own call, interleave.py)
            return str(self.args["rid"])
        return str(pick(self.held.reminders[self.target], self.i, MISSING_REMINDER))

    def eid(self) -> str:
        return str(pick(self.held.endpoints[self.target], self.i, MISSING_ENDPOINT))

    def when(self, seconds: float) -> str:
        return iso(self.sim.clock.now() + timedelta(seconds=seconds))

    def foreign_string(self) -> str:
        """A string the adversary puts in every free field: another account's id, key, endpoint or token."""
        choices = [
            self.target,
            self.rid(),
            self.eid(),
            *(k for _, k in self.held.keys[self.target][:2]),
            *self.held.tokens[self.target][:1],
        ]
        return str(pick(choices, self.v, self.target))

    def template(self) -> tuple[str, int]:
        """A template (id, version): one the target registered (the adversary names another account's
        id under its own account), or one of the shared names, or the actor's private one."""
        held = self.held.templates[self.target]
        if held and self.i % 2:
            return pick(held, self.v, held[0])
        names = (*TEMPLATE_IDS, f"private-{self.actor}")
        return names[self.i % len(names)], 1 + (self.i + self.v) % 4

    def template_data(self) -> dict[str, Any]:
        """Data for a template: matching its variables, one missing, one wrongly typed."""
        v = (self.v // 3) % 4
        data: dict[str, Any] = {"owner": self.actor, "n": self.i}
        if v == 2:
            del data["n"]
        elif v == 3:
            data["n"] = "not-a-number"
        return data


# -- one builder per operation of the document ------------------------------------------------------------
def _health(c: Ctx) -> Request:
    return Request("GET", "/health")


def _openapi(c: Ctx) -> Request:
    return Request("GET", "/openapi.json")


def _channels(c: Ctx) -> list[dict[str, Any]]:
    kind = RECEIVER_KINDS[c.v % len(RECEIVER_KINDS)] if c.v % 5 else "dedupe"
    out: list[dict[str, Any]] = []
    if c.v % 3 == 2 and c.held.endpoints[c.target]:
        out.append({"type": "webhook", "endpoint_id": c.eid()})
    else:
        out.append({"type": "webhook", "url": url_of(c.target if c.v % 7 == 6 else c.actor, kind)})
    if c.v % 4 == 1:
        out.append({"type": "email", "to": f"user{c.i % 3}@{c.actor}.example.com"})
    return out


def _create(c: Ctx) -> Request:
    due = int(c.args.get("due", 60))
    # Half name an id no account registers (the generic email), half a template (maybe another's id).
    tid, tver = c.template() if c.v % 4 in (1, 2) else ("generic", 1)
    body: dict[str, Any] = {
        "key": f"k{int(c.args.get('key', c.i))}",
        "account_id": c.target if c.v % 2 else c.actor,  # the adversary names another account
        "kind": "renewal",
        "due_at": c.when(due),
        "channels": _channels(c),
        "template": {"id": tid, "version": tver},
        "data": {**c.template_data(), "note": c.foreign_string() if c.target != c.actor else "mine"},
    }
    if c.v % 6 == 5:
        body["locale"] = ("fr-CA", "de", "en")[c.i % 3]
    if c.v % 11 == 10:
        body["deliver_by"] = c.when(due + 600)
    local = local_time_fields(c, due)
    if "due_local" in local:
        del body["due_at"]
    body.update(local)
    return Request("POST", "/reminders", body)


def _find(c: Ctx) -> Request:
    q = {"account_id": c.target}
    if c.v % 2:
        q["key"] = f"k{c.i % 5}"
    return Request("GET", "/reminders", query=q)


def _preview(c: Ctx) -> Request:
    return Request("GET", "/reminders/preview", query={"account_id": c.target})


def _get(c: Ctx) -> Request:
    return Request("GET", f"/reminders/{c.rid()}")


def _patch(c: Ctx) -> Request:
    v = c.v % 5
    body: dict[str, Any]
    if v == 0:
        body = {"due_at": c.when(int(c.args.get("due", 120)))}
    elif v == 1:
        body = {"data": {"owner": c.actor, "note": c.foreign_string()}}
    elif v == 2:  # a channel to another destination: an endpoint id (maybe another account's) or a url
        target = c.eid() if c.held.endpoints[c.target] and c.i % 2 else url_of(c.actor, "plain", 1)
        body = {"channels": {"webhook-0": {"url": target}}}
    elif v == 3:
        body = {"data": {"owner": c.actor, "n": c.i}, "resend": True}
    elif c.i % 3 == 0:  # a correction to another version (maybe retired, missing, or not matching)
        body = {"template": {"version": c.template()[1]}}
    elif c.i % 3 == 1:
        body = {"template": {"version": 1 + c.v % 3}, "data": {**c.template_data(), "note": "moved"}}
    else:
        body = {"data": {**c.template_data(), "note": c.foreign_string()}}
    rid = c.rid()
    if v == 2 and c.target != c.actor and c.i % 2:  # the adversary's own reminder, another's endpoint
        rid = str(pick(c.held.reminders[c.actor], c.i, MISSING_REMINDER))
    headers = {"if-match": str(c.held.versions[rid])} if rid in c.held.versions and c.i % 2 else None
    return Request("PATCH", f"/reminders/{rid}", body, headers=headers)


def _cancel(c: Ctx) -> Request:
    return Request("DELETE", f"/reminders/{c.rid()}")


def _create_endpoint(c: Ctx) -> Request:
    kind = RECEIVER_KINDS[c.v % 2]  # dedupe or plain
    body = {
        "account_id": c.target if c.v % 3 == 2 else c.actor,
        "url": url_of(c.actor, kind, c.i % 2),
        "bare_urls": bool(c.v % 2),
        "description": c.foreign_string() if c.target != c.actor else "",
    }
    return Request("POST", "/endpoints", body)


def _get_endpoint(c: Ctx) -> Request:
    return Request("GET", f"/endpoints/{c.eid()}")


def _patch_endpoint(c: Ctx) -> Request:
    v = c.v % 3
    body: dict[str, Any] = (
        {"url": url_of(c.actor, "plain", 1)}
        if v == 0
        else {"enabled": bool(c.i % 2)}
        if v == 1
        else {"rate_per_second": 5}
    )
    return Request("PATCH", f"/endpoints/{c.eid()}", body)


def _delete_endpoint(c: Ctx) -> Request:
    return Request("DELETE", f"/endpoints/{c.eid()}")


def _enable(c: Ctx) -> Request:
    return Request("POST", f"/endpoints/{c.eid()}/enable")


def _disable(c: Ctx) -> Request:
    return Request("POST", f"/endpoints/{c.eid()}/disable")


def _rotate(c: Ctx) -> Request:
    body = None if c.v % 2 else {"expires_in_seconds": (0, 600, 3600)[c.i % 3]}
    return Request("POST", f"/endpoints/{c.eid()}/rotate-secret", body)


def _event_endpoint(method: str) -> Callable[[Ctx], Request]:
    def build(c: Ctx) -> Request:
        body = {"endpoint_id": c.eid()} if method == "PUT" else None
        # the adversary registers another account's endpoint for its own account's events
        account = c.actor if method == "PUT" and c.target != c.actor and c.v % 2 else c.target
        return Request(method, f"/accounts/{account}/event-endpoint", body)

    return build


def _suppressions(c: Ctx) -> Request:
    return Request("GET", "/suppressions", query={"account_id": c.target})


def _unsuppress(c: Ctx) -> Request:
    h = pick(c.held.hashes[c.target], c.i, "k_" + "0" * 32)
    return Request("DELETE", f"/suppressions/{h}", query={"account_id": c.target})


def _unsubscribe(c: Ctx) -> Request:
    token = pick(c.held.tokens[c.actor], c.i, "x.y")
    if c.target != c.actor and "." in token:  # the adversary rewrites the account in its own token
        payload, sig = token.split(".", 1)
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            raw = raw.replace(c.actor.encode(), c.target.encode())
            token = base64.urlsafe_b64encode(raw).decode().rstrip("=") + "." + sig
        except ValueError:
            pass
    return Request("POST", f"/unsubscribe/{token}", public=True)


def _receipt(c: Ctx) -> Request:
    """A receiver receipt signed with a secret the actor holds, naming a delivery of the target."""
    from reminders.adapters.secrets import signing_key
    from standardwebhooks.webhooks import Webhook

    from .receivers import verified_with

    posted = {p.key for p in c.sim.posts if p.accepted or p.status == 409}  # what a receiver took
    attempted = [pair for pair in c.held.keys[c.target] if pair[1] in posted]
    choices = attempted if attempted and c.v % 4 else c.held.keys[c.target]
    rid, key = pick(choices, c.i, (MISSING_REMINDER, "dlv_" + "0" * 32))
    doc = {
        "webhook_id": key,
        "reminder_id": rid,
        "event_id": f"evt-{c.actor}-{c.v % 4}",
        "status": "processed" if c.v % 3 else "rejected",
        "event_time": iso(c.sim.clock.now()),
    }
    first = next((p.at for p in c.sim.posts if p.key == key), None)
    if first is not None and c.v % 3 == 0:  # late: an earlier event's receipt after later ones
        doc["event_time"] = iso(datetime.fromtimestamp(first, tz=UTC) + timedelta(seconds=c.i))
    raw = json.dumps(doc).encode()
    # Signed with every secret the actor holds (the last few; Standard Webhooks allows several); a
    # receipt for a webhook the actor's own receiver took, with the secrets that webhook verified with
    # (the receiver holds its endpoint's secret, shown or not).
    secrets = c.held.secrets[c.actor][-4:]
    if c.target == c.actor and key in posted:
        secrets = verified_with(c.sim, key, c.actor) or secrets
    elif c.target == c.actor and c.v % 2:  # a receiver of its own endpoints, about a webhook never sent
        c.sim.learn_keys()
        secrets = [s for s, owner in c.sim.key_owner.items() if owner == c.actor][-12:] or secrets
    headers: dict[str, str] = {}
    if secrets:
        msg_id = f"msg_{c.v}_{c.i}"
        at = c.sim.clock.now()
        headers = {
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": " ".join(
                Webhook(signing_key(s)).sign(msg_id, at, raw.decode()) for s in secrets
            ),
        }
    return Request("POST", "/inbound/receiver", raw=raw, headers=headers, public=True)


# -- an account's email templates (issue 30) --------------------------------------------------------------
#: Template sources: valid ones (each carrying the author's marker) and hostile ones the API must refuse
#: with a 422 naming the field (sandbox escapes, unbounded loops, undeclared variables, bad syntax).
HOSTILE_SOURCES = (
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% for x in range(100000000) %}{{ x }}{% endfor %}",
    "{{ owner ",
    "{{ secret_of_another_account }}",
    "{{ 'x' * 1000000000 }}",
    "{% include 'other' %}",
)


def _template_body(c: Ctx) -> dict[str, Any]:
    mark = template_marker(c.actor)
    variables: dict[str, str] = {"owner": "string", "n": "integer"} if c.v % 3 else {"owner": "string"}
    n = " n={{ n }}" if "n" in variables else ""
    en = {
        "subject": f"[{mark}] renewal for {{{{ owner }}}}",
        "text": f"Hello {{{{ owner }}}},{n} ({mark})",
        "html": f"<p>{{{{ owner }}}}{n} {mark}</p>",
    }
    if c.v % 4 == 3:  # hostile: one field of the locale carries a source the sandbox must refuse
        field = ("subject", "text", "html")[c.i % 3]
        en[field] = f"{mark} " + HOSTILE_SOURCES[c.v % len(HOSTILE_SOURCES)]
    locales = {"en": en}
    if c.v % 5 == 1:
        locales["fr-CA"] = {**en, "subject": f"[{mark}] renouvellement {{{{ owner }}}}"}
    return {
        "account_id": c.target if c.target != c.actor and c.v % 2 else c.actor,
        "default_locale": "en",
        "locales": locales,
        "variables": variables,
        "webhook_rendered": bool(c.v % 2),
    }


def _tpath(c: Ctx, suffix: str = "") -> str:
    tid, ver = c.template()
    return f"/templates/{tid}/versions/{ver}{suffix}"


def _account_query(c: Ctx) -> dict[str, str]:
    return {"account_id": c.target if c.v % 2 else c.actor}


def _put_template(c: Ctx) -> Request:
    return Request("PUT", _tpath(c), _template_body(c))


def _list_templates(c: Ctx) -> Request:
    tid, _ = c.template()
    return Request("GET", f"/templates/{tid}/versions", query=_account_query(c))


def _get_template(c: Ctx) -> Request:
    return Request("GET", _tpath(c), query=_account_query(c))


def _retire_template(c: Ctx) -> Request:
    """Retire a version (one in three: retired versions accumulate, and creates naming them are 422s)."""
    tid, ver = c.template()
    ver = ver if c.v % 3 == 0 else MAX_VERSION_NUMBER
    return Request("POST", f"/templates/{tid}/versions/{ver}/retire", query=_account_query(c))


def _preview_template(c: Ctx) -> Request:
    body: dict[str, Any] = {"account_id": _account_query(c)["account_id"], "data": c.template_data()}
    if c.v % 4:
        body["locale"] = ("fr-CA", "en", "not a locale!")[c.i % 3]
    return Request("POST", _tpath(c, "/preview"), body)


BUILDERS: dict[tuple[str, str], Callable[[Ctx], Request]] = {
    ("GET", "/health"): _health,
    ("GET", "/openapi.json"): _openapi,
    ("POST", "/reminders"): _create,
    ("GET", "/reminders"): _find,
    ("GET", "/reminders/preview"): _preview,
    ("GET", "/reminders/{reminder_id}"): _get,
    ("PATCH", "/reminders/{reminder_id}"): _patch,
    ("DELETE", "/reminders/{reminder_id}"): _cancel,
    ("POST", "/endpoints"): _create_endpoint,
    ("GET", "/endpoints/{endpoint_id}"): _get_endpoint,
    ("PATCH", "/endpoints/{endpoint_id}"): _patch_endpoint,
    ("DELETE", "/endpoints/{endpoint_id}"): _delete_endpoint,
    ("POST", "/endpoints/{endpoint_id}/enable"): _enable,
    ("POST", "/endpoints/{endpoint_id}/disable"): _disable,
    ("POST", "/endpoints/{endpoint_id}/rotate-secret"): _rotate,
    ("GET", "/accounts/{account_id}/event-endpoint"): _event_endpoint("GET"),
    ("PUT", "/accounts/{account_id}/event-endpoint"): _event_endpoint("PUT"),
    ("DELETE", "/accounts/{account_id}/event-endpoint"): _event_endpoint("DELETE"),
    ("GET", "/suppressions"): _suppressions,
    ("DELETE", "/suppressions/{address_hash}"): _unsuppress,
    ("POST", "/unsubscribe/{token}"): _unsubscribe,
    ("POST", "/inbound/receiver"): _receipt,
    ("PUT", "/templates/{template_id}/versions/{version}"): _put_template,
    ("GET", "/templates/{template_id}/versions"): _list_templates,
    ("GET", "/templates/{template_id}/versions/{version}"): _get_template,
    ("POST", "/templates/{template_id}/versions/{version}/retire"): _retire_template,
    ("POST", "/templates/{template_id}/versions/{version}/preview"): _preview_template,
}


def uncovered_operations(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Operations of the document (and of the shared catalogue) the explorer has no action for."""
    return sorted(set(uncovered(document, BUILDERS)) | (set(CATALOGUE) - set(BUILDERS)))


#: Operator, platform and fault actions (name -> weight); the API's operations come from BUILDERS.
OTHER_ACTIONS: dict[str, int] = {
    "deliver": 20,  # a consumer invocation on a batch (its faults in its args)
    "dispatch": 8,  # the dispatcher's tick and shard workers
    "advance": 10,  # virtual time passes
    "stream": 3,  # the receipts table's stream applies its records (in order, replayed, reversed)
    "redrive": 2,  # the operator redrives a DLQ: bounded, a stale copy, or twice
    "purge": 1,  # the operator purges a delivery queue
    "ses_event": 3,  # SES's event for a sent email (delivery, bounce, complaint)
    "runbook": 1,  # producers / consumers paused and resumed
    "shards": 1,  # a redeploy with another shard count
    "backfill": 1,  # the upgrade to the tagged due index: old rows' entries, `reminders backfill-tags`
    "lose_answer": 2,  # the next store write lands but its answer is lost
    "receiver_fault": 3,  # the receiver's next answer: 5xx, 429, 400, timeout before/after accepting
    "ses_fault": 1,
    "duplicate": 2,  # SQS delivers a message twice
    "skew": 1,  # a consumer's clock drifts
    "stale": 1,  # eventually consistent reads lag by some writes
}

OPERATION_WEIGHT = 3  # each API operation's weight (create and correct get more, below)
HEAVY = {
    ("POST", "/reminders"): 12,
    ("PATCH", "/reminders/{reminder_id}"): 6,
    ("POST", "/endpoints"): 3,
    ("PUT", "/templates/{template_id}/versions/{version}"): 5,
    ("POST", "/inbound/receiver"): 6,  # receipts late, resent, out of order (the stream's records)
}


def operation_name(key: tuple[str, str]) -> str:
    return f"{key[0]} {key[1]}"


def _choices() -> tuple[list[str], list[int]]:
    names = [operation_name(k) for k in BUILDERS] + list(OTHER_ACTIONS)
    weights = [HEAVY.get(k, OPERATION_WEIGHT) for k in BUILDERS] + list(OTHER_ACTIONS.values())
    return names, weights


NAMES, WEIGHTS = _choices()
_OP = re.compile(r"^(GET|PUT|POST|PATCH|DELETE) (/.*)$")


def route_of(name: str) -> tuple[str, str] | None:
    m = _OP.match(name)
    return (m.group(1), m.group(2)) if m else None


def generate(
    rng: random.Random,
    accounts: tuple[str, ...],
    adversary: str,
    *,
    names: list[str] = NAMES,
    weights: list[int] = WEIGHTS,
) -> Action:
    """One action drawn from the seed: which (by ``weights``: a profile's, ``profiles.py``), who,
    whom it names, and its variant numbers."""
    name = rng.choices(names, weights)[0]
    actor = rng.choice(accounts)
    others = [a for a in accounts if a != actor]
    args: dict[str, Any] = {"as": actor, "i": rng.randrange(8), "v": rng.randrange(12)}
    if actor == adversary and rng.random() < 0.7:
        args["target"] = rng.choice(others)
    if name in ("POST /reminders", "PATCH /reminders/{reminder_id}"):
        args["due"] = rng.choice((-30, 0, 30, 90, 600, 1200, 3600, 7200))
    if name == "POST /reminders":
        args["key"] = rng.randrange(40)
    if name == "deliver":
        args = {"queue": rng.choice(("webhook", "webhook", "email")), "worker": rng.choice(("w1", "w2"))}
        args["n"] = rng.choice((1, 2, 10))
        if rng.random() < 0.15:
            args["crash"] = rng.choice(
                ("after:claim", "after:send", "after:save_delivery", "before:save_delivery", "before_ack")
            )
    elif name == "advance":
        args = {"seconds": rng.choice((5, 30, 61, 180, 600, 900, 3600))}
    elif name == "stream":
        args = {"order": rng.choice(("in_order", "in_order", "reversed", "replayed"))}
    elif name == "redrive":
        args = {
            "queue": rng.choice(("webhook", "email")),
            "mode": rng.choice(("bounded", "stale", "duplicate")),
        }
    elif name == "purge":
        args = {"queue": rng.choice(("webhook", "email"))}
    elif name == "ses_event":
        args = {"i": rng.randrange(8), "kind": rng.choice(("Delivery", "Bounce", "Complaint", "Send"))}
    elif name == "runbook":
        switches = ("pause_producers", "pause_consumers") + ("resume_producers", "resume_consumers") * 3
        args = {"switch": rng.choice(switches)}
    elif name == "shards":
        args = {"n": rng.choice((2, 4, 8))}
    elif name == "lose_answer":
        args = {"op": rng.choice(LOSABLE)}
    elif name == "receiver_fault":
        args = {
            "answer": rng.choice(("500", "429", "400", "timeout_before", "timeout_after", "timeout_after"))
        }
    elif name == "ses_fault":
        args = {"answer": rng.choice(("throttle", "timeout_after"))}
    elif name == "duplicate":
        args = {"queue": rng.choice(("webhook", "email", "dispatch"))}
    elif name == "skew":
        args = {
            "worker": rng.choice(("w1", "w2", "dispatch")),
            "seconds": rng.choice((-300, -30, 0, 30, 300)),
        }
    elif name == "stale":
        args = {"lag": rng.choice((0, 1, 2))}
    return name, args


def now_of(sim: Sim) -> datetime:
    return sim.clock.now()
