"""Lambda entry points (thin: parse, call a service, answer).

In a Lambda execution environment (``AWS_LAMBDA_FUNCTION_NAME`` set) the cyclic garbage collector
is paused while the function initialises: importing the handler and its first invocation (which
imports the adapters its path uses and creates its botocore clients, each loading its service
model) allocate hundreds of thousands of long-lived objects, and every full collection in between
walks all of them again (~150 ms of a cold start's CPU). :func:`handlers.coldstart.reported`
freezes what exists after the first invocation (modules, models, clients: they live as long as the
instance) and turns the collector back on; garbage of later invocations is collected as usual.

With Lambda SnapStart (``AWS_LAMBDA_INITIALIZATION_TYPE`` ``snap-start``; the stack's
``reminders:snapStart`` option) many environments resume from one snapshot of this init phase: an
after-restore hook gives each its own random sequence and drops anything a future init might have
cached (settings, clients and their connections, worker ids). Nothing of that is made at init today.
"""

from __future__ import annotations

import gc
import os

_paused = {"gc": False}
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") and gc.isenabled():
    gc.disable()
    _paused["gc"] = True


def after_restore() -> None:
    """SnapStart's uniqueness hook: what one snapshot would otherwise share between environments."""
    import random

    from .. import runtime

    random.seed()  # from os.urandom: the module's jitter differs per restored environment
    runtime.reset()  # per-instance caches (worker id, clients, rate limiter state) are built anew


def register_snapstart_hooks() -> bool:
    """Register :func:`after_restore` with the runtime's ``snapshot_restore_py`` (python3.12+, a
    SnapStart function only). Returns whether it did."""
    if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "snap-start":
        return False
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:  # not a SnapStart-capable runtime: nothing is snapshotted
        return False
    register_after_restore(after_restore)
    return True


register_snapstart_hooks()


def end_of_initialisation() -> None:
    """After the first invocation: what exists now lives as long as the instance (frozen: never
    walked again), and the collector runs again. Does nothing if it was not paused (tests)."""
    if _paused["gc"]:
        _paused["gc"] = False
        gc.freeze()
        gc.enable()
