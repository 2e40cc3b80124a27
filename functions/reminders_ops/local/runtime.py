"""``reminders local``: the whole stack on a laptop, from the synthesized template.

Start order: telemetry tap → moto server → the template's resources → the process environment
(the functions' resolved environment + the emulator + local settings) → every handler imported →
webhook receiver → HTTP API → SQS event source mappings → scheduled rules → the event bus for
event-pattern rules (fed by emulated SES events) → view (and demo). Stop order is the reverse
(with ``--state-dir``, the snapshot is taken once nothing consumes any more); Ctrl-C, SIGTERM and
SIGHUP stop everything that was started.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from reminders_ops.stackrefs import LOCAL_OUTPUTS_PARAMETER

from .emulator import Emulator
from .esm import DEFAULT_LOCAL_CONCURRENCY_CAP, SqsEventSourceMapping
from .http_api import LOCAL_PRINCIPAL, HttpApi
from .lambdas import LocalFunction, apply_environment, shared_environment
from .schedule import Schedule, Scheduler, UnsupportedScheduleError
from .spec import LocalSpec
from .tap import TelemetryTap

log = logging.getLogger("reminders_ops.local")

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TEMPLATE = ROOT / "cdk.out" / "RemindersStack.template.json"
STACK_NAME = "RemindersStack"

#: Local settings layered over the template's environment (each can be overridden with --env).
#: A short delay window sends far-future reminders through the due index and the dispatcher within
#: seconds; retries come back in seconds instead of minutes.
LOCAL_ENVIRONMENT = {
    "ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8",
    "DELAY_WINDOW_SECONDS": "20",
    "CURSOR_START_BACK_SECONDS": "120",
    "WATCH_LAG_SECONDS": "120",
    "REMINDERS_RETRY_BASE_SECONDS": "2",
    "REMINDERS_RETRY_THROTTLE_BASE_SECONDS": "2",
    "REMINDERS_RETRY_MIN_EXHAUST_SECONDS": "30",
    "REMINDERS_RETRY_CAP_SECONDS": "20",
    "REMINDERS_RETRY_JITTER_SECONDS": "1",
    "REMINDERS_RETRY_LEASE_SECONDS": "15",
    "REMINDERS_RETRY_PROVIDER_TIMEOUT_SECONDS": "3",
    "REMINDERS_RETRY_HOLD_SECONDS": "10",
    "POWERTOOLS_DEV": "false",
    # One process-wide Deliverer serves every local invocation: one rate limiter, not one per instance.
    "DELIVERY_MAX_CONCURRENCY": "1",
}
CONTROLS_CACHE_SECONDS = 2.0


@dataclass
class Options:
    port: int = 8000
    demo: bool = False
    template: Path = DEFAULT_TEMPLATE
    synth: bool = True
    state_dir: Path | None = None
    emulator_port: int = 0
    receiver_port: int = 0
    tick_seconds: float | None = None
    env: dict[str, str] = field(default_factory=dict)
    view: bool | None = None  # None: when stdout is a terminal
    ready_file: Path | None = None
    log_file: Path | None = None
    exit_after_demo: bool = False
    concurrency_cap: int = DEFAULT_LOCAL_CONCURRENCY_CAP
    parent_pid: int | None = None  # stop when this process is gone (tests, supervisors)


class StartupError(RuntimeError):
    """The runtime cannot start as the template asks (nothing is silently skipped)."""


def ensure_template(path: Path, synth: bool, out: TextIO) -> Path:
    """Reuse ``cdk.out`` when it is newer than the CDK app; otherwise synthesize (``cdk synth``)."""
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    sources = [ROOT / "cdk.json", *(ROOT / "infra").glob("*.py")]
    newest = max((p.stat().st_mtime for p in sources if p.exists()), default=0.0)
    stale = not path.exists() or path.stat().st_mtime < newest
    if stale and synth and path == DEFAULT_TEMPLATE and cdk.exists():
        out.write("synthesizing the stack (cdk synth) ...\n")
        out.flush()
        done = subprocess.run(
            [str(cdk), "synth", "--no-notices", "--quiet", STACK_NAME],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "1"},
        )
        if done.returncode != 0:
            if not path.exists():
                raise StartupError(f"cdk synth failed:\n{done.stderr[-2000:]}")
            out.write(f"note: cdk synth failed; using the existing {path}\n{done.stderr[-800:]}\n")
            return path
    if not path.exists():
        raise StartupError(f"no template at {path}: run `make synth` (or pass --template)")
    if stale and not (synth and cdk.exists()):
        out.write(f"note: {path} is older than infra/ (run `make synth` to refresh it)\n")
    return path


class LocalRuntime:
    def __init__(self, options: Options, out: TextIO | None = None) -> None:
        self.options = options
        self.out = out or sys.stdout
        self.started = time.monotonic()
        self.stop_event = threading.Event()
        self.tap: TelemetryTap | None = None
        self.emulator = Emulator(account_id="000000000000", region="us-east-1", port=options.emulator_port)
        self.spec: LocalSpec
        self.provisioned: Any = None
        self.functions: dict[str, LocalFunction] = {}
        self.mappings: list[SqsEventSourceMapping] = []
        self.stream_mappings: list[Any] = []  # DynamoStreamMapping (the receipts stream)
        self.scheduler: Scheduler | None = None
        self.bus: Any = None
        self.api: HttpApi | None = None
        self.receiver: Any = None
        self.environment: dict[str, str] = {}
        self.differing_env: dict[str, set[str]] = {}
        self.sqs: Any = None
        self.state_note = "in memory (gone when this process stops)"
        self._controls: tuple[float, dict[str, Any]] = (0.0, {})
        self._controls_lock = threading.Lock()
        self._stoppers: list[Callable[[], None]] = []

    # -- addresses -------------------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return self.api.url if self.api else ""

    @property
    def receiver_url(self) -> str:
        return str(self.receiver.url) if self.receiver else ""

    @property
    def stack_name(self) -> str:
        return str(self.provisioned.inventory.stack_name) if self.provisioned else STACK_NAME

    def table(self) -> Any:
        from reminders import runtime

        return runtime.store().table

    # -- start -----------------------------------------------------------------------------------
    def start(self) -> LocalRuntime:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        opts = self.options
        template = ensure_template(opts.template, opts.synth, self.out)
        log_file = opts.log_file or (opts.state_dir / "runtime.log" if opts.state_dir else None)
        if log_file is None:
            import tempfile

            log_file = Path(tempfile.gettempdir()) / f"reminders-local-{os.getpid()}.log"
        log_file.parent.mkdir(parents=True, exist_ok=True)
        # Handlers' stdout (logs, EMF) goes to the tap; Powertools' "no metrics" warning is noise here.
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        self.tap = TelemetryTap(log_file).install()
        self._stoppers.append(self.tap.uninstall)

        from .provision import provision_stack

        account, region = _template_account(template)
        self.emulator.account_id, self.emulator.region = account, region
        self.emulator.start()
        self._stoppers.append(self.emulator.stop)
        from reminders.adapters.secrets import DEV_WEBHOOK_SECRET

        self.spec, self.provisioned = provision_stack(
            template, self.emulator, secret_value=DEV_WEBHOOK_SECRET
        )
        self.sqs = self.emulator.client("sqs")
        self.emulator.client("ssm").put_parameter(
            # The stack outputs as resolved locally, for `reminders ... --endpoint-url` (a deployed
            # stack's come from CloudFormation).
            Name=LOCAL_OUTPUTS_PARAMETER.format(stack=self.provisioned.inventory.stack_name),
            Value=json.dumps(self.spec.outputs),
            Type="String",
            Overwrite=True,
        )

        common, self.differing_env = shared_environment(self.spec.functions)
        self.environment = {**common, **LOCAL_ENVIRONMENT, **opts.env, **self.emulator.environment()}
        if not self.environment.get("WEBHOOK_SECRET_ARN"):
            self.environment["WEBHOOK_SIGNING_SECRET"] = DEV_WEBHOOK_SECRET
        if "ENDPOINT_KEY_ID" not in opts.env:
            # The template's endpoint key is not provisioned by the emulator's resource pass: the
            # endpoints' envelope encryption uses a key created in moto's KMS (real KMS calls).
            kms = self.emulator.client("kms")
            key = kms.create_key(Description="reminders endpoint secrets (local)")["KeyMetadata"]["Arn"]
            self.environment["ENDPOINT_KEY_ID"] = key
        if not self.environment.get("SIGNING_CUTOVER_AT"):
            # Issue 24: the local deploy is a cut-over from the stack-wide secret (its receivers
            # verify with the development secret): the migration window is open from its start.
            self.environment["SIGNING_CUTOVER_AT"] = datetime.now(UTC).isoformat()
        apply_environment(self.environment)
        for fid, fspec in self.spec.functions.items():
            fn = LocalFunction(fspec, account, region)
            try:
                fn.load()
            except Exception as exc:
                raise StartupError(f"function {fid}: handler {fspec.handler} does not import: {exc}") from exc
            self.functions[fid] = fn

        from reminders_ops.local.receiver import WebhookReceiver

        self.receiver = WebhookReceiver(DEV_WEBHOOK_SECRET, port=opts.receiver_port).start()
        self._stoppers.append(self.receiver.stop)
        snapshot_at = len(self._stoppers)  # saved after every consumer stopped, before the emulator
        if opts.state_dir is not None:
            from .snapshot import restore

            try:
                self.state_note = restore(self, opts.state_dir)
            except Exception as exc:
                raise StartupError(f"cannot restore the snapshot in {opts.state_dir}: {exc}") from exc

        api_ids = self.spec.api_function_ids()
        try:
            self.api = HttpApi(
                self.spec.routes,
                {f: self.functions[f] for f in api_ids},
                account_id=account,
                port=opts.port,
                default_principal=self.environment.get("BOOTSTRAP_PRINCIPAL") or LOCAL_PRINCIPAL,
                region=region,
            )
        except OSError as exc:
            raise StartupError(
                f"cannot serve the API on 127.0.0.1:{opts.port} ({exc}): try --port 0"
            ) from exc
        self.api.start()
        self._stoppers.append(self.api.stop)
        # The unsubscribe links in emails point at this API (the template's value is the AWS URL).
        self.environment["UNSUBSCRIBE_BASE_URL"] = self.api.url
        apply_environment(self.environment)

        for m in self.spec.mappings:
            runner = SqsEventSourceMapping(
                m,
                self.spec.queue_by_arn(m.queue_arn),
                self.functions[m.function_id],
                self.emulator.client("sqs"),
                region=region,
                local_concurrency_cap=opts.concurrency_cap,
                paused=functools.partial(self.consumers_paused_now, self.functions[m.function_id]),
            )
            self.mappings.append(runner.start())
            self._stoppers.append(runner.stop)

        for sm in self.spec.stream_mappings:
            from .streams import DynamoStreamMapping

            stream_runner = DynamoStreamMapping(
                sm,
                self.functions[sm.function_id],
                self.emulator.client("dynamodb"),
                self.emulator.client("dynamodbstreams"),
                self.emulator.client("sqs"),
                paused=functools.partial(self.consumers_paused_now, self.functions[sm.function_id]),
            )
            self.stream_mappings.append(stream_runner.start())
            self._stoppers.append(stream_runner.stop)

        scheduled = []
        for r in self.spec.rules:
            if not r.schedule:
                continue
            try:
                Schedule.parse(r.schedule)
            except UnsupportedScheduleError as exc:
                self.spec.unwired.append(f"{r.logical_id}: {exc}")
                continue
            scheduled.append((r, [self.functions[t.function_id] for t in r.targets]))
        self.scheduler = Scheduler(
            scheduled, account_id=account, region=region, rate_override_seconds=opts.tick_seconds
        ).start()
        self._stoppers.append(self.scheduler.stop)
        self._start_event_bus()
        if opts.state_dir is not None:  # only once started: a failed start never overwrites it
            from .snapshot import save

            state_dir = opts.state_dir

            def save_snapshot() -> None:
                save(self, state_dir)

            self._stoppers.insert(snapshot_at, save_snapshot)

    def _start_event_bus(self) -> None:
        """Rules with an event pattern: on the local default bus, fed by the local event sources
        (SES send events, which moto does not publish); a rule nothing local emits for is unwired."""
        from .eventbus import EventBus, UnsupportedPatternError, validate_pattern
        from .ses_events import SesEventPublisher, eventbridge_destinations

        ses_destinations = eventbridge_destinations(self.provisioned)
        local_sources = {"aws.ses"} if ses_destinations else set()
        wired = []
        for r in self.spec.rules:
            if r.schedule:
                continue
            try:
                validate_pattern(r.event_pattern or {})
            except UnsupportedPatternError as exc:
                self.spec.unwired.append(f"{r.logical_id}: {exc}")
                continue
            sources = (r.event_pattern or {}).get("source")
            if (
                not isinstance(sources, list)
                or not {s for s in sources if isinstance(s, str)} & local_sources
            ):
                self.spec.unwired.append(f"{r.logical_id}: no local source emits {sources} events")
                continue
            wired.append((r, [self.functions[t.function_id] for t in r.targets]))
        self.bus = EventBus(wired).start()
        self._stoppers.append(self.bus.stop)
        if wired and ses_destinations:
            publisher = SesEventPublisher(
                self.bus.put,
                account_id=self.emulator.account_id,
                region=self.emulator.region,
                destinations=ses_destinations,
            ).install()
            self._stoppers.append(publisher.uninstall)

    # -- controls --------------------------------------------------------------------------------
    def controls(self) -> dict[str, Any]:
        with self._controls_lock:
            at, value = self._controls
            if time.monotonic() - at > CONTROLS_CACHE_SECONDS:
                try:
                    from reminders import runtime

                    value = runtime.store().get_controls()
                except Exception:
                    value = {}
                self._controls = (time.monotonic(), value)
            return value

    def consumers_paused_now(self, fn: LocalFunction | None = None) -> bool:
        """``reminders pause-consumers`` writes the controls item; the local mappings obey it as
        AWS's would obey ``Enabled: false``."""
        paused = self.controls().get("consumers_paused")
        if paused is True:
            return True
        if isinstance(paused, list):
            if fn is None:
                return bool(paused)
            names = (fn.name.lower(), fn.spec.logical_id.lower())
            return any(p == "*" or any(str(p).lower() in n for n in names) for p in paused)
        return False

    # -- describe --------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        from reminders.adapters.secrets import DEV_WEBHOOK_SECRET

        from .sigv4 import OPERATOR

        return {
            "pid": os.getpid(),
            "api": self.api_url,
            "receiver": self.receiver_url,
            "emulator": self.emulator.endpoint,
            "region": self.emulator.region,
            "account": self.emulator.account_id,
            "webhook_secret": DEV_WEBHOOK_SECRET,
            # The local SigV4 key pair of the bootstrap principal (fixed, public, local only).
            "operator_credentials": {
                "aws_access_key_id": OPERATOR.access_key_id,
                "aws_secret_access_key": OPERATOR.secret_access_key,
            },
            "template": str(self.options.template),
            "state": self.state_note,
            "log_file": str(self.tap.log_path) if self.tap else None,
            "wired": {
                "mappings": {
                    m.spec.logical_id: {
                        "queue": m.queue.name,
                        "function": m.function.spec.logical_id,
                        "handler": m.function.spec.handler,
                        "concurrency": m.concurrency,
                        "running": m.running,
                    }
                    for m in self.mappings
                }
                | {
                    sm.spec.logical_id: {
                        "stream": sm.spec.table_name,
                        "function": sm.function.spec.logical_id,
                        "handler": sm.function.spec.handler,
                        "concurrency": 1,  # one poller per stream, batches in order
                        "running": sm.running,
                        "stats": vars(sm.stats),
                    }
                    for sm in self.stream_mappings
                },
                "rules": {
                    **{
                        e.rule.logical_id: {
                            "schedule": e.schedule.expression,
                            "period_seconds": e.schedule.period_seconds,
                            "targets": [t.spec.logical_id for t in e.targets],
                        }
                        for e in (self.scheduler.entries if self.scheduler else [])
                    },
                    **{
                        r.logical_id: {
                            "event_pattern": r.event_pattern,
                            "targets": [t.spec.logical_id for t in targets],
                        }
                        for r, targets in (self.bus.rules if self.bus else [])
                    },
                },
                "routes": {r.route_key: r.function_id for r in self.spec.routes},
            },
            "functions": {lid: f.spec.name for lid, f in self.functions.items()},
            "queues": {q.name: q.url for q in self.spec.queues.values()},
            "environment": {k: v for k, v in self.environment.items() if not k.startswith("AWS_SECRET")},
            "not_set_per_function": {k: sorted(v) for k, v in self.differing_env.items()},
            "unwired": list(self.spec.unwired),
            "outputs": dict(self.spec.outputs),
        }

    def banner(self) -> str:
        from reminders.adapters.secrets import DEV_WEBHOOK_SECRET

        from .sigv4 import OPERATOR

        d = self.describe()
        lines = [
            "reminders local — the stack from the synthesized template, on an embedded emulator",
            f"  HTTP API         {d['api']}   (OpenAPI: {d['api']}/openapi.json)",
            f"  webhook receiver {d['receiver']}   (GET: what it saw; PUT: script answers)",
            f"  emulator (moto)  {d['emulator']}   (aws --endpoint-url {d['emulator']} ...)",
            f"  signing secret   {DEV_WEBHOOK_SECRET}   (dev only; never used in AWS)",
            f"  SigV4 (operator) AWS_ACCESS_KEY_ID={OPERATOR.access_key_id}"
            f" AWS_SECRET_ACCESS_KEY={OPERATOR.secret_access_key}   (local only; IAM routes verify SigV4)",
            f"  state            {self.state_note}",
            f"  handler logs     {d['log_file']}",
            f"  delay window     {self.environment.get('DELAY_WINDOW_SECONDS')}s (local; 900s in AWS): later"
            " reminders wait in the due index for the dispatcher",
        ]
        wires = [f"{m.queue.name} → {m.function.spec.handler}" for m in self.mappings]
        wires += [
            f"{e.schedule.expression} → {', '.join(t.spec.handler for t in e.targets)}"
            for e in (self.scheduler.entries if self.scheduler else [])
        ]
        wires += [
            f"{'/'.join(r.event_pattern.get('source', []))} {r.event_pattern.get('detail-type', '')}"
            f" → {', '.join(t.spec.handler for t in targets)}"
            for r, targets in (self.bus.rules if self.bus else [])
            if r.event_pattern
        ]
        lines += [f"  {'wired' if i == 0 else '':<17}{w}" for i, w in enumerate(wires)]
        for item in self.spec.unwired:
            lines.append(f"  NOT RUN LOCALLY  {item}")
        if self.differing_env:
            lines.append(
                "  shared process   not set (values differ per function): "
                + ", ".join(sorted(self.differing_env))
            )
        return "\n".join(lines)

    # -- stop ------------------------------------------------------------------------------------
    def stop(self) -> None:
        self.stop_event.set()
        # Every poller and the scheduler stop taking work at once; then each is joined in turn.
        for m in self.mappings:
            m.request_stop()
        if self.scheduler is not None:
            self.scheduler.request_stop()
        if self.bus is not None:
            self.bus.request_stop()
        while self._stoppers:
            stopper = self._stoppers.pop()
            try:
                stopper()
            except Exception as exc:  # keep stopping the rest
                sys.stderr.write(f"stopping {stopper!r}: {exc}\n")


def _template_account(path: Path) -> tuple[str, str]:
    """The account and region the template was synthesized for (its ARNs name them)."""
    import re

    text = path.read_text()
    m = re.search(r"arn:aws:[a-z0-9-]+:([a-z]{2}-[a-z]+-\d):(\d{12}):", text)
    if m:
        return m.group(2), m.group(1)
    return "111111111111", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
