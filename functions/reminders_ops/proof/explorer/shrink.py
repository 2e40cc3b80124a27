"""Shrinking a failing trace: whole kinds of action first, then delta debugging (ddmin) over the
action list down to single actions, keeping any smaller list that still fails with a violation of
the same kind. Each candidate is a
fresh run of the same seed (the world is deterministic), so the result replays as printed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .actions import Action

#: ``engine.run_actions``, passed in (the engine's command imports this module, never the reverse).
Runner = Callable[[int, Sequence[Action]], Any]


def _fails(run_actions: Runner, seed: int, kind: str | None) -> Callable[[Sequence[Action]], bool]:
    def check(actions: Sequence[Action]) -> bool:
        outcome = run_actions(seed, actions)
        return outcome.violation is not None and (kind is None or outcome.violation.kind == kind)

    return check


def shrink(run_actions: Runner, seed: int, trace: Sequence[Action], *, budget: int = 300) -> list[Action]:
    """The smallest sublist of ``trace`` found within ``budget`` runs that still fails the same way
    (``run_actions``: the engine's, a fresh deterministic run of the seed per candidate)."""
    first = run_actions(seed, trace)
    if first.violation is None:
        return list(trace)
    fails = _fails(run_actions, seed, first.violation.kind)
    current = list(first.trace)  # up to the violating step
    runs = 0
    # First whole kinds of action at once (every GET, every skew, ...): cheap and often most of it.
    for name in sorted({a[0] for a in current}):
        candidate = [a for a in current if a[0] != name]
        runs += 1
        if candidate and fails(candidate):
            current = candidate
    n = 2
    while len(current) >= 2 and runs < budget:
        chunk = max(1, len(current) // n)
        reduced = False
        for start in range(0, len(current), chunk):
            candidate = current[:start] + current[start + chunk :]
            runs += 1
            if candidate and fails(candidate):
                current, n, reduced = candidate, max(n - 1, 2), True
                break
            if runs >= budget:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(current), n * 2)
    return current
