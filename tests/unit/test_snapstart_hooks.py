"""SnapStart's uniqueness hooks (issue 32.2): registered only in a SnapStart environment, and each
restored environment gets its own random sequence and rebuilds its per-instance caches."""

from __future__ import annotations

import random
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def fake_runtime_module(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], Any]]:
    registered: list[Callable[[], Any]] = []
    module = types.ModuleType("snapshot_restore_py")
    module.register_after_restore = registered.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", module)
    return registered


def test_no_hook_is_registered_when_the_function_is_not_snapstart(
    monkeypatch: pytest.MonkeyPatch, fake_runtime_module: list[Callable[[], Any]]
) -> None:
    from reminders import handlers

    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")
    assert handlers.register_snapstart_hooks() is False
    assert fake_runtime_module == []


def test_restored_environments_draw_different_jitter_and_rebuild_caches_when_restored_from_one_snapshot(
    monkeypatch: pytest.MonkeyPatch, fake_runtime_module: list[Callable[[], Any]]
) -> None:
    from reminders import handlers, runtime

    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    assert handlers.register_snapstart_hooks() is True
    (hook,) = fake_runtime_module
    snapshot = random.getstate()
    first_worker = runtime.worker_id()
    draws = []
    for _ in range(2):  # two environments resumed from the same memory
        random.setstate(snapshot)
        hook()
        draws.append([random.random() for _ in range(4)])
    assert draws[0] != draws[1]
    assert runtime.worker_id() != first_worker  # the cached worker id was dropped, made anew
