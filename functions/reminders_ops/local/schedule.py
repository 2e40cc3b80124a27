"""EventBridge schedule expressions (``rate(...)``, ``cron(...)``) and the scheduler that invokes
each scheduled rule's targets with a real scheduled event (moto accepts rules but never fires them).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .events import scheduled_event
from .lambdas import LocalFunction
from .spec import RuleSpec

log = logging.getLogger("reminders_ops.local")

_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}
_MONTHS = {"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6}
_MONTHS |= {"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
_DAYS = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}  # AWS: 1 = Sunday
CRON_SEARCH_DAYS = 366 * 5


class UnsupportedScheduleError(ValueError):
    """A schedule expression the local scheduler cannot run (it is reported, never skipped)."""


def _field(spec: str, lo: int, hi: int, names: dict[str, int] | None = None) -> set[int] | None:
    """The values a cron field allows; None for ``*``/``?`` (anything)."""
    if spec in ("*", "?"):
        return None
    if any(c in spec for c in "LW#"):
        raise UnsupportedScheduleError(f"cron field {spec!r}: L, W and # are not supported locally")
    out: set[int] = set()

    def num(s: str) -> int:
        s = s.upper()
        if names and s in names:
            return names[s]
        return int(s)

    for part in spec.split(","):
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            step = int(step_s)
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a_s, b_s = part.split("-", 1)
            a, b = num(a_s), num(b_s)
        else:
            a = num(part)
            b = hi if step > 1 else a
        if not (lo <= a <= hi and lo <= b <= hi):
            raise UnsupportedScheduleError(f"cron field {spec!r} outside {lo}..{hi}")
        out.update(range(a, b + 1, step))
    return out


@dataclass(frozen=True)
class Cron:
    minutes: set[int] | None
    hours: set[int] | None
    days: set[int] | None
    months: set[int] | None
    weekdays: set[int] | None  # 1 = Sunday
    years: set[int] | None

    @classmethod
    def parse(cls, body: str) -> Cron:
        parts = body.split()
        if len(parts) != 6:
            raise UnsupportedScheduleError(f"cron({body}) needs 6 fields")
        return cls(
            _field(parts[0], 0, 59),
            _field(parts[1], 0, 23),
            _field(parts[2], 1, 31),
            _field(parts[3], 1, 12, _MONTHS),
            _field(parts[4], 1, 7, _DAYS),
            _field(parts[5], 1970, 2199),
        )

    def _day_ok(self, d: datetime) -> bool:
        aws_weekday = (d.isoweekday() % 7) + 1  # Monday=1..Sunday=7 -> Sunday=1..Saturday=7
        return (
            (self.years is None or d.year in self.years)
            and (self.months is None or d.month in self.months)
            and (self.days is None or d.day in self.days)
            and (self.weekdays is None or aws_weekday in self.weekdays)
        )

    def next_after(self, now: datetime) -> datetime:
        start = (now + timedelta(minutes=1)).replace(second=0, microsecond=0)
        day = start.replace(hour=0, minute=0)
        for _ in range(CRON_SEARCH_DAYS):
            if self._day_ok(day):
                for h in range(24):
                    if self.hours is not None and h not in self.hours:
                        continue
                    for m in range(60):
                        if self.minutes is not None and m not in self.minutes:
                            continue
                        at = day.replace(hour=h, minute=m)
                        if at >= start:
                            return at
            day += timedelta(days=1)
        raise UnsupportedScheduleError("cron expression never fires")


@dataclass(frozen=True)
class Schedule:
    expression: str
    period_seconds: float | None = None  # rate()
    cron: Cron | None = None

    @classmethod
    def parse(cls, expression: str, rate_override_seconds: float | None = None) -> Schedule:
        expr = expression.strip()
        m = _RATE.match(expr)
        if m:
            n, unit = int(m.group(1)), m.group(2).rstrip("s")
            if n < 1:
                raise UnsupportedScheduleError(f"{expr}: the rate must be positive")
            period = rate_override_seconds or float(n * _UNIT_SECONDS[unit])
            return cls(expr, period_seconds=period)
        if expr.startswith("cron(") and expr.endswith(")"):
            return cls(expr, cron=Cron.parse(expr[5:-1]))
        raise UnsupportedScheduleError(f"schedule expression {expr!r} is neither rate(...) nor cron(...)")

    def next_after(self, now: datetime) -> datetime:
        if self.period_seconds is not None:
            return now + timedelta(seconds=self.period_seconds)
        assert self.cron is not None
        return self.cron.next_after(now)


@dataclass
class RuleStats:
    fired: int = 0
    errors: int = 0
    last_fired_at: float = 0.0
    next_at: float = 0.0


@dataclass
class _Entry:
    rule: RuleSpec
    schedule: Schedule
    targets: list[LocalFunction]
    next_at: datetime
    stats: RuleStats = field(default_factory=RuleStats)


class Scheduler:
    """Fires every scheduled rule on its expression. A rate rule also fires once at start (so a
    restarted runtime catches up at once; the dispatcher's checkpoint makes that harmless)."""

    def __init__(
        self,
        rules: list[tuple[RuleSpec, list[LocalFunction]]],
        *,
        account_id: str,
        region: str,
        rate_override_seconds: float | None = None,
        fire_rate_rules_at_start: bool = True,
        paused: Callable[[], bool] = lambda: False,
    ) -> None:
        now = datetime.now(UTC)
        self.account_id = account_id
        self.region = region
        self.paused = paused
        self.entries: list[_Entry] = []
        for rule, targets in rules:
            assert rule.schedule is not None
            sched = Schedule.parse(rule.schedule, rate_override_seconds)
            first = now if (fire_rate_rules_at_start and sched.period_seconds) else sched.next_after(now)
            self.entries.append(_Entry(rule, sched, targets, first))
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="scheduled")
        self._thread = threading.Thread(target=self._run, name="scheduler", daemon=True)
        self._lock = threading.Lock()

    def start(self) -> Scheduler:
        if self.entries:
            self._thread.start()
        return self

    def request_stop(self) -> None:
        self._stop.set()

    def stop(self, timeout: float = 15.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def next_fire(self, rule_id: str) -> datetime | None:
        for e in self.entries:
            if e.rule.logical_id == rule_id:
                return e.next_at
        return None

    def stats(self) -> dict[str, RuleStats]:
        with self._lock:
            for e in self.entries:
                e.stats.next_at = e.next_at.timestamp()
            return {e.rule.logical_id: e.stats for e in self.entries}

    def _run(self) -> None:
        while not self._stop.is_set():
            now = datetime.now(UTC)
            for e in self.entries:
                if e.next_at <= now:
                    with self._lock:
                        e.next_at = e.schedule.next_after(max(now, e.next_at))
                    if e.rule.enabled and not self.paused():
                        self.fire(e)
            wake = min(e.next_at for e in self.entries)
            self._stop.wait(max(0.05, min(1.0, (wake - datetime.now(UTC)).total_seconds())))

    def fire(self, e: _Entry) -> None:
        for i, fn in enumerate(e.targets):
            target = e.rule.targets[i]
            event: Any = (
                json.loads(target.input)
                if target.input
                else scheduled_event(e.rule.arn, self.account_id, self.region)
            )
            try:
                self._pool.submit(self._invoke, e, fn, event)
            except RuntimeError:
                return

    def _invoke(self, e: _Entry, fn: LocalFunction, event: Any) -> None:
        try:
            fn.invoke(event)
        except Exception as exc:  # an async invoke that failed: EventBridge would retry; we report
            with self._lock:
                e.stats.errors += 1
            log.warning("rule %s -> %s failed: %s", e.rule.logical_id, fn.name, exc)
        finally:
            with self._lock:
                e.stats.fired += 1
                e.stats.last_fired_at = time.time()
