"""Every entry point traced (issue 31): Powertools Tracer's ``capture_lambda_handler`` (its
``## <handler>`` subsegment with the ``ColdStart`` and ``Service`` annotations), never capturing the
response or an error (their content may be personal), and, for an API call about one reminder, the
``reminder_id`` annotation that joins its trace to the send's (DynamoDB breaks propagation).

The Tracer is created at the first invocation (nothing at import time), and only when tracing is
enabled; otherwise the wrapper calls the handler directly.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from .. import runtime

F = TypeVar("F", bound=Callable[..., Any])
_REMINDER_ID = re.compile(r"^rem_[0-9a-f]{32}$")
_REMINDER_PATH = re.compile(r"^/reminders/(rem_[0-9a-f]{32})(?:/|$)")
_IDS = {"reminder_id": _REMINDER_ID, "delivery_key": re.compile(r"^dlv_[0-9a-f]{32}$")}


def ids(**candidates: object) -> dict[str, str]:
    """The annotations a record's subsegment may carry: each id only when it has the id's form
    (a stored item or a receiver's receipt could hold anything; a trace holds ids only)."""
    return {
        name: value
        for name, value in candidates.items()
        if isinstance(value, str) and name in _IDS and _IDS[name].match(value)
    }


def reminder_of(event: Any, result: Any) -> str | None:
    """The reminder an HTTP API call is about: its path's, or the one a create answered."""
    if not isinstance(event, dict) or "rawPath" not in event:
        return None
    path = str(event.get("rawPath") or "")
    m = _REMINDER_PATH.match(path)
    if m:
        return m.group(1)
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method")
    created = isinstance(result, dict) and 200 <= int(result.get("statusCode") or 0) < 300
    if not (created and method == "POST" and path.rstrip("/") == "/reminders"):
        return None
    try:
        rid = json.loads(result.get("body") or "{}").get("id")
    except (ValueError, AttributeError):
        return None
    return rid if isinstance(rid, str) and _REMINDER_ID.match(rid) else None


def traced(handler: F) -> F:
    state: dict[str, Any] = {}

    @functools.wraps(handler)
    def wrapper(event: Any, context: Any) -> Any:
        run = state.get("run")
        if run is None:
            if not runtime.tracing_enabled():
                run = handler
            else:
                tracer = runtime.tracer()

                @functools.wraps(handler)
                def annotated(event: Any, context: Any) -> Any:
                    result = handler(event, context)
                    rid = reminder_of(event, result)
                    if rid is not None:
                        tracer.put_annotation("reminder_id", rid)
                    return result

                run = tracer.capture_lambda_handler(annotated, capture_response=False, capture_error=False)
            state["run"] = run
        return run(event, context)

    return wrapper  # type: ignore[return-value]
