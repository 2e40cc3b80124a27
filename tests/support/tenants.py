"""Two accounts of one deployment on moto, each acting through its own IAM principal, for the
adversarial-tenant sweep (tests/integration/test_adversarial_tenant_sweep.py).

Account A holds one of every stored thing: reminders scheduled, due soon, queued and never
attempted, dead-lettered (its listing pages); a registered endpoint, its implicit (bare-URL) endpoint
of an origin, and a bare URL signed with the stack's channel secret, each with its own recording
receiver on 127.0.0.1; an event endpoint; a suppression entry made by its recipient's unsubscribe
link; unsubscribe tokens. Account B holds an endpoint, a reminder it may correct and an unsubscribe
token of its own, and every secret its account legitimately holds.

``two_tenants()`` builds it (once per test module); ``World.restore()`` puts the table back as built, purges
the queues and drops the runtime's caches, so every case starts from the same world.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
from reminders.domain.endpoints import implicit_endpoint_id
from reminders.handlers.delivery import email_handler, webhook_handler
from standardwebhooks.webhooks import Webhook

from tests.support.aws import sent_emails, table
from tests.support.lambda_runtime import call_api, invoke_batch, receive

PA = "arn:aws:iam::111111111111:role/shop-a"
PB = "arn:aws:iam::111111111111:role/shop-b"
A, B = "acct-a", "acct-b"
ALICE, SHARED = "alice@example.com", "shared@example.com"  # A mails both; B mails SHARED too
UNSUBSCRIBE_BASE_URL = "https://api.example.com"
TOKEN_IN_HEADER = re.compile(r"<https://api\.example\.com/unsubscribe/([^>]+)>")
NOW = timedelta(seconds=-1)  # due: queued at once
LATER = timedelta(days=3)


# -- a receiver that records every POST ---------------------------------------------------------------
@dataclass
class Post:
    path: str
    body: bytes
    headers: dict[str, str]


class Recorder:
    """A local HTTP receiver (127.0.0.1) that records every POST and answers ``status`` (200), or
    400 to any path ending in ``/fail``."""

    def __init__(self) -> None:
        self.posts: list[Post] = []
        self.status = 200
        self.lock = threading.Lock()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                with rec.lock:
                    rec.posts.append(Post(self.path, raw, {k.lower(): v for k, v in self.headers.items()}))
                status = 400 if self.path.endswith("/fail") else rec.status
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the world ------------------------------------------------------------------------------------------
@dataclass
class World:
    env: dict[str, str]
    #: A's receivers: its registered endpoint's, its implicit (bare_urls) endpoint's, a bare URL's
    #: (signed with the stack's channel secret, so that receiver verifies with it). B's own.
    ra_ep: Recorder
    ra_imp: Recorder
    ra_bare: Recorder
    rb: Recorder
    ids: dict[str, str] = field(default_factory=dict)  # named objects: ep_a, imp_a, rem_a_future, ...
    keys: dict[str, str] = field(default_factory=dict)  # business keys of the named reminders
    #: account -> every secret it holds -> what it is (the stack's channel secret: every account's
    #: bare-URL receivers verify with it, so every account holds it)
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # unsubscribe tokens: a_alice, a_shared, b_shared
    cursor_a: str = ""  # a page cursor of A's attention listing
    snapshot: list[dict[str, Any]] = field(default_factory=list)

    @property
    def a_reminders(self) -> list[str]:
        return [v for k, v in self.ids.items() if k.startswith("rem_a_")]

    @property
    def a_endpoints(self) -> list[str]:
        return [self.ids["ep_a"], self.ids["imp_a"]]

    def restore(self) -> None:
        """The table as built, empty queues, receivers answering 200 with nothing recorded, cold
        caches (the sender's endpoint cache among them)."""
        keep = {(i["pk"], i["sk"]) for i in self.snapshot}
        with table().batch_writer() as batch:
            for item in scan():
                if (item["pk"], item["sk"]) not in keep:
                    batch.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
            for item in self.snapshot:
                batch.put_item(Item=item)
        purge(self.env)
        for r in (self.ra_ep, self.ra_imp, self.ra_bare, self.rb):
            r.posts.clear()
            r.status = 200
        runtime.reset()


def webhook(**target: str) -> list[dict[str, Any]]:
    """One webhook channel: ``url=…`` or ``endpoint_id=…``."""
    return [{"type": "webhook", **target}]


def as_a(method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    return call_api(method, path, body, principal=PA, **kw)


def as_b(method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    return call_api(method, path, body, principal=PB, **kw)


def reminder_body(
    account: str, key: str, channels: list[dict[str, Any]], due_in: timedelta
) -> dict[str, Any]:
    return {
        "key": key,
        "account_id": account,
        "kind": "renewal",
        "due_at": (datetime.now(UTC) + due_in).isoformat(),
        "channels": channels,
        "template": {"id": "renewal", "version": 1},
        "data": {"owner": account},
    }


def create(principal: str, body: dict[str, Any]) -> dict[str, Any]:
    status, got = call_api("POST", "/reminders", body, principal=principal)
    assert status == 201, got
    return got


def drain(queue_url: str, handler: Any = webhook_handler, rounds: int = 10) -> None:
    """Run the channel's consumer until its queue shows nothing visible (retries stay invisible)."""
    sqs = boto3.client("sqs")
    for _ in range(rounds):
        msgs = receive(sqs, queue_url)
        if not msgs:
            return
        invoke_batch(handler, sqs, queue_url, msgs)


def scan() -> list[dict[str, Any]]:
    t, items, kw = table(), [], {}
    while True:
        page = t.scan(**kw)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def tokens_by_account() -> dict[tuple[str, str], str]:
    """(account, recipient) -> the unsubscribe token in the sent email's List-Unsubscribe header."""
    out = {}
    for sent in sent_emails():
        raw = sent.raw_data.encode() if isinstance(sent.raw_data, str) else sent.raw_data
        msg = message_from_bytes(raw, policy=policy.default)
        m = TOKEN_IN_HEADER.fullmatch(str(msg["List-Unsubscribe"]))
        assert m is not None
        claim = base64.urlsafe_b64decode(m.group(1).split(".")[0] + "==").decode().split("\x1f")
        out[(claim[1], str(msg["To"]))] = m.group(1)
    return out


def build(w: World) -> None:
    # A: a registered endpoint, its implicit endpoint of an origin, an event endpoint.
    status, ep = as_a("POST", "/endpoints", {"account_id": A, "url": w.ra_ep.url + "/hooks"})
    assert status == 201, ep
    status, imp = as_a("POST", "/endpoints", {"account_id": A, "url": w.ra_imp.url, "bare_urls": True})
    assert status == 201, imp
    assert imp["id"] == implicit_endpoint_id(A, w.ra_imp.url)  # B can name it without any leak
    status, evt = as_a("PUT", f"/accounts/{A}/event-endpoint", {"endpoint_id": ep["id"]})
    assert status == 200, evt
    status, ep_b = as_b("POST", "/endpoints", {"account_id": B, "url": w.rb.url + "/hooks"})
    assert status == 201, ep_b
    w.ids.update(ep_a=ep["id"], imp_a=imp["id"], ep_b=ep_b["id"])
    stack = {DEV_WEBHOOK_SECRET: "the stack's channel secret"}
    w.secrets = {
        A: {ep["secret"]: "A's endpoint secret", imp["secret"]: "A's origin endpoint secret", **stack},
        B: {ep_b["secret"]: "B's endpoint secret", **stack},
    }

    # A: two dead letters (its listing pages), then email to ALICE and SHARED; B mails SHARED too.
    for n in (1, 2):
        r = create(PA, reminder_body(A, f"a-dead-{n}", webhook(url=w.ra_bare.url + "/fail"), NOW))
        w.ids[f"rem_a_dead_{n}"], w.keys[f"rem_a_dead_{n}"] = r["id"], r["key"]
    drain(w.env["WEBHOOK_QUEUE_URL"])
    for account, principal, to in ((A, PA, ALICE), (A, PA, SHARED), (B, PB, SHARED)):
        create(
            principal, reminder_body(account, f"mail-{to.split('@')[0]}", [{"type": "email", "to": to}], NOW)
        )
    drain(w.env["EMAIL_QUEUE_URL"], email_handler)
    tokens = tokens_by_account()
    w.tokens = {
        "a_alice": tokens[(A, ALICE)],
        "a_shared": tokens[(A, SHARED)],
        "b_shared": tokens[(B, SHARED)],
    }
    assert (
        call_api(
            "POST", f"/unsubscribe/{w.tokens['a_alice']}", raw="List-Unsubscribe=One-Click", principal=None
        )[0]
        == 200
    )

    # A: one of each delivery kind scheduled later, one due soon, one queued and never attempted.
    every_kind = [
        {"type": "webhook", "endpoint_id": w.ids["ep_a"]},
        {"type": "webhook", "url": w.ra_imp.url + "/hooks"},
        {"type": "webhook", "url": w.ra_bare.url + "/hooks"},
        {"type": "email", "to": "bob@example.com"},
    ]
    for name, due in (("future", LATER), ("soon", timedelta(minutes=10)), ("queued", NOW)):
        r = create(PA, reminder_body(A, f"a-{name}", every_kind, due))
        w.ids[f"rem_a_{name}"], w.keys[f"rem_a_{name}"] = r["id"], r["key"]
    status, page = as_a("GET", "/reminders", query={"account_id": A, "state": "dead_letter", "limit": "1"})
    assert status == 200 and page["next_cursor"], page
    w.cursor_a = page["next_cursor"]

    for name in [k for k in w.ids if k.startswith("rem_a_")]:
        for d in as_a("GET", f"/reminders/{w.ids[name]}")[1]["deliveries"]:
            w.ids[f"dlv_{name[4:]}_{d['channel_id']}"] = d["key"]

    # A: a template of its own (issue 30), named by a reminder.
    status, _ = as_a("PUT", f"/templates/{A_TEMPLATE}/versions/1", {"account_id": A, **A_TEMPLATE_BODY})
    assert status == 201
    r = create(
        PA,
        {
            **reminder_body(A, "a-templated", [{"type": "email", "to": "bob@example.com"}], LATER),
            "template": {"id": A_TEMPLATE, "version": 1},
            "data": {"secret_plan": "gold"},
        },
    )
    w.ids["rem_a_templated"], w.keys["rem_a_templated"] = r["id"], r["key"]

    # B: a reminder of its own it may correct.
    r = create(PB, reminder_body(B, "b-future", webhook(endpoint_id=w.ids["ep_b"]), LATER))
    w.ids["rem_b_future"] = r["id"]
    w.ids["dlv_b_future_webhook-0"] = r["deliveries"][0]["key"]


A_TEMPLATE = "a-invoice"
A_TEMPLATE_BODY: dict[str, Any] = {
    "default_locale": "en",
    "locales": {"en": {"subject": "Plan {{ secret_plan }}", "text": "{{ secret_plan }}", "html": "<b>x</b>"}},
    "variables": {"secret_plan": "string"},
}


def purge(env: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    for name, url in env.items():
        if name.endswith(("QUEUE_URL", "DLQ_URL")):
            sqs.purge_queue(QueueUrl=url)


def a_namespace(w: World) -> dict[tuple[str, str], dict[str, Any]]:
    """Every stored item of account A: its reminders, endpoints (uses and health), rate buckets,
    event endpoint, suppression entries, receipts, grants."""
    pks = {f"R#{r}" for r in w.a_reminders}
    pks |= {f"{p}#{e}" for e in [*w.a_endpoints, implicit_endpoint_id(A, w.ra_bare.url)] for p in ("E", "L")}
    pks |= {f"OPEV#{A}", f"SUP#{A}", f"P#{PA}", f"TPL#{A}#{A_TEMPLATE}"}
    pks |= {f"RCPT#{v}" for k, v in w.ids.items() if k.startswith("dlv_a_")}
    return {(i["pk"], i["sk"]): i for i in scan() if i["pk"] in pks}


class AUnchanged:
    """``with AUnchanged(world):`` — A's stored items are the same after the block as before it."""

    def __init__(self, w: World) -> None:
        self.w = w

    def __enter__(self) -> AUnchanged:
        self.before = a_namespace(self.w)
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            after = a_namespace(self.w)
            changed = sorted(
                k for k in self.before.keys() | after.keys() if self.before.get(k) != after.get(k)
            )
            assert not changed, f"account B's requests changed account A's items {changed}"


def content_owner(body: bytes) -> str | None:
    doc = json.loads(body)
    return doc.get("account_id") or (doc.get("data") or {}).get("account_id")


def _verifies(post: Post, secret: str) -> bool:
    try:
        Webhook(signing_key(secret)).verify(post.body, post.headers, json_parse=False)
        return True
    except Exception:
        return False


def signed_crossings(w: World) -> list[str]:
    """Every POST any receiver got that verifies with a secret of one account and carries another's
    content (the rule: no byte signed with A's secret carries B's content, and the reverse)."""
    out = []
    for name, rec in (
        ("A's endpoint", w.ra_ep),
        ("A's origin", w.ra_imp),
        ("A's bare URL", w.ra_bare),
        ("B", w.rb),
    ):
        for post in rec.posts:
            owner = content_owner(post.body)
            for account, secrets in w.secrets.items():
                out += [
                    f"{name} receiver got {owner}'s content signed with {what} (held by {account})"
                    for secret, what in secrets.items()
                    if account != owner and _verifies(post, secret)
                ]
    return out


@contextmanager
def two_tenants() -> Iterator[World]:
    """moto in-process with the stack's resources, both accounts granted and A's world built."""
    from moto import mock_aws
    from reminders_ops.local.faithful import faithful_moto

    from tests.support.aws import create_resources

    faithful_moto()
    recorders = [Recorder() for _ in range(4)]
    try:
        with mock_aws(), pytest.MonkeyPatch.context() as mp:
            env = create_resources()
            for k, v in env.items():
                mp.setenv(k, v)
            mp.setenv("REMINDERS_RETRY_BASE_SECONDS", "2")
            # Issue 24: the sweep checks the steady state after the stack secret's migration window
            # (tests/proof/test_tenant_signing.py covers the window): the cut-over was 8 days ago.
            mp.setenv("SIGNING_CUTOVER_AT", (datetime.now(UTC) - timedelta(days=8)).isoformat())
            mp.setenv("UNSUBSCRIBE_BASE_URL", UNSUBSCRIBE_BASE_URL)
            mp.setenv("UNSUBSCRIBE_SIGNING_SECRET", "sweep-unsubscribe-secret")
            # Every case starts with empty queues: moto's purge, without SQS's once a minute.
            mp.setenv("MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR", "false")
            runtime.reset()
            runtime.grant_store().grant(PA, A)
            runtime.grant_store().grant(PB, B)
            w = World(env, *recorders)
            build(w)
            w.snapshot = scan()
            w.restore()  # A's queued reminder stays queued in the table, never attempted
            yield w
            runtime.reset()
    finally:
        for r in recorders:
            r.close()
