"""Interleavings inside one step: an API cancel whose write lands while a consumer is between its
send and its record, its answer lost; the consumer's whole record (its conditional write, the
re-read and merge after the conflict) lands before the API reads the row again (issue 25.5: own
write recognised by its line, not by revision + 1).

The consumer runs in a thread that only ever runs while the explorer's thread waits (strict
alternation: one seed, one trace, deterministic): it stops at its first ``save_delivery``; the
explorer's cancel runs; inside the cancel's ``save_reminder``, after the write landed, the consumer
goes on to the end of its message; then the cancel reads the row again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class PausingPort:
    """The consumer's store: its first ``save_delivery`` waits until ``resume`` is set."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self.paused = threading.Event()  # the consumer reached its record
        self.resume = threading.Event()
        self.reminder_id: str | None = None

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if attr != "save_delivery" or not callable(value) or self.paused.is_set():
            return value

        def call(reminder_id: str, *args: Any, **kwargs: Any) -> Any:
            if not self.paused.is_set():
                self.reminder_id = reminder_id
                self.paused.set()
                self.resume.wait()
            return value(reminder_id, *args, **kwargs)

        return call


def interleaved(
    process: Callable[[], Any], port: PausingPort, store: Any, cancel: Callable[[str], None]
) -> Any:
    """``process()`` (one message, through ``port``) with ``cancel(reminder_id)`` landing between its
    send and its record as described above. Returns what ``process`` returned (re-raises what it
    raised)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = process()
        except BaseException as exc:  # handed to the explorer's thread
            out["error"] = exc
        finally:
            port.paused.set()  # it may end without a record: the explorer goes on

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    port.paused.wait()
    if port.reminder_id is not None and worker.is_alive():
        real = store.save_reminder

        def save_reminder(*args: Any, **kwargs: Any) -> Any:
            store.lose_next_answer("save_reminder")
            ok = real(*args, **kwargs)
            if not port.resume.is_set():
                port.resume.set()
                worker.join()
            return ok

        store.save_reminder = save_reminder
        try:
            cancel(port.reminder_id)
        finally:
            del store.save_reminder
    port.resume.set()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out.get("result")
