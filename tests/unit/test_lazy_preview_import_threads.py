"""Review of issue 32.2 (the reminder routes import the preview's service inside the route): the
first preview requests of an instance, arriving together on the local runtime's threads while other
first requests import the delivery services, each get the whole module — no partially initialised
module, no deadlock. In a fresh interpreter (a test process has imported everything already)."""

from __future__ import annotations

from tests.unit.test_cold_start_imports import fresh

FIRST_REQUESTS_TOGETHER = """
import importlib, json, threading
from reminders.handlers.api import composition
composition.include_routes("/reminders")
mods = ["reminders.services.support", "reminders.services.health", "reminders.services.deliver",
        "reminders.services.dispatch", "reminders.services.intents"] * 3
barrier = threading.Barrier(len(mods))
errors = []

def first_request(name):
    barrier.wait()
    try:
        if name.endswith("support"):
            from reminders.services import support  # as the preview route does
            assert callable(support.preview) and support.MAX_PREVIEW_MINUTES == 60
        else:
            importlib.import_module(name)
    except Exception as exc:
        errors.append(f"{name}: {exc!r}")

threads = [threading.Thread(target=first_request, args=(m,)) for m in mods]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
print(json.dumps({"errors": errors, "stuck": sum(t.is_alive() for t in threads)}))
"""


def test_every_first_preview_gets_the_whole_service_when_requests_arrive_together() -> None:
    assert fresh(FIRST_REQUESTS_TOGETHER) == {"errors": [], "stuck": 0}
