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

F = TypeVar("F", bound=Callable[..., Any])
_state = {"cold_start_logged": False, "clients_logged": False}


def runtime_facts() -> dict[str, Any]:
    import pydantic_core
    from aws_lambda_powertools.shared.version import VERSION

    return {
        "powertools_version": VERSION,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "libc": "-".join(platform.libc_ver()),
        "pydantic_core": f"{pydantic_core.__version__} at {pydantic_core.__file__}",
    }


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

    return wrapper  # type: ignore[return-value]


def reset() -> None:
    """A fresh process for tests: log both again."""
    _state.update(cold_start_logged=False, clients_logged=False)
