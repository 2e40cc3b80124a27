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
