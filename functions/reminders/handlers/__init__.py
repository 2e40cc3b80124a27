"""Lambda entry points (thin: parse, call a service, answer).

In a Lambda execution environment (``AWS_LAMBDA_FUNCTION_NAME`` set) the cyclic garbage collector
is paused while the function initialises: importing the handler and its first invocation (which
imports the adapters its path uses and creates its botocore clients, each loading its service
model) allocate hundreds of thousands of long-lived objects, and every full collection in between
walks all of them again (~150 ms of a cold start's CPU). :func:`handlers.coldstart.reported`
freezes what exists after the first invocation (modules, models, clients: they live as long as the
instance) and turns the collector back on; garbage of later invocations is collected as usual.
"""

from __future__ import annotations

import gc
import os

_paused = {"gc": False}
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") and gc.isenabled():
    gc.disable()
    _paused["gc"] = True


def end_of_initialisation() -> None:
    """After the first invocation: what exists now lives as long as the instance (frozen: never
    walked again), and the collector runs again. Does nothing if it was not paused (tests)."""
    if _paused["gc"]:
        _paused["gc"] = False
        gc.freeze()
        gc.enable()
