"""A tap on the handlers' stdout: Powertools writes structured logs and EMF metrics there, as in
Lambda. The local runtime keeps them off the terminal (the live view owns it), writes every line to
a log file, counts the EMF metrics by name and dimensions and keeps the last log events."""

from __future__ import annotations

import io
import json
import sys
import threading
from collections import Counter, deque
from pathlib import Path
from typing import Any, TextIO

EVENT_FIELDS = ("reminder_id", "delivery_key", "reason", "status", "state", "shard", "dispatched", "attempts")


def _routine(doc: dict[str, Any]) -> bool:
    """Dispatcher chatter every tick (kept in the log file, not among the last events)."""
    action = doc.get("action")
    if action == "dispatch_tick":
        return True
    return action == "dispatch_shard" and not doc.get("dispatched") and not doc.get("requeued")


class TelemetryTap(io.TextIOBase):
    def __init__(self, log_path: Path | None, *, max_events: int = 200, echo: TextIO | None = None) -> None:
        self.log_path = log_path
        self._file = open(log_path, "a", buffering=1, encoding="utf-8") if log_path else None  # noqa: SIM115
        self._echo = echo
        self._local = threading.local()
        self._lock = threading.Lock()
        self.metrics: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        self.events: deque[dict[str, Any]] = deque(maxlen=max_events)
        self.levels: Counter[str] = Counter()
        self._saved: TextIO | None = None

    # -- install -------------------------------------------------------------------------------
    def install(self) -> TelemetryTap:
        """Replace sys.stdout for everything that prints (before any Powertools Logger exists)."""
        self._saved = sys.stdout
        sys.stdout = self
        return self

    def uninstall(self) -> None:
        if self._saved is not None:
            sys.stdout = self._saved
            self._saved = None
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- TextIO ----------------------------------------------------------------------------------
    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        buf: str = getattr(self._local, "buf", "") + s
        *lines, rest = buf.split("\n")
        self._local.buf = rest
        for line in lines:
            self._line(line)
        return len(s)

    def flush(self) -> None:
        buf = getattr(self._local, "buf", "")
        if buf:
            self._local.buf = ""
            self._line(buf)

    # -- parsing ---------------------------------------------------------------------------------
    def _line(self, line: str) -> None:
        if not line.strip():
            return
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
            if self._echo is not None:
                self._echo.write(line + "\n")
            try:
                doc = json.loads(line)
            except ValueError:
                return
            if not isinstance(doc, dict):
                return
            if "_aws" in doc:
                self._metric(doc)
            else:
                self._event(doc)

    def _metric(self, doc: dict[str, Any]) -> None:
        for directive in doc["_aws"].get("CloudWatchMetrics", []):
            dim_names = sorted({d for group in directive.get("Dimensions", []) for d in group})
            dims = tuple((d, str(doc.get(d, ""))) for d in dim_names if d not in ("service",))
            for metric in directive.get("Metrics", []):
                name = metric["Name"]
                value = doc.get(name)
                values = value if isinstance(value, list) else [value]
                if metric.get("Unit") == "Count":
                    self.metrics[(name, dims)] += int(sum(float(v or 0) for v in values))
                else:
                    self.metrics[(f"{name}#n", dims)] += len(values)

    def _event(self, doc: dict[str, Any]) -> None:
        level = str(doc.get("level", ""))
        self.levels[level] += 1
        action = doc.get("action") or doc.get("message")
        if not action:
            return
        if _routine(doc):
            return
        event = {"at": doc.get("timestamp", ""), "level": level, "action": str(action)[:80]}
        for k in EVENT_FIELDS:
            if k in doc:
                event[k] = doc[k]
        if "channel" in doc:
            event["channel"] = doc["channel"]
        self.events.append(event)

    # -- reading ---------------------------------------------------------------------------------
    def counts(self, name: str, by: str | None = None) -> dict[str, int]:
        """A metric's total, or its totals per value of one dimension."""
        out: Counter[str] = Counter()
        with self._lock:
            for (n, dims), v in self.metrics.items():
                if n != name:
                    continue
                key = dict(dims).get(by, "") if by else ""
                out[key] += v
        return dict(out)

    def last_events(self, n: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)[-n:]
