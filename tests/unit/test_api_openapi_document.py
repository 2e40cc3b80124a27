"""The published OpenAPI document (issue 32 item 2): built once per instance, and concurrent first
requests (the local runtime's threaded API server calls one handler from several threads) all get it."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.support.lambda_runtime import FakeContext, http_event

THREADS = 8


def _get_document() -> dict[str, Any]:
    from reminders.handlers.api import handler

    resp: dict[str, Any] = handler(http_event("GET", "/openapi.json"), FakeContext(function_name="api"))
    return resp


def test_openapi_document_is_the_same_for_every_request_when_requested_concurrently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reminders.handlers import api

    builds = []
    real = api.app.get_openapi_json_schema

    def counted(*args: Any, **kwargs: Any) -> str:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api.app, "get_openapi_json_schema", counted)
    api.reset_openapi_document()  # a fresh instance: nothing cached yet
    start = threading.Barrier(THREADS)
    answers: list[Any] = []

    def request() -> None:
        start.wait()
        try:
            answers.append(_get_document())
        except Exception as exc:  # a crash is an answer too: the test names it
            answers.append(exc)

    threads = [threading.Thread(target=request) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a["statusCode"] if isinstance(a, dict) else repr(a) for a in answers] == [200] * THREADS
    bodies = {a["body"] for a in answers}
    assert len(bodies) == 1
    assert "/reminders" in json.loads(bodies.pop())["paths"]
    assert len(builds) == 1  # one build per instance, not one per request (~1 s each cold)
    _get_document()
    assert len(builds) == 1


FIRST_REQUEST = """
import hashlib, json, sys
from reminders.handlers import api
from reminders.handlers.composition import ROUTERS
api.composition.include_routes({path!r})
doc = api.composition.openapi_document()
routers = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("reminders.handlers.routes.")
                 and m.rsplit(".", 1)[1] in {{name for name, _ in ROUTERS}})
print(json.dumps({{"routers": routers, "document": hashlib.sha256(doc.encode()).hexdigest()}}))
"""


def test_a_cold_create_builds_only_the_reminders_router_when_it_is_the_first_request() -> None:
    from tests.unit.test_cold_start_imports import fresh

    script = """
import json, sys
from reminders.handlers import api
api.composition.include_routes("/reminders")
print(json.dumps(sorted(m for m in sys.modules if m.startswith("reminders.handlers.routes."))))
"""
    loaded = {m.rsplit(".", 1)[1] for m in fresh(script)}
    assert "reminders" in loaded
    assert not loaded & {"endpoints", "accounts", "inbound", "templates"}


def test_openapi_document_is_the_same_whichever_route_was_requested_first() -> None:
    from tests.unit.test_cold_start_imports import fresh

    runs = [
        fresh(FIRST_REQUEST.format(path=p)) for p in (None, "/templates/t/versions", "/suppressions", "/nope")
    ]
    assert {r["document"] for r in runs} == {runs[0]["document"]}
    assert all(r["routers"] == ["accounts", "endpoints", "inbound", "reminders", "templates"] for r in runs)
