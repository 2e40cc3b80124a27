"""Issue 32 item 3: the CPU-per-record bench counts what it claims (the log level of each run, the
service's metrics), and the delivery handler's per-record telemetry is cheap: one short structured log
line per record and its metrics as one EMF document per batch. No timing assertions: the figure is
printed by ``make bench``; these tests pin what it measures and what each record writes."""

from __future__ import annotations

import json

from reminders_ops.bench.sim.overhead import handler_cpu_per_record


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_cpu_bench_counts_the_info_line_when_a_quieter_run_came_first() -> None:
    quiet = handler_cpu_per_record(20, warmup=0, log_level="WARNING", keep_output=True)
    full = handler_cpu_per_record(20, warmup=0, log_level="INFO", keep_output=True)
    info = [r for r in _lines(full["output"]) if r.get("level") == "INFO" and r.get("action") == "delivered"]
    assert len(info) == 20  # the production level's line per record is written (and its CPU counted)
    assert not [r for r in _lines(quiet["output"]) if r.get("level") == "INFO"]
    assert full["log_level"] == "INFO" and quiet["log_level"] == "WARNING"


def test_a_batch_publishes_one_metric_document_when_ten_records_deliver() -> None:
    run = handler_cpu_per_record(20, warmup=0, keep_output=True)
    docs = [r for r in _lines(run["output"]) if "_aws" in r]
    assert len(docs) == 2  # two batches of ten: one EMF document each, no per-record document
    for doc in docs:
        assert doc["delivered"] in (10, [10.0])  # a count is summed, not one value per record
        lateness = doc["schedule_to_send_lateness_seconds"]
        assert isinstance(lateness, list) and len(lateness) == 10  # a distribution keeps its values


def test_the_per_record_log_line_is_short_when_a_delivery_is_recorded() -> None:
    run = handler_cpu_per_record(10, warmup=0, keep_output=True)
    lines = [r for r in _lines(run["output"]) if r.get("action") == "delivered"]
    assert len(lines) == 10
    allowed = {
        "level", "timestamp", "message", "service", "action", "reminder_id", "delivery_key", "outcome",
        "status", "function_request_id", "channel", "xray_trace_id",
    }  # fmt: skip
    for line in lines:
        assert set(line) <= allowed, set(line) - allowed
        assert {"reminder_id", "delivery_key", "function_request_id"} <= set(line)  # still joinable
        assert len(json.dumps(line, separators=(",", ":"))) <= 360  # 507 B with the whole context


def test_a_line_with_an_exception_is_formatted_by_powertools_when_the_short_form_cannot_carry_it() -> None:
    import logging

    from reminders.adapters.telemetry import RecordFormatter

    f = RecordFormatter()
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        rec = logging.LogRecord("reminders", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    out = json.loads(f.format(rec))
    assert out["exception_name"] == "ValueError" and "boom" in out["exception"]


def test_dimensioned_counts_of_a_batch_are_published_summed_when_the_batch_ends(capsys) -> None:  # type: ignore[no-untyped-def]
    from aws_lambda_powertools import Logger, Metrics
    from reminders.adapters.telemetry import PowertoolsTelemetry

    metrics = Metrics(namespace="Test", service="t")
    tel = PowertoolsTelemetry(Logger(service="t"), metrics, namespace="Test")
    with tel.batch():
        for _ in range(3):
            tel.count("handed_back", reason="rate_limited")
        tel.observe("lateness", 0.5)
        assert "handed_back" not in capsys.readouterr().out  # nothing published mid-batch
    docs = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [d["handed_back"] for d in docs] in ([3], [[3.0]], [3.0])
    assert docs[0]["reason"] == "rate_limited"
    assert metrics.metric_set["lateness"]["Value"] == [0.5]  # in the handler's own document
    metrics.clear_metrics()


def _telemetry_on(stream):  # type: ignore[no-untyped-def]
    from aws_lambda_powertools import Logger, Metrics
    from reminders.adapters.telemetry import PowertoolsTelemetry, RecordFormatter

    logger = Logger(service="h32d-short-line", logger_formatter=RecordFormatter())
    logger.registered_handler.stream = stream  # type: ignore[attr-defined]
    logger.setLevel("INFO")
    logger.append_keys(function_request_id="req-1", channel="webhook")
    return logger, PowertoolsTelemetry(logger, Metrics(namespace="Test", service="t"))


def test_the_short_line_is_the_formatters_line_when_the_logger_has_one_handler(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io
    import logging

    out = io.StringIO()
    logger, tel = _telemetry_on(out)
    # As in Lambda with Powertools: no handler above the logger's own that takes its records (pytest's
    # capture handlers on the root would; Lambda's own root handler gets Powertools' SuppressFilter).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    made: list[str] = []
    real = (
        logging.LogRecord.__init__
    )  # counted in the record itself: a makeRecord of ours takes the full path
    monkeypatch.setattr(
        logging.LogRecord, "__init__", lambda self, *a, **k: made.append("x") or real(self, *a, **k)
    )
    fields = {"reminder_id": "rem_1", "delivery_key": "dlv_1", "outcome": "accepted", "status": 200}
    tel.log("delivered", **fields)  # the short path: no LogRecord
    assert not made
    logger.info("delivered", extra={"action": "delivered", **fields})  # the logging module's path
    assert made
    short, full = (json.loads(x) for x in out.getvalue().splitlines())
    assert short.pop("timestamp")[:16] == full.pop("timestamp")[:16]
    assert short == full
    logger.setLevel("WARNING")
    tel.log("delivered", **fields)
    assert len(out.getvalue().splitlines()) == 2  # the logger's level still decides


def test_another_handler_sees_the_line_when_one_is_attached_to_the_logger() -> None:
    import io
    import logging

    out = io.StringIO()
    _logger, tel = _telemetry_on(out)
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    extra = Keep()
    logging.getLogger().addHandler(extra)  # an ancestor's handler that does not suppress the service
    try:
        tel.log("delivered", reminder_id="rem_1")
    finally:
        logging.getLogger().removeHandler(extra)
    assert [r.getMessage() for r in seen] == ["delivered"]  # the full logging path was taken
    assert json.loads(out.getvalue())["reminder_id"] == "rem_1"


def test_the_send_debug_line_is_written_when_the_level_is_debug() -> None:
    # Issue 32 item 3: below DEBUG the "send" line's extra is not built; at DEBUG it is still written.
    debug = handler_cpu_per_record(10, warmup=0, log_level="DEBUG", keep_output=True)
    info = handler_cpu_per_record(10, warmup=0, log_level="INFO", keep_output=True)
    sends = [r for r in _lines(debug["output"]) if r.get("action") == "send"]
    assert len(sends) == 10 and all(r["level"] == "DEBUG" and r["attempt"] == 1 for r in sends)
    assert not [r for r in _lines(info["output"]) if r.get("action") == "send"]
