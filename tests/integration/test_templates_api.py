"""Email templates (issue 30) through the API handler and the email consumer, on moto: an account
registers versions (text and HTML in two locales), reminders name them, the email goes out as
``multipart/alternative`` rendered from the version; bad template input and bad data are 422s
naming the field, nothing written; another account's template reads as absent."""

from __future__ import annotations

import email
import email.policy
import json
from datetime import UTC, datetime, timedelta
from email.message import Message
from typing import Any

import boto3
import pytest
from reminders.handlers.delivery import email_handler

from tests.support.lambda_runtime import call_api, invoke_batch, receive

ACCOUNT = "acct-tpl"

VERSION = {
    "default_locale": "en",
    "locales": {
        "en": {
            "subject": "Your {{ plan }} plan renews on {{ renews_at.strftime('%d %B') }}",
            "text": "Hello {{ name }},\nyour {{ plan }} plan renews for {{ amount }} EUR.\n",
            "html": "<p>Hello {{ name }},</p><p>your <b>{{ plan }}</b> plan renews for {{ amount }} EUR.</p>",
        },
        "fr": {
            "subject": "Votre formule {{ plan }} est renouvelée",
            "text": "Bonjour {{ name }},\nvotre formule {{ plan }} : {{ amount }} EUR.\n",
            "html": "<p>Bonjour {{ name }},</p><p>formule <b>{{ plan }}</b> : {{ amount }} EUR.</p>",
        },
    },
    "variables": {"name": "string", "plan": "string", "amount": "decimal", "renews_at": "date-time"},
}
DATA = {"name": "Ann <ann@x>", "plan": "pro", "amount": 19.9, "renews_at": "2027-03-28T09:00:00+02:00"}


def _reminder(
    key: str, *, data: dict[str, Any] | None = None, version: int = 1, **more: Any
) -> dict[str, Any]:
    return {
        "key": key,
        "account_id": ACCOUNT,
        "kind": "renewal",
        "due_at": datetime.now(UTC).isoformat(),
        "channels": [{"type": "email", "to": "user@example.com"}],
        "template": {"id": "renewal", "version": version},
        "data": DATA if data is None else data,
        **more,
    }


def _register(version: int = 1, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    return call_api(
        "PUT", f"/templates/renewal/versions/{version}", {"account_id": ACCOUNT, **(body or VERSION)}
    )


def _sent() -> list[Message]:
    from tests.support.aws import sent_emails

    return [email.message_from_string(m.raw_data, policy=email.policy.default) for m in sent_emails()]


def _parts(msg: Message) -> dict[str, str]:
    out = {}
    for part in msg.walk():
        if not part.is_multipart():
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            out[part.get_content_type()] = payload.decode(part.get_content_charset() or "utf-8")
    return out


def test_email_is_rendered_from_the_accounts_template_as_multipart_when_the_reminder_names_a_version(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reminders import runtime

    monkeypatch.setenv("UNSUBSCRIBE_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("UNSUBSCRIBE_SIGNING_SECRET", "templates-test-unsubscribe-secret")
    runtime.reset()
    status, _ = _register()
    assert status == 201
    sqs = boto3.client("sqs")
    assert call_api("POST", "/reminders", _reminder("r-en"))[0] == 201
    assert call_api("POST", "/reminders", _reminder("r-fr", locale="fr-CA"))[0] == 201
    result = invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    assert result["batchItemFailures"] == []
    by_subject = {str(m["Subject"]): m for m in _sent()}
    en = by_subject["Your pro plan renews on 28 March"]
    assert en.get_content_type() == "multipart/alternative"
    assert en["List-Unsubscribe"] and en["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    parts = _parts(en)
    assert parts["text/plain"] == "Hello Ann <ann@x>,\nyour pro plan renews for 19.9 EUR.\n"
    assert "<p>Hello Ann &lt;ann@x&gt;,</p>" in parts["text/html"]
    fr = by_subject["Votre formule pro est renouvelée"]
    assert _parts(fr)["text/plain"].startswith("Bonjour Ann <ann@x>,")


def test_create_is_refused_naming_the_field_when_data_lacks_a_declared_variable_or_has_its_wrong_type(
    aws: dict[str, str],
) -> None:
    assert _register()[0] == 201
    missing = {k: v for k, v in DATA.items() if k != "plan"}
    status, body = call_api("POST", "/reminders", _reminder("r-missing", data=missing))
    assert (status, body["field"]) == (422, "data.plan")
    status, body = call_api("POST", "/reminders", _reminder("r-type", data={**DATA, "amount": "cheap"}))
    assert (status, body["field"]) == (422, "data.amount")
    status, body = call_api("POST", "/reminders", _reminder("r-version", version=2))
    assert (status, body["field"]) == (422, "template.version")
    for key in ("r-missing", "r-type", "r-version"):
        assert call_api("GET", "/reminders", query={"account_id": ACCOUNT, "key": key})[0] == 404


def test_a_version_is_registered_read_listed_retired_and_previewed(aws: dict[str, str]) -> None:
    status, written = _register()
    assert status == 201 and written["locales"]["fr"]["subject"] == VERSION["locales"]["fr"]["subject"]
    assert _register()[0] == 200  # the same content again: a retry
    q = {"account_id": ACCOUNT}
    status, got = call_api("GET", "/templates/renewal/versions/1", query=q)
    assert status == 200 and got == written
    assert _register(2)[0] == 201
    status, listed = call_api("GET", "/templates/renewal/versions", query=q)
    assert status == 200 and [v["version"] for v in listed["versions"]] == [1, 2]
    status, preview = call_api(
        "POST",
        "/templates/renewal/versions/1/preview",
        {"account_id": ACCOUNT, "data": DATA, "locale": "fr-ca"},
    )
    assert status == 200 and preview["locale"] == "fr"
    assert preview["subject"] == "Votre formule pro est renouvelée"
    assert preview["html"] == "<p>Bonjour Ann &lt;ann@x&gt;,</p><p>formule <b>pro</b> : 19.9 EUR.</p>"
    status, retired = call_api("POST", "/templates/renewal/versions/1/retire", query=q)
    assert status == 200 and retired["retired_at"]
    status, body = call_api("POST", "/reminders", _reminder("r-retired"))
    assert (status, body["field"]) == (422, "template.version")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"default_locale": "de"}, "default_locale"),
        ({"variables": {"name": "money"}}, "variables.name"),
        ({"locales": {"en": {"subject": "{{ nobody }}", "text": "t", "html": "h"}}}, "locales.en.subject"),
        (
            {"locales": {"en": {"subject": "s", "text": "{{ ''.__class__ }}{% for %}", "html": "h"}}},
            "locales.en.text",
        ),
        ({"locales": {"en_GB": {"subject": "s", "text": "t", "html": "h"}}}, "locales.en_GB"),
    ],
)
def test_a_version_is_refused_naming_the_field_when_its_input_is_bad(
    aws: dict[str, str], change: dict[str, Any], field: str
) -> None:
    status, body = _register(1, {**VERSION, **change})
    assert status == 422 and body["field"].removeprefix("body.").startswith(field), body
    assert call_api("GET", "/templates/renewal/versions/1", query={"account_id": ACCOUNT})[0] == 404


def test_a_version_written_again_with_other_content_is_a_conflict(aws: dict[str, str]) -> None:
    assert _register()[0] == 201
    other = {**VERSION, "variables": {**VERSION["variables"], "amount": "string"}}
    status, body = _register(1, other)
    assert (status, body["error"], body["field"]) == (409, "template_version_exists", "variables.amount")
    assert _register()[0] == 200  # the same content again: the stored version


def test_a_correction_is_refused_naming_the_field_when_its_new_version_or_data_does_not_fit(
    aws: dict[str, str],
) -> None:
    assert _register()[0] == 201
    later = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    status, r = call_api("POST", "/reminders", {**_reminder("r-fix"), "due_at": later})
    assert status == 201
    smaller = {**VERSION, "variables": {**VERSION["variables"], "seats": "integer"}}
    smaller["locales"] = {"en": {**VERSION["locales"]["en"], "text": "{{ seats }} seats"}}
    assert _register(2, smaller)[0] == 201
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"template": {"version": 2}})
    assert (status, body["field"]) == (422, "data.seats")
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"template": {"version": 3}})
    assert (status, body["field"]) == (422, "template.version")
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"data": {**DATA, "amount": True}})
    assert (status, body["field"]) == (422, "data.amount")
    assert call_api("GET", f"/reminders/{r['id']}")[1]["version"] == 1  # nothing written
    fixed = {"template": {"version": 2}, "data": {**DATA, "seats": 4}}
    status, body = call_api("PATCH", f"/reminders/{r['id']}", fixed)
    assert status == 200 and body["template"]["version"] == 2
    q = {"account_id": ACCOUNT}
    assert call_api("POST", "/templates/renewal/versions/2/retire", query=q)[0] == 200
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"data": {**DATA, "seats": 5}})
    assert status == 200, body  # pinned to a retired version: its data stays correctable
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"template": {"version": 1}})
    assert status == 200, body
    status, body = call_api("PATCH", f"/reminders/{r['id']}", {"template": {"version": 2}})
    assert (status, body["field"]) == (422, "template.version")  # back to a retired one: refused


def test_a_locale_is_refused_naming_the_field_when_it_is_not_a_bcp47_tag(aws: dict[str, str]) -> None:
    status, body = call_api("POST", "/reminders", _reminder("r-loc", locale="english please"))
    assert (status, body["field"]) == (422, "locale")
    status, body = call_api("POST", "/reminders", _reminder("r-loc2", locale="PT-br"))
    assert status == 201 and body["locale"] == "pt-BR"


@pytest.mark.parametrize("route", ["/templates/renewal/versions/1", "/templates/renewal/versions/1/preview"])
def test_a_template_body_is_refused_naming_the_body_when_it_is_a_json_array(
    aws: dict[str, str], route: str
) -> None:
    """Powertools would validate the array's first element as the body and drop the rest: a body is
    one object (the rule every route module shares), and nothing is written."""
    put = route.endswith("/1")
    one = {"account_id": ACCOUNT, **VERSION} if put else {"account_id": ACCOUNT, "data": DATA}
    raw = json.dumps([one, one])
    method = "PUT" if put else "POST"
    status, body = call_api(method, route, raw=raw)
    assert (status, body["field"], body["message"]) == (422, "body", "body: must be a single JSON object")
    assert call_api("GET", "/templates/renewal/versions/1", query={"account_id": ACCOUNT})[0] == 404
