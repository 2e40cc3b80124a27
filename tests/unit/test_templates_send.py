"""Sending from an account's template (issue 30) on the in-memory world: the email is
``multipart/alternative`` (text + HTML) with its List-Unsubscribe headers, byte-identical on a retry;
the webhook document is unchanged unless the version asks for the rendered subject and text; a
delivered single-channel item stays under 1 KB; a version that cannot render the stored data dead
letters without a send."""

from __future__ import annotations

import email
import email.policy
import json
import random
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from reminders.adapters.ses import build_mime
from reminders.adapters.templates_store import MemoryTemplateStore
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.services.intents import ChannelSpec
from reminders.services.render import TemplateRenderer, render
from reminders.services.templates import Templates
from reminders_ops.bench.sim.model import item_size

from tests.unit.fakes import World

BODY: dict[str, Any] = {
    "default_locale": "en",
    "locales": {
        "en": {"subject": "Renewal of {{ plan }}", "text": "Hi {{ name }}\n", "html": "<p>Hi {{ name }}</p>"},
        "de": {
            "subject": "Verlängerung {{ plan }}",
            "text": "Hallo {{ name }}\n",
            "html": "<p>Hallo {{ name }}</p>",
        },
    },
    "variables": {"plan": "string", "name": "string"},
}
DATA = {"plan": "pro", "name": "Jörg <j@x>"}
EMAIL = (ChannelSpec(ChannelType.EMAIL, "user@example.com"),)
HEADERS = {"List-Unsubscribe": "<https://api.example.com/unsubscribe/t>", "List-Unsubscribe-Post": "x"}


class Clock:
    def now(self) -> datetime:
        return datetime(2026, 12, 2, tzinfo=UTC)


def setup(webhook_rendered: bool = False) -> tuple[World, Templates, Any]:
    w = World()
    templates = Templates(store=MemoryTemplateStore(), clock=Clock())
    templates.register("acct-1", "renewal", 1, {**BODY, "webhook_rendered": webhook_rendered})
    w.reminders.check_template = templates.check_reminder
    worker = w.world.deliverer(
        senders={"webhook": w.sender, "email": w.sender},
        worker="w1",
        rng=random.Random(7),
        renderer=TemplateRenderer(templates),
    )
    return w, templates, worker


def _create(w: World, key: str, channels: Any = EMAIL, locale: str | None = "de-AT", data: Any = None) -> Any:
    cmd = replace(w.new(key, channels=channels, data=DATA if data is None else data), locale=locale)
    return w.reminders.create(cmd)[0]


def test_an_email_is_multipart_text_and_html_with_its_unsubscribe_headers_and_the_same_bytes_on_a_retry() -> (
    None
):
    w, templates, _ = setup()
    r = _create(w, "k1")
    d = r.deliveries["email-0"]
    rendered = TemplateRenderer(templates)(r, d)
    raw = build_mime(d, r, rendered, "reminders@example.com", "example.com", HEADERS)
    again = build_mime(
        d, r, TemplateRenderer(templates)(r, d), "reminders@example.com", "example.com", HEADERS
    )
    assert raw == again  # no random boundary: a retry sends the same bytes
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg.get_content_type() == "multipart/alternative"
    assert (
        str(msg["Subject"]) == "Verlängerung pro" and msg["List-Unsubscribe"] == HEADERS["List-Unsubscribe"]
    )
    parts = {p.get_content_type(): p.get_content() for p in msg.iter_parts()}
    assert parts == {"text/plain": "Hallo Jörg <j@x>\n", "text/html": "<p>Hallo Jörg &lt;j@x&gt;</p>\n"}


def test_a_webhook_document_is_unchanged_unless_the_version_asks_for_the_rendered_text() -> None:
    hook = (ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/r"),)
    w, templates, _ = setup()
    r = _create(w, "k2", hook)
    d = r.deliveries["webhook-0"]
    assert TemplateRenderer(templates)(r, d) == render(r, d)
    w2, templates2, _ = setup(webhook_rendered=True)
    r2 = _create(w2, "k2", hook)
    doc = json.loads(TemplateRenderer(templates2)(r2, r2.deliveries["webhook-0"]).body)
    plain = json.loads(render(r2, r2.deliveries["webhook-0"]).body)
    assert doc.pop("rendered") == {
        "locale": "de",
        "subject": "Verlängerung pro",
        "text": "Hallo Jörg <j@x>\n",
    }
    assert doc == plain


def test_a_delivered_single_channel_templated_item_stays_under_one_kilobyte() -> None:
    w, _, worker = setup()
    w._workers["w1"] = worker
    r = _create(w, "renewal:acct-1:2026-12-20:email")
    w.poll("email")
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED
    assert item_size(w.store.items[r.id]) < 1024


def test_a_send_dead_letters_without_a_send_when_the_version_cannot_render_the_stored_data() -> None:
    w, _, worker = setup()
    w._workers["w1"] = worker
    w.reminders.check_template = None  # data the create check would have refused (written before it)
    r = _create(w, "k4", data={"plan": "pro"})
    w.poll("email")
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.DEAD_LETTER and d.last_error["detail"] == "template_render_failed"
    assert w.sender.calls == []


def test_an_email_retry_sends_the_same_bytes_when_its_account_registers_the_named_version_meanwhile() -> None:
    """Issue 30 item a: the reminder names ``welcome`` v1 before its account registered it (sent with
    the built-in body); the account registers it between two attempts under one delivery key."""
    w, templates, _ = setup()
    r = replace(w.new("k5", channels=EMAIL, data=DATA), template_id="welcome", locale="de-AT")
    r = w.reminders.create(r)[0]
    d = r.deliveries["email-0"]
    first = TemplateRenderer(templates)(w.store.get(r.id), d)
    templates.register("acct-1", "welcome", 1, BODY)  # between the two attempts
    again = TemplateRenderer(Templates(store=templates.store, clock=Clock()))(w.store.get(r.id), d)
    assert (again.subject, again.body, again.html, again.fingerprint) == (
        first.subject,
        first.body,
        first.html,
        first.fingerprint,
    )


def test_a_reminder_stored_before_the_record_renders_from_its_accounts_version_as_before() -> None:
    """Compatibility: a reminder stored without ``template_registered`` is looked up at each send."""
    w, templates, _ = setup()
    w.reminders.check_template = lambda *a, **k: None  # as a reminder written before the record
    r = _create(w, "k6")
    assert r.template_registered is None and w.store.get(r.id).template_registered is None
    rendered = TemplateRenderer(templates)(w.store.get(r.id), r.deliveries["email-0"])
    assert rendered.subject == "Verlängerung pro"


def test_a_correction_records_the_version_when_the_account_registered_it_since_the_create() -> None:
    """A correction of the data is checked again and records what it found: a reminder created
    before its account registered the version renders from it once corrected (a correction changes
    the body under its own rules: nothing was possibly accepted, or ``resend`` with a new key)."""
    from reminders.domain.corrections import Data

    w, templates, _ = setup()
    r = w.reminders.create(replace(w.new("k7", channels=EMAIL, data=DATA), template_id="welcome"))[0]
    assert r.template_registered is False
    templates.register("acct-1", "welcome", 1, BODY)
    corrected = w.reminders.correct(r.id, [Data({**DATA, "plan": "team"})])
    assert corrected.template_registered is True and w.store.get(r.id).template_registered is True
    rendered = TemplateRenderer(templates)(w.store.get(r.id), corrected.deliveries["email-0"])
    assert rendered.subject == "Renewal of team"


def test_a_create_retried_after_its_account_registered_the_named_version_answers_the_stored_reminder() -> (
    None
):
    """A create accepted (the account had no ``welcome``) and retried as is once the account has
    registered ``welcome`` v1, whose variables its data lacks: the retry answers the stored reminder
    (200, as every identical create does), not a 422 for a request that was accepted."""
    w, templates, _ = setup()
    cmd = replace(w.new("k8", channels=EMAIL, data={"plan": "pro"}), template_id="welcome")
    first, created = w.reminders.create(cmd)
    assert created and first.template_registered is False
    templates.register("acct-1", "welcome", 1, BODY)
    again, created = w.reminders.create(cmd)
    assert not created and again.id == first.id and again.template_registered is False
