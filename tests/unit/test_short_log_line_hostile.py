"""Review of issue 32's short log line (adapters/telemetry.py, ``PowertoolsTelemetry.log`` writing the
formatter's line without a LogRecord): it must be the line the logging module's path writes, and it
must never fail the record that logs it."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from aws_lambda_powertools import Logger, Metrics
from reminders.adapters.telemetry import PowertoolsTelemetry, RecordFormatter


def _telemetry(stream: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> tuple[Logger, PowertoolsTelemetry]:
    # As in Lambda: no root handler that takes the service's records, so the short path is taken.
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    logger = Logger(service="rev32-short-line", logger_formatter=RecordFormatter())
    logger.registered_handler.stream = stream  # type: ignore[attr-defined]
    logger.setLevel("INFO")
    logger.append_keys(function_request_id="req-1")
    return logger, PowertoolsTelemetry(logger, Metrics(namespace="Test", service="t"))


def _both(monkeypatch: pytest.MonkeyPatch, **fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    out = io.StringIO()
    logger, tel = _telemetry(out, monkeypatch)
    tel.log("delivered", **fields)
    logger.info("delivered", extra={"action": "delivered", **fields})  # the logging module's path
    short, full = (json.loads(x) for x in out.getvalue().splitlines())
    return short, full


def test_the_short_line_keeps_its_level_and_timestamp_when_a_field_is_named_like_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    short, full = _both(monkeypatch, reminder_id="rem_1", level="DEBUG", timestamp="1970", location="x")
    assert short["level"] == full["level"] == "INFO"
    assert short.pop("timestamp")[:16] == full.pop("timestamp")[:16]
    assert short == full


def test_logging_does_not_fail_the_record_when_a_field_cannot_be_encoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    logger, tel = _telemetry(out, monkeypatch)
    monkeypatch.setattr(logging, "raiseExceptions", False)  # as in production: a logging error is not printed
    logger.info("delivered", extra={"action": "delivered", "d": {(1, 2): 3}})  # the logging path: no raise
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    # a field the JSON encoder refuses even with default=str: a tuple key, a cycle
    tel.log("delivered", reminder_id="rem_1", d={(1, 2): 3})
    tel.log("delivered", reminder_id="rem_1", c=cyclic)


def test_the_short_line_carries_the_trace_fields_when_an_operator_installs_a_record_factory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = logging.getLogRecordFactory()

    def with_trace(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = real(*args, **kwargs)
        record.otelTraceID = "0af7651916cd43dd8448eb211c80319c"  # type: ignore[attr-defined]
        return record

    monkeypatch.setattr(logging, "_logRecordFactory", with_trace)  # what setLogRecordFactory sets
    short, full = _both(monkeypatch, reminder_id="rem_1")
    assert full["otelTraceID"] == "0af7651916cd43dd8448eb211c80319c"
    assert short.get("otelTraceID") == full["otelTraceID"]


def test_the_short_line_is_redacted_when_an_operator_overrides_make_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = logging.Logger.makeRecord

    def redacting(self: logging.Logger, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = real(self, *args, **kwargs)
        record.reminder_id = "[redacted]"  # type: ignore[attr-defined]
        return record

    monkeypatch.setattr(logging.Logger, "makeRecord", redacting)
    short, full = _both(monkeypatch, reminder_id="rem_1")
    assert full["reminder_id"] == "[redacted]"
    assert short["reminder_id"] == full["reminder_id"]


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_logging_does_not_fail_the_record_when_a_field_cannot_be_made_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    _logger, tel = _telemetry(out, monkeypatch)
    monkeypatch.setattr(logging, "raiseExceptions", False)
    tel.log("delivered", reminder_id="rem_1", odd=_Unprintable())
