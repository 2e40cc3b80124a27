"""The template's functions invoked in-process, the way the Lambda runtime calls them.

All functions share one process, so the environment is set once: the variables every function
has with the same value, plus the local overrides. A variable whose value differs between
functions (``CHANNEL`` of the delivery functions) cannot be set per invocation in a shared process;
it is reported, and the handlers do not depend on it (each delivery handler knows its channel).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .events import LambdaContext
from .spec import FunctionSpec

log = logging.getLogger("reminders_ops.local")

Handler = Callable[[dict[str, Any], Any], Any]


def load_handler(dotted: str) -> Handler:
    """``package.module.attribute`` as in a Lambda function's Handler property."""
    module_name, _, attr = dotted.rpartition(".")
    if not module_name:
        raise ValueError(f"handler {dotted!r} is not module.attribute")
    module = importlib.import_module(module_name)
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"handler {dotted!r}: {module_name} has no callable {attr!r}")
    return fn


@dataclass
class FunctionStats:
    invocations: int = 0
    errors: int = 0
    over_timeout: int = 0
    last_duration_ms: float = 0.0
    last_error: str = ""


@dataclass
class LocalFunction:
    spec: FunctionSpec
    account_id: str
    region: str
    stats: FunctionStats = field(default_factory=FunctionStats)
    _handler: Handler | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return self.spec.name

    def load(self) -> Handler:
        if self._handler is None:
            self._handler = load_handler(self.spec.handler)
        return self._handler

    def _report(self, request_id: str, elapsed: float, status: str) -> None:
        sys.stdout.write(_platform_report(self.spec.name, request_id, elapsed, status) + "\n")

    def invoke(self, event: dict[str, Any]) -> Any:
        """Synchronous invoke; an exception is the function error the caller handles as Lambda would."""
        handler = self.load()
        ctx = LambdaContext(
            function_name=self.spec.name,
            timeout_seconds=self.spec.timeout_seconds,
            memory_limit_in_mb=self.spec.memory_mb,
            account_id=self.account_id,
            region=self.region,
        )
        started = time.monotonic()
        status = "success"
        try:
            return handler(event, ctx)
        except Exception as exc:
            status = "error"
            with self._lock:
                self.stats.errors += 1
                self.stats.last_error = f"{type(exc).__name__}: {exc}"[:200]
            raise
        finally:
            elapsed = time.monotonic() - started
            self._report(ctx.aws_request_id, elapsed, status)
            with self._lock:
                self.stats.invocations += 1
                self.stats.last_duration_ms = elapsed * 1000
                if elapsed > self.spec.timeout_seconds:
                    # Lambda would have killed this invocation; in-process we can only report it.
                    self.stats.over_timeout += 1
                    log.warning(
                        "%s ran %.1fs, over its %.0fs timeout",
                        self.spec.name,
                        elapsed,
                        self.spec.timeout_seconds,
                    )


def _platform_report(function_name: str, request_id: str, elapsed: float, status: str) -> str:
    """The ``platform.report`` line Lambda writes after each invocation (JSON log format)."""
    return json.dumps(
        {
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "type": "platform.report",
            "function": function_name,
            "record": {
                "requestId": request_id,
                "metrics": {"durationMs": round(elapsed * 1000, 2)},
                "status": status,
            },
        },
        separators=(",", ":"),
    )


def shared_environment(functions: Mapping[str, FunctionSpec]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(variables set for the whole process, {variable: the values functions disagree on}).

    A variable only some functions have, with one value, is set for all (the others do not read it).
    """
    values: dict[str, set[str]] = {}
    for f in functions.values():
        for k, v in f.environment.items():
            values.setdefault(k, set()).add(v)
    common = {k: next(iter(vs)) for k, vs in values.items() if len(vs) == 1}
    differing = {k: vs for k, vs in values.items() if len(vs) > 1}
    return common, differing


def apply_environment(env: Mapping[str, str]) -> None:
    """Set the process environment the handlers read, then drop every cached client/setting."""
    os.environ.update(env)
    from reminders import runtime

    runtime.reset()
