"""The default event bus for rules with an event pattern: events put on it are matched against
each rule's pattern (EventBridge content filtering) and delivered to the rule's targets as Lambda
async invokes would be (a function error is retried twice). Events can carry a delivery time:
providers publish their events a moment after the fact, not in the same instant.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .lambdas import LocalFunction
from .spec import RuleSpec

log = logging.getLogger("reminders_ops.local")

ASYNC_RETRY_DELAYS_SECONDS = (1.0, 2.0)  # Lambda async invokes retry twice (minutes apart in AWS)
_MISSING = object()
_OPERATORS = {"prefix", "suffix", "anything-but", "exists", "equals-ignore-case"}


class UnsupportedPatternError(ValueError):
    """An event pattern operator the local bus does not implement (reported, never skipped)."""


def validate_pattern(pattern: Any, path: str = "") -> None:
    if not isinstance(pattern, dict):
        raise UnsupportedPatternError(f"pattern at {path or '/'} is not an object")
    for key, rule in pattern.items():
        where = f"{path}/{key}"
        if isinstance(rule, dict):
            validate_pattern(rule, where)
        elif isinstance(rule, list):
            for option in rule:
                if isinstance(option, dict) and not set(option) <= _OPERATORS:
                    raise UnsupportedPatternError(
                        f"{where}: operator {sorted(option)} is not supported locally"
                    )
        else:
            raise UnsupportedPatternError(f"{where}: a pattern value must be a list or an object")


def _match_option(option: Any, value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    if not isinstance(option, dict):
        return value is not _MISSING and option in values
    if "exists" in option:
        return (value is not _MISSING) == bool(option["exists"])
    if value is _MISSING:
        return False
    strings = [v for v in values if isinstance(v, str)]
    if "prefix" in option:
        return any(v.startswith(option["prefix"]) for v in strings)
    if "suffix" in option:
        return any(v.endswith(option["suffix"]) for v in strings)
    if "equals-ignore-case" in option:
        return any(v.lower() == str(option["equals-ignore-case"]).lower() for v in strings)
    if "anything-but" in option:
        excluded = option["anything-but"]
        excluded = excluded if isinstance(excluded, list) else [excluded]
        return all(v not in excluded for v in values)
    return False


def matches(pattern: dict[str, Any], event: Any) -> bool:
    """EventBridge matching: every field of the pattern must match; a list offers alternatives."""
    for key, rule in pattern.items():
        value = event.get(key, _MISSING) if isinstance(event, dict) else _MISSING
        if isinstance(rule, dict):
            if not isinstance(value, dict) or not matches(rule, value):
                return False
        elif not any(_match_option(option, value) for option in rule):
            return False
    return True


@dataclass
class BusStats:
    put: int = 0
    matched: int = 0
    delivered: int = 0
    errors: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)


class EventBus:
    def __init__(self, rules: list[tuple[RuleSpec, list[LocalFunction]]]) -> None:
        for rule, _ in rules:
            validate_pattern(rule.event_pattern or {})
        self.rules = rules
        self.stats = BusStats()
        self._heap: list[tuple[float, int, dict[str, Any]]] = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="event-target")
        self._thread = threading.Thread(target=self._run, name="event-bus", daemon=True)

    def start(self) -> EventBus:
        if self.rules:
            self._thread.start()
        return self

    def request_stop(self) -> None:
        self._stop.set()
        with self._cv:
            self._cv.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        self.request_stop()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def put(self, event: dict[str, Any], delay_seconds: float = 0.0) -> None:
        with self._cv:
            self.stats.put += 1
            heapq.heappush(self._heap, (time.monotonic() + delay_seconds, next(self._seq), event))
            self._cv.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cv:
                while not self._stop.is_set() and (not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else 1.0
                    self._cv.wait(max(0.01, min(1.0, wait)))
                if self._stop.is_set():
                    return
                _, _, event = heapq.heappop(self._heap)
            self._dispatch(event)

    def _dispatch(self, event: dict[str, Any]) -> None:
        for rule, targets in self.rules:
            if not rule.enabled or not matches(rule.event_pattern or {}, event):
                continue
            self.stats.matched += 1
            self.stats.by_rule[rule.logical_id] = self.stats.by_rule.get(rule.logical_id, 0) + 1
            for spec, fn in zip(rule.targets, targets, strict=True):
                payload = json.loads(spec.input) if spec.input else event
                try:
                    self._pool.submit(self._invoke, rule, fn, payload)
                except RuntimeError:
                    return

    def _invoke(self, rule: RuleSpec, fn: LocalFunction, event: Any) -> None:
        for attempt, delay in enumerate((0.0, *ASYNC_RETRY_DELAYS_SECONDS)):
            if delay and self._stop.wait(delay):
                return
            try:
                fn.invoke(event)
                self.stats.delivered += 1
                return
            except Exception as exc:
                self.stats.errors += 1
                log.warning(
                    "rule %s -> %s failed (attempt %d): %s", rule.logical_id, fn.name, attempt + 1, exc
                )
