"""Telemetry on Powertools: EMF metrics and structured logs with a stable ``action`` key.
Callers pass ids, keys, reasons and counts, never bodies or addresses.

Thread-safe: the records of a batch run in threads. Powertools' ``Metrics.add_metric`` reads,
changes and stores back an entry of a shared dict (two threads adding the same metric at once could
lose one value) and may flush when the set is full, so metrics are added under one lock. Logging is
thread-safe (the ``logging`` module locks its handlers).

Inside :meth:`PowertoolsTelemetry.batch` (the delivery consumer's invocation, issue 32 item 3) the
metrics of its records are gathered in plain dicts and handed to Powertools once, when the batch
ends: a count is one value (the batch's sum), a distribution its values, so the invocation's EMF
document carries every figure and no record pays ``add_metric`` (~16 µs each, three per record)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.filters import SuppressFilter
from aws_lambda_powertools.logging.formatter import RESERVED_LOG_ATTRS, LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit, single_metric

#: Trace lines logged at DEBUG, not INFO: one INFO line per record is its outcome (``delivered``,
#: ``retry_scheduled``, ``dead_lettered``…). The ``send`` line before each provider call cost ~100 µs
#: of CPU and ~0.4 KB of CloudWatch Logs ingestion per record; a crash between send and record is seen
#: without it (the next claim records ``lease_expired``). ``POWERTOOLS_LOG_LEVEL=DEBUG`` shows them.
DEBUG_ACTIONS = frozenset({"send"})

_UNITS = {"Seconds": MetricUnit.Seconds, "Count": MetricUnit.Count, "Milliseconds": MetricUnit.Milliseconds}
#: EMF: at most 100 values per metric in one document (Powertools flushes at that many).
_MAX_VALUES = 100


class PowertoolsTelemetry:
    def __init__(self, logger: Logger, metrics: Metrics, namespace: str | None = None) -> None:
        self.logger = logger
        self.metrics = metrics
        self.namespace = namespace
        self._lock = threading.Lock()
        self._open = 0  # batches open (the local runtime may run several invocations at once)
        self._counts: dict[str, float] = {}
        self._dimensioned: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._values: dict[tuple[str, str], list[float]] = {}

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        with self._lock:
            if self._open:
                if dimensions:
                    key = (name, tuple(sorted((k, str(v)) for k, v in dimensions.items())))
                    self._dimensioned[key] = self._dimensioned.get(key, 0) + value
                else:
                    self._counts[name] = self._counts.get(name, 0) + value
                return
            if not dimensions:
                self.metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
                return
        self._single(name, value, tuple((k, str(v)) for k, v in dimensions.items()))

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        with self._lock:
            if self._open:
                self._values.setdefault((name, unit), []).append(float(value))
                return
            self.metrics.add_metric(name=name, unit=_UNITS.get(unit, MetricUnit.Count), value=value)

    def log(self, action: str, **fields: Any) -> None:
        std = self.logger._logger  # the stdlib logger Powertools wraps
        if action in DEBUG_ACTIONS:
            # Below the logger's level and no debug buffer to keep it for: nothing is written or
            # buffered, so no extra to build (issue 32 item 3: one per webhook send).
            if std.isEnabledFor(logging.DEBUG) or getattr(self.logger, "_buffer_config", None):
                self.logger.debug(action, extra={"action": action, **fields})
            return
        if not std.isEnabledFor(logging.INFO):  # the logger's level (and sampling, logging.disable)
            return
        handler = _sole_handler(self.logger, std)
        # Another handler would see the record (caplog, a filter), or a field is named like a record's
        # own key (level, timestamp… the formatter drops those, logging refuses some): the full path.
        if handler is None or not _RESERVED.isdisjoint(fields):
            self.logger.info(action, extra={"action": action, **fields})
            return
        # Issue 32 item 3: the same line the formatter writes for this record, without the LogRecord
        # (its caller lookup, thread and process names: ~8 of a line's ~21 µs on one thread, measured
        # under load): the one handler that would see it gets the line under its own lock, as
        # ``StreamHandler.emit`` writes it.
        formatter: RecordFormatter = handler.formatter  # type: ignore[assignment]
        try:
            line = formatter.line("INFO", action, time.time(), {"action": action, **fields})
        except Exception:  # a field the encoder refuses or cannot make text: logging reports it, as it would
            self.logger.info(action, extra={"action": action, **fields})
            return
        with handler.lock:  # type: ignore[union-attr]
            try:
                handler.stream.write(line + handler.terminator)
                handler.flush()
            except (OSError, ValueError):  # a closed stream: logging never fails the record either
                pass

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Gather the metrics counted and observed until the batch ends, then add them at once (into
        the metric set the handler's ``log_metrics`` flushes as one document)."""
        with self._lock:
            self._open += 1
        try:
            yield
        finally:
            self._close_batch()

    def _close_batch(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open:
                return
            counts, self._counts = self._counts, {}
            values, self._values = self._values, {}
            dimensioned, self._dimensioned = self._dimensioned, {}
            for name, total in counts.items():
                self.metrics.add_metric(name=name, unit=MetricUnit.Count, value=total)
            for (name, unit), vals in values.items():
                self._add_values(name, _UNITS.get(unit, MetricUnit.Count), vals)
        for (name, dims), total in dimensioned.items():
            self._single(name, total, dims)

    def _add_values(self, name: str, unit: MetricUnit, vals: list[float]) -> None:
        """``add_metric`` validates the first value and creates the entry; the rest join its list as
        Powertools itself appends them, up to the document's limit (beyond it, one call each, which
        flushes a full document as Powertools does)."""
        self.metrics.add_metric(name=name, unit=unit, value=vals[0])
        entry = self.metrics.metric_set.get(name)
        rest = vals[1:]
        if entry is not None and len(entry["Value"]) + len(rest) < _MAX_VALUES:
            entry["Value"].extend(rest)
            return
        for v in rest:
            self.metrics.add_metric(name=name, unit=unit, value=v)

    def _single(self, name: str, value: float, dimensions: tuple[tuple[str, str], ...]) -> None:
        with single_metric(name=name, unit=MetricUnit.Count, value=value, namespace=self.namespace) as m:
            for k, v in dimensions:
                m.add_dimension(name=k, value=v)


class RecordFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON formatter with a cheaper line (issue 32 item 3): level, message, timestamp
    (RFC 3339, UTC), the logger's keys (service, the invocation's request id, the channel), the line's
    own fields and the X-Ray trace id — no ``location`` (every line of ours was ``log:<n>``, this
    module's). It builds the line from the record's own fields instead of copying and filtering the
    record's whole ``__dict__``; a line with an exception, a stack, arguments or a JSON message is
    formatted by Powertools itself, unchanged."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            log_record_order=["level", "message", "timestamp"], utc=True, use_rfc3339=True, **kwargs
        )

    def format(self, record: logging.LogRecord) -> str:
        msg = record.msg
        if record.exc_info or record.stack_info or record.args or not isinstance(msg, str) or msg[:1] in "{[":
            return super().format(record)
        fields = record.__dict__
        own = {k: fields[k] for k in fields.keys() - _RESERVED}
        return self.line(record.levelname, msg, record.created, own)

    def line(self, level: str, msg: str, created: float, fields: dict[str, Any]) -> str:
        """The short line of a record at ``level`` with message ``msg``, created at ``created`` (epoch
        seconds), carrying the logger's keys and the record's own ``fields``."""
        line: dict[str, Any] = {
            "level": level,
            "message": msg,
            "timestamp": datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds"),
        }
        for k, v in self.log_format.items():
            if v is not None and k not in _TEMPLATED:
                line[k] = v
        line.update(self.thread_safe_get_current_keys())
        line.update(fields)
        trace = self._get_latest_trace_id()
        if trace:
            line["xray_trace_id"] = trace
        return self.serialize({k: v for k, v in line.items() if v is not None})


_TEMPLATED = frozenset({"level", "message", "timestamp", "location", "xray_trace_id"})
_RESERVED = frozenset(RESERVED_LOG_ATTRS) | {"asctime", "taskName"}


def _sole_handler(logger: Logger, std: logging.Logger) -> logging.StreamHandler | None:
    """The logger's own stream handler with our formatter, if it is the only handler an INFO record of
    ``std`` would reach (no filter on the logger or the handler, no record factory or makeRecord of an
    operator's; every ancestor's handler suppresses the service's records, as Powertools sets the
    root's up); otherwise None (the full logging path)."""
    if std.filters or getattr(logger, "_buffer_config", None):
        return None
    # A record factory or makeRecord an operator installed (OpenTelemetry's trace fields, a redaction),
    # before or after this module was imported, sees only records: the short line makes none.
    if logging.getLogRecordFactory() is not logging.LogRecord or type(std).makeRecord.__module__ != "logging":
        return None
    own = getattr(std, "powertools_handler", None)
    if (
        not isinstance(own, logging.StreamHandler)
        or not isinstance(own.formatter, RecordFormatter)
        or own.filters
        or own.level > logging.INFO
    ):
        return None
    node: logging.Logger | None = std
    while node is not None:
        for h in node.handlers:
            if h is own:
                continue
            if h.level > logging.INFO:
                continue
            if not any(isinstance(f, SuppressFilter) and f.logger in std.name for f in h.filters):
                return None
        if not node.propagate:
            break
        node = node.parent
    if own not in std.handlers:
        return None
    return own
