"""Handler overhead: our own CPU per SQS record in the delivery handler (in-memory backends, an
instant receiver, the real handler with Powertools), and the cold start of each handler (import plus
first invocation in a fresh process) against a process that imports only boto3 and Powertools."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import Rendered
from reminders.domain.retry import OutcomeClass, SendResult

from .embedded import FAKE_ENV, create_stack_resources, fake_aws_env
from .model import template_handlers


class InstantReceiver:
    """A provider that accepts at once: what remains is our own CPU."""

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        return SendResult(OutcomeClass.ACCEPTED, 200, receipt="rcpt-1", fingerprint=rendered.fingerprint)


def handler_cpu_per_record(
    records: int = 3000,
    warmup: int = 200,
    *,
    log_level: str = "INFO",
    telemetry_on: bool = True,
    keep_output: bool = False,
) -> dict[str, Any]:
    """CPU (``time.process_time``) per record of ``handlers.delivery.webhook_handler`` invoked with real
    SQS events from the in-memory SQS; the ESM's receive/delete are outside the measurement.
    ``log_level``/``telemetry_on`` isolate what Powertools logging and metrics cost (breakdown)."""
    # Powertools configures a service's logger once (its level from POWERTOOLS_LOG_LEVEL then) and keeps
    # it: a run's level must not outlive the run for a later Logger of the same service (a test's).
    levels_before = _logger_levels()
    try:
        return _measure(records, warmup, log_level, telemetry_on, keep_output)
    finally:
        outer = logging.getLevelName(os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO").upper())
        for name, lg in _loggers().items():
            lg.setLevel(levels_before.get(name, outer if getattr(lg, "init", False) else lg.level))


def _loggers() -> dict[str, logging.Logger]:
    return {n: lg for n, lg in logging.Logger.manager.loggerDict.items() if isinstance(lg, logging.Logger)}


def _logger_levels() -> dict[str, int]:
    return {n: lg.level for n, lg in _loggers().items()}


def _measure(
    records: int, warmup: int, log_level: str, telemetry_on: bool, keep_output: bool
) -> dict[str, Any]:
    from reminders import runtime
    from reminders.adapters.clock import SystemClock
    from reminders.adapters.memory import MemoryReminderStore
    from reminders.adapters.memory_sqs import MemoryQueues, MemorySqs, QueueConfig, sqs_event_records
    from reminders.adapters.telemetry import PowertoolsTelemetry
    from reminders.domain.ports import NullTelemetry, Telemetry
    from reminders.domain.retry import RetryPolicy
    from reminders.handlers.delivery import webhook_handler
    from reminders.services.deliver import Deliverer
    from reminders.services.intents import Reminders

    from .embedded import lambda_context
    from .scenarios import command

    with fake_aws_env({"POWERTOOLS_LOG_LEVEL": log_level}), contextlib.redirect_stdout(io.StringIO()) as sink:
        clock = SystemClock()
        sqs = MemorySqs(time.time)
        for name in ("webhook", "email"):
            sqs.create_queue(f"{name}-dlq")
            sqs.create_queue(name, QueueConfig(180, 0, f"{name}-dlq", 20))
        queues = MemoryQueues(
            sqs,
            queue_names={"webhook": "webhook", "email": "email"},
            dlq_names={"webhook": "webhook-dlq", "email": "email-dlq"},
        )
        store = MemoryReminderStore()
        telemetry: Telemetry = (
            PowertoolsTelemetry(runtime.logger(), runtime.metrics()) if telemetry_on else NullTelemetry()
        )
        # Powertools keeps the first Logger's handler, and the stream it had then, for the service:
        # point it at this run's sink, or a second run's lines (formatted, their CPU counted) would be
        # written to the first run's and the bytes per record below would miss them.
        # (Assigned, not ``setStream``: that flushes the previous stream, which a finished run or a
        # test's capture may have closed.) Restored when the run ends.
        # The run's own level: Powertools sets a logger's level when it first configures it, so a
        # later run's POWERTOOLS_LOG_LEVEL alone would be ignored (issue 32 item 3). Restored after.
        saved_level = runtime.logger().log_level
        runtime.logger().setLevel(log_level)
        handler = runtime.logger().registered_handler
        stream = handler if isinstance(handler, logging.StreamHandler) else None
        previous = stream.stream if stream is not None else None
        if stream is not None:
            stream.stream = sink
        intents = Reminders(store=store, queues=queues, clock=clock, telemetry=NullTelemetry(), shards=16)
        due = datetime.now(UTC) - timedelta(seconds=1)
        total = records + warmup
        for i in range(total):
            intents.create(command(i, due))
        deliverer = Deliverer(
            store=store,
            queues=queues,
            senders={"webhook": InstantReceiver(), "email": InstantReceiver()},
            clock=clock,
            policy=RetryPolicy(),
            telemetry=telemetry,
            worker="RemindersStack-DeliveryWebhookDeliveryFunctionAE20B3-Xk7P2mQ9rT4v:0123456789ab",
        )
        saved = runtime.deliverer, runtime.queues
        runtime.deliverer = lambda: deliverer  # type: ignore[assignment]
        runtime.queues = lambda: queues  # type: ignore[assignment]
        arn = "arn:aws:sqs:us-east-1:111111111111:webhook"
        cpu = 0.0
        measured = 0
        outcomes: dict[str, int] = {}
        try:
            done = 0
            while True:
                got = sqs.receive("webhook", 10)
                if not got:
                    break
                event = sqs_event_records(got, arn)
                t0 = time.process_time()
                result = webhook_handler(event, lambda_context("webhook"))
                spent = time.process_time() - t0
                failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
                sqs.delete_batch("webhook", [r.receipt_handle for r in got if r.message_id not in failed])
                if done >= warmup:
                    cpu += spent
                    measured += len(got)
                done += len(got)
                key = "failed" if failed else "ok"
                outcomes[key] = outcomes.get(key, 0) + len(got)
        finally:
            runtime.deliverer, runtime.queues = saved
            if stream is not None:
                stream.stream = previous
            runtime.logger().setLevel(saved_level)
        output = sink.getvalue()
    delivered = sum(1 for it in store.items.values() if it["dl"]["webhook-0"]["st"] == "delivered")
    signing = _signing_cost()
    return {
        "records": measured,
        "cpu_us_per_record": cpu / max(1, measured) * 1e6,
        "goal_us_per_record": 200.0,
        "delivered": delivered,
        "outcomes": outcomes,
        "log_level": log_level,
        "service_telemetry": telemetry_on,
        "stdout_bytes_per_record": len(output) / max(1, measured + warmup),
        "webhook_signing_us": signing,
        **({"output": output} if keep_output else {}),
    }


def _signing_cost(n: int = 2000) -> float:
    """CPU of one Standard Webhooks signature (the webhook adapter's own work, not in the figure)."""
    from standardwebhooks.webhooks import Webhook

    from .embedded import DEV_SECRET

    wh = Webhook(DEV_SECRET)
    body = json.dumps({"type": "reminder.due", "data": {"renewal_date": "2026-12-20"}})
    now = datetime.now(UTC)
    t0 = time.process_time()
    for i in range(n):
        wh.sign(f"dlv_{i:032d}", now, body)
    return (time.process_time() - t0) / n * 1e6


# -- cold start ------------------------------------------------------------------------------------

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
name, spec = sys.argv[1], json.loads(sys.argv[2])
if name == "baseline":
    import boto3, aws_lambda_powertools  # noqa: F401
    t1 = t2 = time.perf_counter()
else:
    import importlib
    module, _, attr = name.rpartition(".")
    fn = getattr(importlib.import_module(module), attr)
    t1 = time.perf_counter()
    class Ctx:
        function_name = "bench"; memory_limit_in_mb = 256; aws_request_id = "cold-start"
        invoked_function_arn = "arn:aws:lambda:us-east-1:111111111111:function:bench"
        def get_remaining_time_in_millis(self): return 60000
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        out = fn(spec["event"], Ctx())
    t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "invoke_ms": (t2 - t1) * 1e3}))
"""


def _events(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    from .embedded import http_event, scheduled_event

    def sqs(body: dict[str, Any], queue: str) -> dict[str, Any]:
        return {
            "Records": [
                {
                    "messageId": "6f0f8f6e-0000-4000-8000-000000000001",
                    "receiptHandle": "cold-start-receipt",
                    "body": json.dumps(body),
                    "attributes": {
                        "ApproximateReceiveCount": "1",
                        "SentTimestamp": "1764579600000",
                        "SenderId": "AIDAEXAMPLE",
                        "ApproximateFirstReceiveTimestamp": "1764579600000",
                    },
                    "messageAttributes": {},
                    "md5OfBody": "",
                    "eventSource": "aws:sqs",
                    "eventSourceARN": f"arn:aws:sqs:us-east-1:111111111111:{queue}",
                    "awsRegion": "us-east-1",
                }
            ]
        }

    unknown = {"reminder_id": "rem_" + "0" * 32, "channel_id": "webhook-0", "version": 1}
    due = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    return {
        "reminders.handlers.api.handler": http_event(
            "POST",
            "/reminders",
            {
                "account_id": "acct-cold",
                "key": "renewal-reminder:acct-cold:2026-12-20:webhook",
                "kind": "renewal",
                "due_at": due,
                "channels": [{"type": "webhook", "url": "https://127.0.0.1/hooks"}],
                "template": {"id": "renewal", "version": 1},
                "data": {"renewal_date": "2026-12-20"},
            },
        ),
        # A one-click unsubscribe with a token that does not verify (issue 24: the public function).
        "reminders.handlers.public.handler": {
            **http_event("POST", "/unsubscribe/cold.start"),
            "routeKey": "POST /unsubscribe/{token}",
            "pathParameters": {"token": "cold.start"},
        },
        "reminders.handlers.dispatcher.tick_handler": scheduled_event(),
        "reminders.handlers.dispatcher.shard_handler": sqs({"shard": 0}, "dispatch"),
        "reminders.handlers.delivery.webhook_handler": sqs(unknown, "webhook"),
        "reminders.handlers.delivery.email_handler": sqs({**unknown, "channel_id": "email-0"}, "email"),
        "reminders.handlers.ses_events.handler": {
            **scheduled_event(),
            "detail-type": "Email Sent",
            "source": "aws.ses",
            "detail": {
                "eventType": "Send",
                "mail": {
                    "timestamp": "2026-12-01T09:00:01.000Z",
                    "messageId": "0100018c-cold-start",
                    "tags": {
                        "delivery_key": ["dlv_" + "0" * 32],
                        "reminder_id": ["rem_" + "0" * 32],
                        "channel_id": ["email-0"],
                    },
                },
                "send": {},
            },
        },
        # A receiver's receipt for an unknown delivery, as the table's stream carries it (issue 19).
        "reminders.handlers.receipts.handler": {
            "Records": [
                {
                    "eventID": "1",
                    "eventName": "INSERT",
                    "eventVersion": "1.1",
                    "eventSource": "aws:dynamodb",
                    "awsRegion": "us-east-1",
                    "dynamodb": {
                        "Keys": {"pk": {"S": "RCPT#dlv_" + "0" * 32}, "sk": {"S": "E#evt-cold"}},
                        "NewImage": {
                            "pk": {"S": "RCPT#dlv_" + "0" * 32},
                            "sk": {"S": "E#evt-cold"},
                            "rid": {"S": "rem_" + "0" * 32},
                            "cid": {"S": "webhook-0"},
                            "st": {"S": "processed"},
                            "et": {"S": "2026-12-01T09:00:01.000000Z"},
                        },
                        "SequenceNumber": "1",
                        "StreamViewType": "NEW_IMAGE",
                    },
                    "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/reminders/stream/x",
                }
            ]
        },
        # An endpoint going from active to held, for an account without an event endpoint (issue 16).
        "reminders.handlers.opevents.handler": {
            "Records": [
                {
                    "eventID": "1",
                    "eventName": "MODIFY",
                    "eventVersion": "1.1",
                    "eventSource": "aws:dynamodb",
                    "awsRegion": "us-east-1",
                    "dynamodb": {
                        "Keys": {"pk": {"S": "E#ep_" + "0" * 32}, "sk": {"S": "H"}},
                        "OldImage": {
                            "pk": {"S": "E#ep_" + "0" * 32},
                            "sk": {"S": "H"},
                            "acct": {"S": "acct-cold"},
                            "st": {"S": "active"},
                            "tv": {"N": "0"},
                            "since": {"S": "2026-12-01T09:00:00.000000Z"},
                        },
                        "NewImage": {
                            "pk": {"S": "E#ep_" + "0" * 32},
                            "sk": {"S": "H"},
                            "acct": {"S": "acct-cold"},
                            "st": {"S": "held"},
                            "tv": {"N": "1"},
                            "since": {"S": "2026-12-01T09:00:01.000000Z"},
                            "why": {"S": "transient"},
                        },
                        "SequenceNumber": "1",
                        "StreamViewType": "NEW_AND_OLD_IMAGES",
                    },
                    "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/reminders/stream/x",
                }
            ]
        },
    }


def cold_starts(runs: int = 3) -> dict[str, Any]:
    """Median over ``runs`` fresh processes per handler (and for the baseline) against a moto server
    holding the stack's resources; the first invocation makes its real AWS calls to it. Reported as
    the child's CPU time (user + system, what a contended 2-core machine measures fairly) and wall."""
    import tempfile

    from moto.server import ThreadedMotoServer

    from reminders_ops.local.faithful import faithful_moto

    faithful_moto()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    handlers, source = template_handlers()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    results: dict[str, Any] = {"handlers_from": source, "runs": runs, "handlers": {}}
    endpoint = f"http://{host}:{port}"
    try:
        # the server resolves the account from this process's environment: keep it for the whole run
        with fake_aws_env({"AWS_ENDPOINT_URL": endpoint}):
            env = {**create_stack_resources(), **FAKE_ENV, "AWS_ENDPOINT_URL": endpoint}
            child_env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            child_env.update(env)
            child_env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            child_env["AWS_LAMBDA_FUNCTION_NAME"] = "bench-cold-start"
            # A deployed package carries compiled bytecode; this machine sets PYTHONDONTWRITEBYTECODE,
            # so children compile into a private cache (warmed by one unmeasured run per target).
            child_env.pop("PYTHONDONTWRITEBYTECODE", None)
            child_env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "reminders-bench-pycache")
            events = _events(env)

            def measure(name: str, event: dict[str, Any]) -> dict[str, Any]:
                walls, cpus, imports, invokes = [], [], [], []
                for i in range(runs + 1):
                    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
                        t0 = time.perf_counter()
                        proc = subprocess.Popen(
                            [sys.executable, "-c", _CHILD, name, json.dumps({"event": event})],
                            env=child_env,
                            stdout=out,
                            stderr=err,
                        )
                        _, status, usage = os.wait4(proc.pid, 0)
                        proc.returncode = os.waitstatus_to_exitcode(status)
                        walls.append((time.perf_counter() - t0) * 1e3)
                        cpus.append((usage.ru_utime + usage.ru_stime) * 1e3)
                        out.seek(0)
                        err.seek(0)
                        stdout, stderr = out.read(), err.read()
                    if proc.returncode != 0:
                        return {"error": stderr.strip().splitlines()[-1] if stderr.strip() else "failed"}
                    data = json.loads(stdout.strip().splitlines()[-1])
                    imports.append(data["import_ms"])
                    invokes.append(data["invoke_ms"])
                    if i == 0:  # the warm-up run fills the bytecode cache
                        for series in (walls, cpus, imports, invokes):
                            series.clear()
                return {
                    "cpu_ms": statistics.median(cpus),
                    "wall_ms": statistics.median(walls),
                    "import_wall_ms": statistics.median(imports),
                    "first_invoke_wall_ms": statistics.median(invokes),
                }

            baseline = measure("baseline", {})
            results["baseline"] = baseline
            for h in handlers:
                m = measure(h, events.get(h, {"Records": []}))
                if "cpu_ms" in m and "cpu_ms" in baseline:
                    m["cpu_above_baseline_ms"] = m["cpu_ms"] - baseline["cpu_ms"]
                    m["wall_above_baseline_ms"] = m["wall_ms"] - baseline["wall_ms"]
                results["handlers"][h] = m
    finally:
        server.stop()
    results["goal_above_baseline_ms"] = 100.0
    results["load_average"] = os.getloadavg()[0]
    return results
