"""What every Lambda entry point is wrapped in, in one place: the cold-start report
(handlers/coldstart.py), the trace (handlers/tracing.py), the Powertools logger's Lambda context (its
keys cleared at each invocation) and the metrics flushed at its end. The logger and the metrics are
the runtime's, taken at each invocation (nothing at import time). The delivery consumers
(handlers/delivery.py) keep their own variant: each record's log line carries only the request id
and the channel, not the whole Lambda context (issue 32 item 3)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.typing import LambdaContext

from .. import runtime
from . import coldstart, tracing

F = TypeVar("F", bound=Callable[..., Any])


def entry_point(body: F) -> F:
    """``body(event, context)`` as a Lambda entry point (its name kept: the trace's ``## <name>``)."""

    @functools.wraps(body)
    def entry(event: Any, context: LambdaContext) -> Any:
        logger, metrics = runtime.logger(), runtime.metrics()

        @logger.inject_lambda_context(clear_state=True)
        @metrics.log_metrics
        def run(event: Any, context: LambdaContext) -> Any:
            return body(event, context)

        return run(event, context)

    return coldstart.reported(tracing.traced(entry))  # type: ignore[return-value]
