"""Rendering: a pure function of (template version, locale, data). A retry sends the same bytes.

A reminder whose account had registered the version it names when it was checked (at create or
correction: ``Reminder.template_registered``) renders from that version (issue 30,
services/templating.py): the email's subject, text and HTML; the webhook document stays the
template reference and data (receivers render their own), with ``rendered`` (subject, text,
locale) added when the version asks for it. Any other reminder renders as it always did.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..domain.models import ChannelType, Delivery, Reminder
from ..domain.opevents import EVENT_KIND
from ..domain.ports import Rendered
from ..domain.schedule import iso


def render(
    reminder: Reminder, delivery: Delivery, template: Any = None, *, webhook_rendered: bool = False
) -> Rendered:
    """``template``: the ``templating.RenderedEmail`` of the reminder's version, when it has one."""
    html = None
    if delivery.type is ChannelType.WEBHOOK and reminder.kind == EVENT_KIND:
        # An operational event (issue 16): its stored document is the body, as it was derived.
        body = json.dumps(reminder.data, sort_keys=True, separators=(",", ":"))
        subject = str(reminder.data.get("type", EVENT_KIND))
    elif delivery.type is ChannelType.WEBHOOK:
        document: dict[str, Any] = {
            "type": "reminder.due",
            "id": reminder.id,
            "key": reminder.key,
            "account_id": reminder.account_id,
            "kind": reminder.kind,
            "template": {"id": reminder.template_id, "version": reminder.template_version},
            "data": reminder.data,
            "due_at": iso(reminder.due_at),
        }
        if template is not None and webhook_rendered:
            document["rendered"] = {
                "locale": template.locale,
                "subject": template.subject,
                "text": template.text,
            }
        body = json.dumps(document, sort_keys=True, separators=(",", ":"))
        subject = reminder.kind
    elif template is not None:
        subject, body, html = template.subject, template.text, template.html
    else:
        subject = f"Reminder: {reminder.kind}"
        lines = [
            f"This is your {reminder.kind} reminder"
            f" (template {reminder.template_id} v{reminder.template_version})."
        ]
        lines += [f"{k}: {reminder.data[k]}" for k in sorted(reminder.data)]
        body = "\n".join(lines) + "\n"
    text = f"{delivery.key}\n{subject}\n{body}" + (f"\n{html}" if html is not None else "")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Rendered(subject=subject, body=body, fingerprint=digest[:32], html=html)  # 128 bits


class TemplateRenderer:
    """``render`` with the account's template version when the reminder names a registered one
    (``Templates.for_send``: cached per instance). Raises ``RenderError`` when the version cannot
    render this data (checked at create, so only a data change the check could not see)."""

    def __init__(self, versions: Any) -> None:
        self.versions = versions  # Templates (services/templates.py)

    def __call__(self, reminder: Reminder, delivery: Delivery) -> Rendered:
        if reminder.kind == EVENT_KIND or reminder.template_registered is False:
            # Not the account's version when the reminder was checked: the built-in body on every
            # attempt, even once the account registers that version (the same bytes per key).
            return render(reminder, delivery)
        ref = (reminder.account_id, reminder.template_id, reminder.template_version)
        tv = self.versions.for_send(*ref)
        if tv is None and reminder.template_registered:  # None: stored before the record, looked up
            tv = self.versions.for_send_consistent(*ref)
            if tv is None:  # pragma: no cover - versions are never deleted
                from ..domain.templates import RenderError

                raise RenderError(f"template {ref[1]} version {ref[2]} is not readable")
        if tv is None:
            return render(reminder, delivery)
        if delivery.type is ChannelType.WEBHOOK and not tv.webhook_rendered:
            return render(reminder, delivery)  # the document as always: no render needed
        from ..domain.errors import ValidationError
        from ..domain.templates import RenderError
        from .templating import render_version

        try:
            out = render_version(tv, reminder.locale, reminder.data)
        except ValidationError as exc:
            raise RenderError(str(exc)) from None
        return render(reminder, delivery, out, webhook_rendered=tv.webhook_rendered)
