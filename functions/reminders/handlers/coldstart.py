"""What a function instance runs on, logged once per cold start (``action``: ``cold_start``), and
the retry mode and timeouts of every AWS client it created, logged once after its first
invocation (``action``: ``client_settings``; clients are created lazily, on first use).

It proves in the runtime itself which Powertools release the layer brought and which botocore
configuration the clients really got; ``make sam-test`` asserts both in each function's output.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Callable
from typing import Any, TypeVar

from .. import runtime
from . import end_of_initialisation

F = TypeVar("F", bound=Callable[..., Any])
_state = {"cold_start_logged": False, "clients_logged": False}


def runtime_facts() -> dict[str, Any]:
    from aws_lambda_powertools.shared.version import VERSION

    return {
        "powertools_version": VERSION,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "libc": "-".join(platform.libc_ver()),
        "pydantic_core": _pydantic_core(),
    }


def _pydantic_core() -> str:
    """Which pydantic_core the layer brought, without importing it (~30 ms) in a function whose
    path does not use pydantic: the version from its metadata, the location from its spec."""
    import sys
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    loaded = sys.modules.get("pydantic_core")
    if loaded is not None:
        return f"{loaded.__version__} at {loaded.__file__}"
    spec = find_spec("pydantic_core")
    if spec is None:
        return "not installed"
    try:
        release = version("pydantic_core")
    except PackageNotFoundError:
        release = "unknown"
    return f"{release} at {spec.origin} (not imported)"


def client_settings() -> list[dict[str, Any]]:
    """Every botocore client the functions made (adapters/clients.make_client: the one place
    clients are made): service, retry mode and attempts, timeouts."""
    from ..adapters.clients import MADE, describe

    found = [describe(obj) for obj in MADE]
    return sorted(found, key=lambda c: str(c["service"]))


def reported(handler: F) -> F:
    """Wrap a Lambda entry point: runtime facts before its first call, client settings after it."""

    @functools.wraps(handler)
    def wrapper(event: Any, context: Any) -> Any:
        if not _state["cold_start_logged"]:
            _state["cold_start_logged"] = True
            runtime.logger().info("cold_start", extra={"action": "cold_start", **runtime_facts()})
        try:
            return handler(event, context)
        finally:
            if not _state["clients_logged"]:
                _state["clients_logged"] = True
                runtime.logger().info(
                    "client_settings", extra={"action": "client_settings", "clients": client_settings()}
                )
                end_of_initialisation()

    return wrapper  # type: ignore[return-value]


def reset() -> None:
    """A fresh process for tests: log both again."""
    _state.update(cold_start_logged=False, clients_logged=False)
