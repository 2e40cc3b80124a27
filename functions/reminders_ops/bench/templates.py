"""Bench figure of issue 30: the render time per email and the template reads per million reminders
(``make bench``, figure "templates"; ``python -m reminders_ops.bench.templates [N]``).

``2 N`` reminders of one account name one template version (text and HTML in two locales, five typed
variables, a loop); each is rendered as its email send renders it (``TemplateRenderer``: the
version from the per-instance cache, the sandboxed render, the fingerprint), through ``INSTANCES``
consumer instances in turn (each its own cache, as Lambda instances are). Reads are counted at the
in-memory store, for the first N and the second N (which add none: each instance read the version
once, so the reads per million reminders are the instances times the versions in use, whatever the
count); the render time is the CPU time of the renders divided by 2 N (a measurement printed
by the bench, never asserted).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

INSTANCES = 10
BODY: dict[str, Any] = {
    "default_locale": "en",
    "locales": {
        "en": {
            "subject": "Your {{ plan }} plan renews on {{ renews_at.strftime('%d %B') }}",
            "text": "Hello {{ name }},\n\nyour {{ plan }} plan renews for {{ amount }} EUR.\n"
            "{% for f in features %}- {{ f }}\n{% endfor %}",
            "html": "<h1>Hello {{ name }}</h1><p>Your <b>{{ plan }}</b> plan renews for {{ amount }} EUR.</p>"
            "<ul>{% for f in features %}<li>{{ f }}</li>{% endfor %}</ul>"
            "{% if vip %}<p>Thank you!</p>{% endif %}",
        },
        "fr": {
            "subject": "Votre formule {{ plan }}",
            "text": "Bonjour {{ name }}, {{ amount }} EUR.\n",
            "html": "<p>Bonjour {{ name }}</p>{% if vip %}<p>Merci !</p>{% endif %}",
        },
    },
    "variables": {
        "name": "string",
        "plan": "string",
        "amount": "decimal",
        "renews_at": "date-time",
        "features": "list",
        "vip": "boolean",
    },
}


class _Clock:
    def now(self) -> datetime:
        return datetime(2026, 12, 2, tzinfo=UTC)


def measure(n: int = 2000) -> dict[str, Any]:
    from reminders.adapters.templates_store import MemoryTemplateStore
    from reminders.domain.models import ChannelType, Delivery, Reminder
    from reminders.services.render import TemplateRenderer
    from reminders.services.templates import Templates

    store = MemoryTemplateStore()
    Templates(store=store, clock=_Clock()).register("acct-1", "renewal", 1, BODY)
    instances = [TemplateRenderer(Templates(store=store, clock=_Clock())) for _ in range(INSTANCES)]
    before = store.reads
    cpu = 0.0
    html_bytes = 0
    first_half = 0
    for i in range(2 * n):
        if i == n:
            first_half = store.reads - before
        r = Reminder(
            id=f"rem_{i:032x}",
            account_id="acct-1",
            key=f"k{i}",
            kind="renewal",
            due_at=datetime(2027, 1, 1, tzinfo=UTC),
            template_id="renewal",
            template_version=1,
            data={
                "name": f"Customer {i} <c{i}@example.com>",
                "plan": "pro",
                "amount": 19.9 + i,
                "renews_at": "2027-03-28T09:00:00+02:00",
                "features": ["5 seats", "priority support", "SSO"],
                "vip": i % 2 == 0,
            },
            version=1,
            created_at=datetime(2026, 12, 1, tzinfo=UTC),
            fingerprint="",
            deliveries={},
            locale="fr-CA" if i % 3 == 0 else None,
        )
        d = Delivery(
            channel_id="email-0", type=ChannelType.EMAIL, destination="c@example.com", key=f"dlv_{i}"
        )
        t0 = time.process_time()
        rendered = instances[i % INSTANCES](r, d)
        cpu += time.process_time() - t0
        html_bytes += len(rendered.html or "")
    reads = store.reads - before
    return {
        "reminders": 2 * n,
        "instances": INSTANCES,
        "render_us_per_email": cpu / (2 * n) * 1e6,
        "template_reads_first_half": first_half,
        "template_reads_second_half": reads - first_half,
        # Reads do not grow with reminders: one per instance and version (a cold start's first send).
        "template_reads_per_million": reads,
        "html_bytes_mean": html_bytes / (2 * n),
    }


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))
