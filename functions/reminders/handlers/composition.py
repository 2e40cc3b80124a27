"""How the HTTP API's resolver is composed: its routers included lazily, its OpenAPI document built
once. The resolver itself (handlers/api.py) hands itself over, so nothing here imports it (no circle).

A router is imported and included on the first request that reaches its resource (issue 32.2: a cold
start builds only the models its first route needs), always with the routers before it in
``ROUTERS``' order, so the routes, their matching and the document are those of the full API in the
same order whichever request came first. ``/openapi.json`` (and a path no router claims) includes all.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from .routes import media

#: One Router per resource (handlers/routes/<name>.py), in inclusion order, with the first path
#: segments its routes serve.
ROUTERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("reminders", frozenset({"reminders"})),
    ("endpoints", frozenset({"endpoints"})),
    ("accounts", frozenset({"accounts", "suppressions"})),
    ("inbound", frozenset({"unsubscribe", "inbound"})),
    ("templates", frozenset({"templates"})),
)
#: The resolver's own routes (``/openapi.json`` includes every router when it builds the document).
OWN_ROUTES = frozenset({"health", "openapi.json"})


class Composition:
    """The routers ``app`` has included so far and its OpenAPI document, for one instance."""

    def __init__(self, app: APIGatewayHttpResolver, *, title: str, version: str) -> None:
        self.app = app
        self.title = title
        self.version = version
        self._included: list[ModuleType] = []
        self._include_lock = threading.Lock()
        #: The OpenAPI document, built on its first request and kept for the instance (issue 32.2: a
        #: build costs ~1 s of CPU; Powertools' builder is not thread-safe and the local runtime's
        #: threaded API server calls one handler from several threads: concurrent builds raised
        #: KeyError).
        self._openapi: dict[str, str] = {}
        self._openapi_lock = threading.Lock()

    def include_routes(self, path: str | None = None) -> None:
        """Include the router serving ``path`` and those before it (every router: ``None``, or a path
        whose first segment no router claims). Thread-safe: the local runtime calls from threads."""
        segment = (path or "").lstrip("/").split("/", 1)[0]
        if path is not None and segment in OWN_ROUTES:
            return
        # A path no router claims: every router, so its answer (404) is the whole API's.
        wanted = next((i for i, (_, serves) in enumerate(ROUTERS) if segment in serves), len(ROUTERS) - 1)
        if len(self._included) > wanted:
            return
        with self._include_lock:
            while len(self._included) <= wanted:
                module = importlib.import_module(f"{__package__}.routes.{ROUTERS[len(self._included)][0]}")
                self.app.include_router(module.router)
                self._included.append(module)

    def openapi_document(self) -> str:
        """The whole API's document (every router included), built once per instance."""
        document = self._openapi.get("json")
        if document is None:
            self.include_routes(None)
            with self._openapi_lock:
                document = self._openapi.get("json")
                if document is None:
                    document = self._openapi["json"] = self.app.get_openapi_json_schema(
                        title=self.title, version=self.version
                    )
        return document

    def refuse_unsupported_media(self, event: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The 415 of a body in a media type this API's document does not list (routes/media.py); the
        route the event names is included (with the routers before it) for the resolver."""
        self.include_routes(str(event.get("rawPath") or ""))
        return media.refuse_unsupported_media(self.openapi_document, event)

    def reset_openapi_document(self) -> None:
        """A fresh instance for tests: the next request builds the document again."""
        self._openapi.clear()
