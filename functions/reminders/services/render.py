"""Rendering: a pure function of (template id, template version, data). A retry sends the same bytes."""

from __future__ import annotations

import hashlib
import json

from ..domain.models import ChannelType, Delivery, Reminder
from ..domain.opevents import EVENT_KIND
from ..domain.ports import Rendered
from ..domain.schedule import iso


def render(reminder: Reminder, delivery: Delivery) -> Rendered:
    if delivery.type is ChannelType.WEBHOOK and reminder.kind == EVENT_KIND:
        # An operational event (issue 16): its stored document is the body, as it was derived.
        body = json.dumps(reminder.data, sort_keys=True, separators=(",", ":"))
        subject = str(reminder.data.get("type", EVENT_KIND))
    elif delivery.type is ChannelType.WEBHOOK:
        document = {
            "type": "reminder.due",
            "id": reminder.id,
            "key": reminder.key,
            "account_id": reminder.account_id,
            "kind": reminder.kind,
            "template": {"id": reminder.template_id, "version": reminder.template_version},
            "data": reminder.data,
            "due_at": iso(reminder.due_at),
        }
        body = json.dumps(document, sort_keys=True, separators=(",", ":"))
        subject = reminder.kind
    else:
        subject = f"Reminder: {reminder.kind}"
        lines = [
            f"This is your {reminder.kind} reminder"
            f" (template {reminder.template_id} v{reminder.template_version})."
        ]
        lines += [f"{k}: {reminder.data[k]}" for k in sorted(reminder.data)]
        body = "\n".join(lines) + "\n"
    digest = hashlib.sha256(f"{delivery.key}\n{subject}\n{body}".encode()).hexdigest()
    return Rendered(subject=subject, body=body, fingerprint=digest[:32])  # 128 bits: plenty, and small
