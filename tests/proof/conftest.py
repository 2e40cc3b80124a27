from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from reminders import runtime

from tests.proof.harness import Harness

_real_sleep = time.sleep


@pytest.fixture
def proof(aws: dict[str, str], receiver: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """Real handlers on moto + the local receiver; crashes and a virtual clock at the ports."""
    # A short provider timeout so "hang" cases take seconds (the lease still outlasts it).
    monkeypatch.setenv("REMINDERS_RETRY_PROVIDER_TIMEOUT_SECONDS", "2")
    runtime.reset()
    # The factories are patched in a context of their own: undone before ``aws`` resets the runtime.
    with pytest.MonkeyPatch.context() as patches:
        yield Harness(aws, receiver, patches)


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry must never sleep in the worker (the receiver's own threads may: that is the network)."""

    def guarded(seconds: float) -> None:
        if threading.current_thread() is threading.main_thread():
            raise AssertionError(f"the worker slept {seconds}s instead of setting the visibility")
        _real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", guarded)
