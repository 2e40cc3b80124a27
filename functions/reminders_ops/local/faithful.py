"""moto made as faithful as AWS where our promises depend on it: atomic conditional writes, and a
long poll that answers when a delayed message becomes visible.

- **DynamoDB.** moto evaluates a ``ConditionExpression`` and then applies the write, with no lock
  between the two; moto's server answers each request on its own thread, and in-process
  ``mock_aws`` answers on the caller's thread. AWS applies the writes of one item one at a time, so
  two conditional claims of one delivery can never both succeed there — in moto they could
  (measured: 3 rounds in 100 of ten racing conditional ``UpdateItem`` calls had two winners), once a
  consumer sends a batch's records on concurrent threads (issue 14). :func:`atomic_dynamodb` runs
  every DynamoDB action of this process's moto under one lock.
- **SQS.** moto's long poll sleeps on a condition that only a *new* message notifies, so a message
  whose ``DelaySeconds`` or visibility timeout runs out is seen at the next poll, up to a poll
  later. SQS answers a waiting long poll as soon as a message is visible. :func:`prompt_long_poll`
  also wakes the wait when the earliest pending message of the queue becomes visible.

- **The server's own overhead.** moto's server finds each request's backend by listing its own
  package directory (about 200 ``stat`` calls) while holding one lock that every request takes;
  AWS's endpoints have no such step. On a loaded machine it adds tens of ms to a call (profiled on
  the embedded lateness run: requests queued on that lock behind the listing).
  :func:`quick_server` lists the modules once. The benches' servers use it (``--quick``).

Every emulator we start (the local runtime's, the SAM tests', the benches', the wire run's moto
subprocess through ``python -m reminders_ops.local.faithful``) and the tests' ``mock_aws`` call
:func:`faithful_moto` first. It changes moto only, never the product's code.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from typing import Any

_LOCK = threading.RLock()
_installed: set[str] = set()


def atomic_dynamodb() -> None:
    """Serialize moto's DynamoDB actions in this process (idempotent)."""
    with _LOCK:
        if "dynamodb" in _installed:
            return
        from moto.dynamodb.responses import DynamoHandler

        unlocked = DynamoHandler.call_action

        def call_action(self: Any) -> Any:
            with _LOCK:
                return unlocked(self)

        DynamoHandler.call_action = call_action  # type: ignore[method-assign]
        _installed.add("dynamodb")


def _next_visible_in(queue: Any) -> float | None:
    """Seconds until the earliest message of ``queue`` that is delayed or in flight turns visible."""
    now_ms = time.time() * 1000
    upcoming = [t for m in list(queue._messages) for t in (m.delayed_until, m.visible_at) if t > now_ms]
    return (min(upcoming) - now_ms) / 1000 + 0.002 if upcoming else None


def prompt_long_poll() -> None:
    """moto's long poll also wakes when a delayed or in-flight message becomes visible (idempotent)."""
    with _LOCK:
        if "sqs" in _installed:
            return
        from moto.sqs.models import Queue

        def wait_for_messages(self: Any, timeout: int) -> None:
            deadline = time.monotonic() + timeout
            with self._messages_lock:
                while not self.messages:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    upcoming = _next_visible_in(self)
                    self._messages_lock.wait(remaining if upcoming is None else min(remaining, upcoming))

        Queue.wait_for_messages = wait_for_messages  # type: ignore[method-assign]
        _installed.add("sqs")


def quick_server() -> None:
    """moto's server resolves a request's backend without listing its package each time
    (idempotent)."""
    with _LOCK:
        if "server" in _installed:
            return
        from moto import backends

        modules = frozenset(backends.list_of_moto_modules())  # what the package holds: fixed
        backends.list_of_moto_modules = lambda: modules
        _installed.add("server")


def faithful_moto() -> None:
    atomic_dynamodb()
    prompt_long_poll()


def main(argv: list[str] | None = None) -> None:
    """``python -m reminders_ops.local.faithful [--quick] -H 127.0.0.1 -p PORT``: moto's server,
    faithful (``--quick``: and without its own per-request overhead, :func:`quick_server`)."""
    from moto.server import main as moto_main

    args = list(argv if argv is not None else sys.argv[1:])
    faithful_moto()
    if "--quick" in args:
        args.remove("--quick")
        quick_server()
    moto_main(args)


if __name__ == "__main__":
    main()


def start_moto_server(timeout_seconds: float = 60.0, *options: str) -> tuple[subprocess.Popen[bytes], int]:
    """moto in server mode in its own process on 127.0.0.1 (in this process its threads would share
    the interpreter lock with the handlers and the proxies: answers late past the 2 s read timeout);
    ``options`` go to ``reminders_ops.local.faithful`` (``--quick``)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "reminders_ops.local.faithful", *options, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, port
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("moto server exited at start") from None
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("moto server did not start")
