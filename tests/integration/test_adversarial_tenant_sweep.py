"""A second tenant as an adversary, permanently (issue 24; MISSION §8).

Two accounts share one deployment on moto, each acting through its own IAM principal, through the
API handler (tests/support/tenants.py builds them). Account B — holding every secret its own account
legitimately holds, the stack's channel secret included while bare-URL webhooks are signed with it —
names account A's ids, business keys, endpoints (registered, and implicit: a hash of A's account
and origin), event endpoint, page cursors, suppression hashes, unsubscribe tokens and receipts
wherever a route or a body field takes one, on create and on correction. Every answer must equal
the one a truly missing object gets (same status, same body once the names are replaced), A's
stored items must be unchanged, and no webhook POST that verifies with a secret A holds carries B's
content (deliveries go to real local HTTP receivers that record each POST).

The operations come from ``/openapi.json`` through the catalogue shared with the explorer
(``reminders_ops.proof.routes``, keyed by method and path template): an operation of the document,
or a reference of one, that no case here sweeps fails
``test_every_operation_and_reference_of_the_document_is_swept``. Cases that act on every route of
a kind (by id, acting for an account, static) take their routes from the catalogue.

The known defects of issue 24 (items 1-4) were committed here as strict xfails naming the item
(ae2569a) and pass since their fixes.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
from reminders.domain.models import delivery_key, reminder_id
from reminders.handlers.delivery import email_handler
from reminders_ops.proof.routes import CATALOGUE, ROUTES, Reach, Ref, operations, stale, uncovered
from standardwebhooks.webhooks import Webhook

from tests.support.lambda_runtime import call_api
from tests.support.tenants import (
    A_TEMPLATE,
    A_TEMPLATE_BODY,
    LATER,
    NOW,
    PA,
    PB,
    SHARED,
    A,
    AUnchanged,
    B,
    World,
    a_namespace,
    as_a,
    as_b,
    content_owner,
    create,
    drain,
    reminder_body,
    signed_crossings,
    two_tenants,
    webhook,
)

NOBODY = "acct-nobody"  # an account no principal is granted and nothing is stored for
MISSING_REMINDER = "rem_" + "0" * 32
MISSING_ENDPOINT = "ep_" + "0" * 32
MISSING_HASH = "k_" + "0" * 32


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with two_tenants() as w:
        yield w


@pytest.fixture(autouse=True)
def _restored(world: World) -> Iterator[None]:
    """Every case starts from the world as built."""
    yield
    world.restore()


# -- what every case asserts --------------------------------------------------------------------------
#: (METHOD, path template, where): the parts of the catalogue some case below acts on as B ("*": the
#: operation itself). Filled at import by ``sweeps``; the coverage test compares it with the catalogue.
SWEPT: set[tuple[str, str, str]] = set()


def sweeps(method: str, path: str, *where: str) -> tuple[str, str]:
    assert (method, path) in CATALOGUE, f"{method} {path} is not in the catalogue"
    SWEPT.update((method, path, w) for w in ("*", *where))
    return method, path


def sweeping(method: str, path: str, *where: str) -> Callable[[Any], Any]:
    """Marks a case as sweeping (method, path) and the references ``where`` (registered at import)."""
    sweeps(method, path, *where)
    return lambda case: case


def normalised(answer: tuple[int, Any], names: dict[str, str]) -> tuple[int, Any]:
    """The answer with each named reference replaced by its placeholder (messages may name the id)."""
    status, body = answer
    text = json.dumps(body, sort_keys=True)
    for real, placeholder in names.items():
        text = text.replace(real, placeholder)
    return status, json.loads(text)


def assert_as_missing(foreign: tuple[int, Any], missing: tuple[int, Any], ref: str, missing_ref: str) -> None:
    """Account B naming A's object got exactly what naming an object that does not exist gets."""
    assert normalised(foreign, {ref: "<ref>"}) == normalised(missing, {missing_ref: "<ref>"}), (
        f"another account's {ref} answered {foreign}; a missing one {missing}"
    )


# -- the catalogue is the document ----------------------------------------------------------------------
def test_every_operation_and_reference_of_the_document_is_swept(world: World) -> None:
    status, document = call_api("GET", "/openapi.json")
    assert status == 200
    assert uncovered(document) == [], "operations of /openapi.json missing from reminders_ops.proof.routes"
    assert stale(document) == [], "catalogue entries /openapi.json no longer has"
    wanted = {(r.method, r.path, w) for r in ROUTES for w in ("*", *(where for where, _ in r.refs))}
    assert sorted(wanted - SWEPT) == [], "operations or references of the catalogue no case sweeps"


def test_an_operation_the_catalogue_does_not_know_is_reported_when_the_document_grows() -> None:
    document = {
        "paths": {"/reminders/{reminder_id}/snooze": {"post": {}, "parameters": []}, "/health": {"get": {}}}
    }
    assert operations(document) == {("POST", "/reminders/{reminder_id}/snooze"), ("GET", "/health")}
    assert uncovered(document) == [("POST", "/reminders/{reminder_id}/snooze")]


# -- routes that read no stored object ------------------------------------------------------------------
STATIC = [sweeps(r.method, r.path) for r in ROUTES if r.reach is Reach.STATIC]


@pytest.mark.parametrize(("method", "path"), STATIC, ids=[f"{m} {p}" for m, p in STATIC])
def test_a_static_route_answers_b_as_it_answers_a_and_no_one_when_b_calls_it(
    world: World, method: str, path: str
) -> None:
    with AUnchanged(world):
        assert as_b(method, path) == as_a(method, path) == call_api(method, path, principal=None)


# -- objects named by id in the path: another account's reads as missing --------------------------------
def _by_id(ref: Ref) -> list[tuple[str, str]]:
    return [
        sweeps(r.method, r.path, w)
        for r in ROUTES
        if r.reach is Reach.BY_ID
        for w, k in r.refs
        if k is ref and w.startswith("path.")
    ]


#: A valid body for each operation that takes one (valid, so the answer is decided by the reference).
def _bodies(w: World) -> dict[tuple[str, str], list[Any]]:
    later = (datetime.now(UTC) + timedelta(days=5)).isoformat()
    return {
        ("PATCH", "/reminders/{reminder_id}"): [
            {"due_at": later},
            {"channels": {"webhook-0": {"url": w.rb.url + "/mine"}}},
            {"data": {"owner": B}},
        ],
        ("PATCH", "/endpoints/{endpoint_id}"): [{"url": w.rb.url + "/mine"}, {"enabled": False}],
        ("POST", "/endpoints/{endpoint_id}/rotate-secret"): [None, {"expires_in_seconds": 0}],
    }


REMINDER_BY_ID = _by_id(Ref.REMINDER_ID)


@pytest.mark.parametrize(("method", "path"), REMINDER_BY_ID, ids=[f"{m} {p}" for m, p in REMINDER_BY_ID])
def test_another_accounts_reminder_answers_as_a_missing_one_when_b_names_its_id(
    world: World, method: str, path: str
) -> None:
    with AUnchanged(world):
        for body in _bodies(world).get((method, path), [None]):
            for rid in world.a_reminders:
                foreign = as_b(method, path.format(reminder_id=rid), body)
                missing = as_b(method, path.format(reminder_id=MISSING_REMINDER), body)
                assert_as_missing(foreign, missing, rid, MISSING_REMINDER)
                assert foreign[0] == 404


ENDPOINT_BY_ID = _by_id(Ref.ENDPOINT_ID)


@pytest.mark.parametrize(("method", "path"), ENDPOINT_BY_ID, ids=[f"{m} {p}" for m, p in ENDPOINT_BY_ID])
def test_another_accounts_endpoint_answers_as_a_missing_one_when_b_names_its_id(
    world: World, method: str, path: str
) -> None:
    """Registered and implicit (a hash of A's account and origin: B needs no leak to name it)."""
    with AUnchanged(world):
        for body in _bodies(world).get((method, path), [None]):
            for eid in world.a_endpoints:
                foreign = as_b(method, path.format(endpoint_id=eid), body)
                missing = as_b(method, path.format(endpoint_id=MISSING_ENDPOINT), body)
                assert_as_missing(foreign, missing, eid, MISSING_ENDPOINT)
                assert foreign[0] == 404


# -- acting for another account: as for an account no one has ------------------------------------------
def _acting_for(
    w: World, account: str
) -> dict[tuple[str, str], list[tuple[str, Any, dict[str, str] | None]]]:
    """Per operation that names the account it acts for: the requests (path, body, query) naming
    ``account``, each otherwise valid."""
    q = {"account_id": account}
    return {
        ("POST", "/reminders"): [
            (
                "/reminders",
                reminder_body(account, "b-acting", webhook(url=w.rb.url), LATER),
                None,
            )
        ],
        ("GET", "/reminders"): [
            ("/reminders", None, {**q, "key": w.keys["rem_a_future"]}),
            ("/reminders", None, q),
            ("/reminders", None, {**q, "state": "dead_letter"}),
        ],
        ("GET", "/reminders/preview"): [("/reminders/preview", None, q)],
        ("POST", "/endpoints"): [
            ("/endpoints", {"account_id": account, "url": w.rb.url, "bare_urls": True}, None)
        ],
        ("GET", "/accounts/{account_id}/event-endpoint"): [
            (f"/accounts/{account}/event-endpoint", None, None)
        ],
        ("PUT", "/accounts/{account_id}/event-endpoint"): [
            (f"/accounts/{account}/event-endpoint", {"endpoint_id": w.ids["ep_b"]}, None),
            (f"/accounts/{account}/event-endpoint", {"endpoint_id": w.ids["ep_a"]}, None),
        ],
        ("DELETE", "/accounts/{account_id}/event-endpoint"): [
            (f"/accounts/{account}/event-endpoint", None, None)
        ],
        ("GET", "/suppressions"): [("/suppressions", None, q)],
        ("PUT", "/templates/{template_id}/versions/{version}"): [
            (f"/templates/{A_TEMPLATE}/versions/1", {"account_id": account, **A_TEMPLATE_BODY}, None),
            (f"/templates/{A_TEMPLATE}/versions/2", {"account_id": account, **A_TEMPLATE_BODY}, None),
        ],
        ("GET", "/templates/{template_id}/versions"): [(f"/templates/{A_TEMPLATE}/versions", None, q)],
        ("GET", "/templates/{template_id}/versions/{version}"): [
            (f"/templates/{A_TEMPLATE}/versions/1", None, q)
        ],
        ("POST", "/templates/{template_id}/versions/{version}/retire"): [
            (f"/templates/{A_TEMPLATE}/versions/1/retire", None, q)
        ],
        ("POST", "/templates/{template_id}/versions/{version}/preview"): [
            (
                f"/templates/{A_TEMPLATE}/versions/1/preview",
                {"account_id": account, "data": {"secret_plan": "x"}},
                None,
            )
        ],
        ("DELETE", "/suppressions/{address_hash}"): [
            (f"/suppressions/{_a_hash(w)}", None, q),
            (f"/suppressions/{_a_hash(w)}", None, {**q, "scope": "renewal"}),
        ],
    }


def _a_hash(w: World) -> str:
    (entry,) = [i for i in w.snapshot if i["pk"] == f"SUP#{A}"]
    return str(entry["sk"]).split("#")[0]


ACTING = [
    sweeps(r.method, r.path, w)
    for r in ROUTES
    if r.reach is Reach.ACCOUNT
    for w, k in r.refs
    if k is Ref.ACCOUNT_ID
]


@pytest.mark.parametrize(("method", "path"), ACTING, ids=[f"{m} {p}" for m, p in ACTING])
def test_acting_for_another_account_answers_as_for_an_account_no_one_has_when_b_names_account_a(
    world: World, method: str, path: str
) -> None:
    requests_a, requests_nobody = _acting_for(world, A), _acting_for(world, NOBODY)
    assert (method, path) in requests_a, f"no request of {method} {path} acting for another account"
    with AUnchanged(world):
        for (p_a, body_a, q_a), (p_n, body_n, q_n) in zip(
            requests_a[method, path], requests_nobody[method, path], strict=True
        ):
            foreign = as_b(method, p_a, body_a, query=q_a)
            missing = as_b(method, p_n, body_n, query=q_n)
            assert_as_missing(foreign, missing, A, NOBODY)
            assert foreign[0] == 403


# -- body and query fields that take another account's references -----------------------------------------
CREATE = sweeps("POST", "/reminders", "body.channels[].endpoint_id", "body.channels[].url", "body.key")


@pytest.mark.parametrize("field_name", ["endpoint_id", "url"])
def test_a_reminder_naming_another_accounts_endpoint_is_refused_as_a_missing_one_when_b_creates_it(
    world: World, field_name: str
) -> None:
    """``channels[].endpoint_id``, and an endpoint-shaped ``channels[].url`` (it names an endpoint)."""
    with AUnchanged(world):
        for eid in world.a_endpoints:
            channel = webhook(**{field_name: eid})
            foreign = as_b(*CREATE, reminder_body(B, "b-names-a", channel, LATER))
            missing = as_b(
                *CREATE,
                reminder_body(B, "b-names-a", webhook(**{field_name: MISSING_ENDPOINT}), LATER),
            )
            assert_as_missing(foreign, missing, eid, MISSING_ENDPOINT)
            assert foreign[0] == 422
    assert as_b("GET", "/reminders", query={"account_id": B, "key": "b-names-a"})[0] == 404  # nothing written


@sweeping("GET", "/reminders", "query.key")
def test_another_accounts_business_key_names_b_own_reminder_when_b_uses_it(world: World) -> None:
    """A's key under B's account is just B's key: looked up, it is missing; created, it is B's own."""
    lookup = ("GET", "/reminders")
    key = world.keys["rem_a_future"]
    with AUnchanged(world):
        foreign = as_b(lookup[0], lookup[1], query={"account_id": B, "key": key})
        missing = as_b(lookup[0], lookup[1], query={"account_id": B, "key": "never-used"})
        assert_as_missing(foreign, missing, key, "never-used")
        assert foreign[0] == 404
        status, created = as_b(*CREATE, reminder_body(B, key, webhook(url=world.rb.url), LATER))
        assert status == 201 and created["account_id"] == B
        assert created["id"] == reminder_id(B, key) != world.ids["rem_a_future"]


@sweeping("GET", "/reminders", "query.cursor")
def test_another_accounts_page_cursor_is_refused_as_a_missing_accounts_when_b_pages_with_it(
    world: World,
) -> None:
    """A's cursor, and a cursor as this API would issue it for an account no one has (its check is a
    plain digest, so anyone can make one): the same 422."""
    from reminders.domain.listing import ListQuery, decode_cursor, encode_cursor

    method, path = "GET", "/reminders"
    last = decode_cursor(ListQuery(account_id=A, state="dead_letter"), world.cursor_a)
    nobodys = encode_cursor(ListQuery(account_id=NOBODY, state="dead_letter"), last)
    q = {"account_id": B, "state": "dead_letter", "limit": "1"}
    with AUnchanged(world):
        foreign = as_b(method, path, query={**q, "cursor": world.cursor_a})
        missing = as_b(method, path, query={**q, "cursor": nobodys})
        assert_as_missing(foreign, missing, world.cursor_a, nobodys)
        assert foreign[0] == 422


@sweeping("GET", "/reminders", "query.account_id")
@sweeping("GET", "/reminders/preview", "query.account_id")
def test_b_listing_and_preview_answer_as_for_an_account_with_nothing_when_a_has_reminders(
    world: World,
) -> None:
    """B's own listing and preview (due index part) read as an empty account's do, as the operator
    sees one, and name nothing of A's: A's dead letters and its reminder due in ten minutes are in
    A's views, not in B's (B has nothing due, nothing needing attention)."""
    a_views = [
        as_a("GET", "/reminders", query={"account_id": A, "state": "dead_letter"}),
        as_a("GET", "/reminders/preview", query={"account_id": A, "next_minutes": "15"}),
    ]
    assert {world.ids["rem_a_dead_1"], world.ids["rem_a_soon"]} <= set(
        re.findall(r"rem_[0-9a-f]{32}", str(a_views))
    )
    with AUnchanged(world):
        for path, q in (
            ("/reminders", {"state": "dead_letter"}),
            ("/reminders", {}),
            ("/reminders/preview", {"next_minutes": "15"}),
        ):
            mine = as_b("GET", path, query={**q, "account_id": B})
            empty = call_api("GET", path, query={**q, "account_id": NOBODY})  # the operator, all accounts
            drop = {"from", "until", "queues"}  # the clock; the queues: the next test
            assert mine[0] == empty[0] == 200
            assert not re.findall(r"rem_[0-9a-f]{32}", json.dumps(mine[1])), mine
            assert not mine[1].get("items") and not mine[1].get("per_minute"), mine
            assert {k: v for k, v in mine[1].items() if k not in drop} == {
                k: v for k, v in empty[1].items() if k not in drop | {"account_id"}
            } | ({"account_id": B} if "account_id" in mine[1] else {})


@sweeping("GET", "/reminders/preview", "query.account_id")
def test_b_preview_counts_none_of_a_queued_messages_when_a_has_messages_queued(world: World) -> None:
    method, path = "GET", "/reminders/preview"
    q = {"account_id": B, "next_minutes": "1"}
    before = as_b(method, path, query=q)
    create(PA, reminder_body(A, "a-now", webhook(url=world.ra_bare.url + "/hooks"), NOW))
    after = as_b(method, path, query=q)
    assert before[0] == after[0] == 200
    assert after[1].get("queues") == before[1].get("queues"), "B's preview counts A's queued messages"


@sweeping("PUT", "/accounts/{account_id}/event-endpoint", "body.endpoint_id")
def test_another_accounts_endpoint_is_refused_as_a_missing_one_when_b_registers_it_for_events(
    world: World,
) -> None:
    method, path = "PUT", "/accounts/{account_id}/event-endpoint"
    with AUnchanged(world):
        for eid in world.a_endpoints:
            foreign = as_b(method, path.format(account_id=B), {"endpoint_id": eid})
            missing = as_b(method, path.format(account_id=B), {"endpoint_id": MISSING_ENDPOINT})
            assert_as_missing(foreign, missing, eid, MISSING_ENDPOINT)
            assert foreign[0] == 422
    assert as_b("GET", f"/accounts/{B}/event-endpoint")[0] == 404  # nothing registered


@sweeping("PATCH", "/reminders/{reminder_id}", "body.channels.<cid>.url")
def test_a_correction_naming_another_accounts_endpoint_is_refused_as_at_creation_when_b_patches_a_channel(
    world: World,
) -> None:
    """``channels.<cid>.url`` = A's ``ep_…`` (registered or implicit): refused as creation refuses it,
    exactly as a missing endpoint is, and B's reminder keeps its destination."""
    method, path = "PATCH", "/reminders/{reminder_id}"
    rid = world.ids["rem_b_future"]
    with AUnchanged(world):
        for eid in world.a_endpoints:
            foreign = as_b(method, path.format(reminder_id=rid), {"channels": {"webhook-0": {"url": eid}}})
            assert foreign[0] == 422, f"B's correction to A's endpoint answered {foreign[0]}"
            missing = as_b(
                method, path.format(reminder_id=rid), {"channels": {"webhook-0": {"url": MISSING_ENDPOINT}}}
            )
            assert_as_missing(foreign, missing, eid, MISSING_ENDPOINT)
    assert as_b("GET", f"/reminders/{rid}")[1]["deliveries"][0]["destination"] == world.ids["ep_b"]


# -- templates (issue 30): an account's own names, as business keys are ------------------------------------
TEMPLATE_READS = [
    sweeps(r.method, r.path, "path.template_id")
    for r in ROUTES
    if r.path.startswith("/templates/") and r.method != "PUT"
]
MISSING_TEMPLATE = "never-registered"


@pytest.mark.parametrize(("method", "path"), TEMPLATE_READS, ids=[f"{m} {p}" for m, p in TEMPLATE_READS])
def test_another_accounts_template_answers_as_a_missing_one_when_b_names_its_id(
    world: World, method: str, path: str
) -> None:
    """A's template id under B's own account is an id B never registered: read, listed, retired or
    previewed, it answers exactly as one no account has (404), and A's versions are unchanged."""
    body = {"account_id": B, "data": {"secret_plan": "x"}} if path.endswith("/preview") else None
    q = None if body else {"account_id": B}
    with AUnchanged(world):
        foreign = as_b(method, path.format(template_id=A_TEMPLATE, version=1), body, query=q)
        missing = as_b(method, path.format(template_id=MISSING_TEMPLATE, version=1), body, query=q)
        assert_as_missing(foreign, missing, A_TEMPLATE, MISSING_TEMPLATE)
        assert foreign[0] == 404


@sweeping("PUT", "/templates/{template_id}/versions/{version}", "path.template_id")
def test_another_accounts_template_id_names_b_own_template_when_b_writes_it(world: World) -> None:
    """B writing version 1 under A's template id writes B's own template (other content than A's:
    no 409 that would reveal A's), and A's version still renders A's content."""
    method, path = "PUT", "/templates/{template_id}/versions/{version}"
    mine = {**A_TEMPLATE_BODY, "locales": {"en": {"subject": "B", "text": "B", "html": "B"}}, "variables": {}}
    with AUnchanged(world):
        foreign = as_b(method, path.format(template_id=A_TEMPLATE, version=1), {"account_id": B, **mine})
        missing = as_b(
            method, path.format(template_id=MISSING_TEMPLATE, version=1), {"account_id": B, **mine}
        )
        for answer in (foreign, missing):
            answer[1].pop("created_at")  # the clock
        assert_as_missing(foreign, missing, A_TEMPLATE, MISSING_TEMPLATE)
        assert foreign[0] == 201 and foreign[1]["account_id"] == B
    got = as_a("GET", f"/templates/{A_TEMPLATE}/versions/1", query={"account_id": A})[1]
    assert got["locales"]["en"]["subject"] == A_TEMPLATE_BODY["locales"]["en"]["subject"]


@sweeping("POST", "/reminders", "body.template.id")
def test_a_reminder_naming_another_accounts_template_is_taken_as_one_naming_a_missing_id_when_b_creates_it(
    world: World,
) -> None:
    """A's template id (its version, and one A lacks) in B's reminder: the answer a never registered
    id gets (no 422 revealing A's versions or variables); B's email never renders A's content."""
    from tests.support.aws import sent_emails

    with AUnchanged(world):
        for version in (1, 99):
            answers = []
            for n, tid in enumerate((A_TEMPLATE, MISSING_TEMPLATE)):
                body = reminder_body(
                    B, f"b-tpl-{version}-{n}", [{"type": "email", "to": "carol@example.com"}], NOW
                )
                body["template"] = {"id": tid, "version": version}
                status, got = as_b(*CREATE, body)
                answers.append((status, got.get("field"), got.get("state")))
            assert answers[0] == answers[1] and answers[0][0] == 201, answers
        sent = len(sent_emails())
        drain(world.env["EMAIL_QUEUE_URL"], email_handler)
    assert not [m for m in sent_emails()[sent:] if "Plan " in str(getattr(m, "subject", ""))]


@sweeping("DELETE", "/suppressions/{address_hash}", "path.address_hash")
def test_removing_another_accounts_suppression_answers_as_a_missing_one_when_b_names_its_hash(
    world: World,
) -> None:
    method, path = "DELETE", "/suppressions/{address_hash}"
    a_hash = _a_hash(world)
    with AUnchanged(world):
        for scope in ({}, {"scope": "renewal"}, {"scope": "*"}):
            foreign = as_b(method, path.format(address_hash=a_hash), query={"account_id": B, **scope})
            missing = as_b(method, path.format(address_hash=MISSING_HASH), query={"account_id": B, **scope})
            assert_as_missing(foreign, missing, a_hash, MISSING_HASH)
            assert foreign[0] == 404


# -- public, signed routes ----------------------------------------------------------------------------------
UNSUBSCRIBE = sweeps("POST", "/unsubscribe/{token}", "path.token")


def _unsubscribe(token: str) -> tuple[int, Any]:
    method, path = UNSUBSCRIBE
    return call_api(method, path.format(token=token), raw="List-Unsubscribe=One-Click", principal=None)


def test_b_unsubscribe_link_suppresses_only_b_when_both_accounts_mail_one_address(world: World) -> None:
    """B's recipient unsubscribes from B; A's mail to the same address still goes out."""
    from tests.support.aws import sent_emails

    with AUnchanged(world):
        assert _unsubscribe(world.tokens["b_shared"]) == (200, {"status": "unsubscribed"})
    (entry,) = as_b("GET", "/suppressions", query={"account_id": B})[1]["entries"]
    assert entry["scope"] == "renewal"
    sent = len(sent_emails())
    create(PA, reminder_body(A, "a-mail-again", [{"type": "email", "to": SHARED}], NOW))
    drain(world.env["EMAIL_QUEUE_URL"], email_handler)
    assert [set(m.destinations) for m in sent_emails()[sent:]] == [{SHARED}]


def _retarget(token: str, account: str) -> str:
    """B's own token with its account field rewritten, its signature kept."""
    body, sig = token.split(".")
    fields = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode().split("\x1f")
    fields[1] = account
    return base64.urlsafe_b64encode("\x1f".join(fields).encode()).decode().rstrip("=") + "." + sig


def test_b_token_rewritten_to_name_another_account_is_refused_as_one_naming_no_account_when_b_edits_it(
    world: World,
) -> None:
    for_a, for_nobody = _retarget(world.tokens["b_shared"], A), _retarget(world.tokens["b_shared"], NOBODY)
    with AUnchanged(world):
        foreign, missing = _unsubscribe(for_a), _unsubscribe(for_nobody)
        assert_as_missing(foreign, missing, for_a, for_nobody)
        assert foreign[0] == 400


def _b_endpoint_secret(w: World) -> str:
    (secret,) = [s for s in w.secrets[B] if s != DEV_WEBHOOK_SECRET]
    return secret


RECEIPTS = sweeps("POST", "/inbound/receiver", "body.webhook_id+body.reminder_id")


def _receipt(webhook_id: str, rid: str, secret: str | None) -> tuple[int, Any]:
    """A receiver receipt as B can make one: signed with ``secret`` (None: a signature of garbage)."""
    from reminders.handlers.api import handler

    from tests.support.lambda_runtime import FakeContext, http_event

    now = datetime.now(UTC)
    doc = {
        "webhook_id": webhook_id,
        "reminder_id": rid,
        "status": "processed",
        "event_id": "evt-b-1",
        "event_time": now.isoformat(),
    }
    body = json.dumps(doc)
    msg_id = "msg_b_1"
    signature = Webhook(signing_key(secret or "whsec_" + base64.b64encode(b"b" * 32).decode())).sign(
        msg_id, now, body
    )
    event = http_event(*RECEIPTS, raw=body, principal=None)
    event["headers"].update(
        {"webhook-id": msg_id, "webhook-timestamp": str(int(now.timestamp())), "webhook-signature": signature}
    )
    resp = handler(event, FakeContext(function_name="api"))
    return resp["statusCode"], json.loads(resp["body"]) if resp.get("body") else None


_SIGNERS = ("garbage", "b_endpoint", "stack")
_TARGETS = {"registered": "webhook-0", "implicit": "webhook-1", "bare": "webhook-2"}
_RECEIPT_CASES = [
    pytest.param(signer, target, id=f"{signer}-{target}") for signer in _SIGNERS for target in _TARGETS
]


@pytest.mark.parametrize(("signer", "target"), _RECEIPT_CASES)
def test_a_receipt_for_another_accounts_delivery_answers_as_for_a_missing_one_when_b_signs_it(
    world: World, signer: str, target: str
) -> None:
    """B signs with nothing valid, with its own endpoint's secret, or with the stack's channel secret
    (its own bare-URL receivers verify with it): naming A's queued, never-attempted delivery."""
    secret = {
        "garbage": None,
        "b_endpoint": _b_endpoint_secret(world),
        "stack": DEV_WEBHOOK_SECRET,
    }[signer]
    wid, rid = world.ids[f"dlv_a_queued_{_TARGETS[target]}"], world.ids["rem_a_queued"]
    gone_wid, gone_rid = delivery_key(NOBODY, "k", "webhook-0"), reminder_id(NOBODY, "k")
    with AUnchanged(world):
        foreign = _receipt(wid, rid, secret)
        missing = _receipt(gone_wid, gone_rid, secret)
        assert normalised(foreign, {wid: "<w>", rid: "<r>"}) == normalised(
            missing, {gone_wid: "<w>", gone_rid: "<r>"}
        )


def test_a_receipt_mixing_b_webhook_id_with_a_reminder_id_answers_as_a_missing_one(world: World) -> None:
    """B's own webhook id with A's reminder id, and A's webhook id with B's reminder id, signed with
    the secret that signs B's own receipts (accepted for B's own delivery: the signer is sound)."""
    b_secret, missing_rid = _b_endpoint_secret(world), reminder_id(NOBODY, "k")
    b_wid, b_rid = world.ids["dlv_b_future_webhook-0"], world.ids["rem_b_future"]
    with AUnchanged(world):
        for wid, rid in ((b_wid, world.ids["rem_a_queued"]), (world.ids["dlv_a_queued_webhook-0"], b_rid)):
            foreign, missing = _receipt(wid, rid, b_secret), _receipt(wid, missing_rid, b_secret)
            assert normalised(foreign, {rid: "<r>"}) == normalised(missing, {missing_rid: "<r>"})
    # B's own future delivery was never claimed: since issue 24 a receipt confirms only a delivery with
    # a claim to its destination, so it is refused like the others (the signer's soundness is shown by
    # tests/proof/test_tenant_signing.py, which has receipts for claimed deliveries accepted).
    assert _receipt(b_wid, b_rid, b_secret)[0] == 401


# -- deliveries: no byte signed with A's secret carries B's content -----------------------------------------
def test_no_byte_signed_with_a_secret_carries_b_content_when_b_registers_endpoints_at_a_receivers(
    world: World,
) -> None:
    """URLs belong to no one: B may register an endpoint of its own at A's receiver's URL, and take
    its own implicit endpoint of the origin A took one of (its id is a hash of B's account and the
    origin, not A's). What B sends there is signed with B's secrets only: A's receivers refuse it."""
    with AUnchanged(world):
        status, ep = as_b("POST", "/endpoints", {"account_id": B, "url": world.ra_ep.url + "/hooks"})
        assert status == 201, ep
        status, imp = as_b(
            "POST", "/endpoints", {"account_id": B, "url": world.ra_imp.url, "bare_urls": True}
        )
        assert status == 201 and imp["id"] not in world.a_endpoints, imp
        world.secrets[B].update(
            {ep["secret"]: "B's second endpoint secret", imp["secret"]: "B's origin secret"}
        )
        try:
            create(PB, reminder_body(B, "b-at-a-url", webhook(endpoint_id=ep["id"]), NOW))
            create(PB, reminder_body(B, "b-at-a-origin", webhook(url=world.ra_imp.url + "/hooks"), NOW))
            drain(world.env["WEBHOOK_QUEUE_URL"])
            crossings = signed_crossings(world)
        finally:
            del world.secrets[B][ep["secret"]], world.secrets[B][imp["secret"]]
    assert [content_owner(p.body) for p in world.ra_ep.posts + world.ra_imp.posts] == [B, B]
    assert crossings == []


def test_no_byte_signed_with_a_secret_carries_b_content_when_b_sends_bare_urls_to_a_receivers(
    world: World,
) -> None:
    """B's bare URLs at A's receivers (one verifying with the stack's channel secret, one with A's
    origin endpoint secret): B's content must verify with no secret A holds. A webhook that still
    carries the stack's signature beside its own (the migration window of item 2) verifies at A's
    bare-URL receiver: this case passes once no webhook carries it."""
    with AUnchanged(world):
        for rec in (world.ra_bare, world.ra_imp):
            create(
                PB,
                reminder_body(B, f"b-bare-{rec.url[-5:]}", webhook(url=rec.url + "/hooks"), NOW),
            )
        drain(world.env["WEBHOOK_QUEUE_URL"])
    assert len(world.ra_bare.posts) == len(world.ra_imp.posts) == 1
    assert signed_crossings(world) == []


def test_no_byte_signed_with_a_secret_carries_b_content_when_b_corrects_a_channel_to_a_endpoint(
    world: World,
) -> None:
    """B re-points queued webhooks at A's endpoints (registered and implicit), whatever the answer to
    the correction: nothing of B's is signed with A's secrets, B's sends touch neither A's rate
    buckets nor its endpoint health, and A's own delivery through its endpoint, sent by the same
    consumer right after, is delivered. Every violation is listed."""
    world.ra_ep.status = world.ra_imp.status = 500  # a failure of B's would count against A's endpoint
    before = a_namespace(world)
    for n, eid in enumerate(world.a_endpoints):
        body = reminder_body(B, f"b-repoint-{n}", webhook(url=world.rb.url + "/hooks"), NOW)
        r = create(PB, body)
        as_b("PATCH", f"/reminders/{r['id']}", {"channels": {"webhook-0": {"url": eid}}})
    drain(world.env["WEBHOOK_QUEUE_URL"])
    after = a_namespace(world)
    problems = signed_crossings(world)
    problems += [
        f"B's sends changed A's item {k}"
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    ]
    world.ra_ep.status = 200
    mine = create(
        PA, reminder_body(A, "a-after-b", [{"type": "webhook", "endpoint_id": world.ids["ep_a"]}], NOW)
    )
    drain(world.env["WEBHOOK_QUEUE_URL"])
    (d,) = as_a("GET", f"/reminders/{mine['id']}")[1]["deliveries"]
    if d["state"] != "delivered":
        problems.append(f"A's own delivery through its endpoint ended {d['state']} {d['dead_letter_reason']}")
    named = "\n".join(problems)
    for name, ref in world.ids.items():
        named = named.replace(ref, name)
    assert not problems, named
