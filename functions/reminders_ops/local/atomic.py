"""DynamoDB writes as atomic in moto as they are in AWS.

moto's DynamoDB backend evaluates a ``ConditionExpression`` and then applies the write, with no lock
between the two; moto's server answers each request on its own thread, and in-process ``mock_aws``
answers on the caller's thread. AWS applies the writes of one item one at a time, so two conditional
claims of one delivery can never both succeed there — in moto they could (measured: 3 rounds in 100
of ten racing conditional ``UpdateItem`` calls had two winners), once a consumer sends a batch's
records on concurrent threads (issue 14). :func:`atomic_dynamodb` runs every DynamoDB action of this
process's moto under one lock; every emulator we start (the local runtime's, the SAM tests', the
benches', the wire run's moto subprocess through ``python -m reminders_ops.local.atomic``) and the
tests' ``mock_aws`` call it first. It changes moto only, never the product's code.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_LOCK = threading.RLock()
_installed = False


def atomic_dynamodb() -> None:
    """Serialize moto's DynamoDB actions in this process (idempotent)."""
    global _installed
    with _LOCK:
        if _installed:
            return
        from moto.dynamodb.responses import DynamoHandler

        unlocked = DynamoHandler.call_action

        def call_action(self: Any) -> Any:
            with _LOCK:
                return unlocked(self)

        DynamoHandler.call_action = call_action  # type: ignore[method-assign]
        _installed = True


def main(argv: list[str] | None = None) -> None:
    """``python -m reminders_ops.local.atomic -H 127.0.0.1 -p PORT``: moto's server, atomic."""
    from moto.server import main as moto_main

    atomic_dynamodb()
    moto_main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
