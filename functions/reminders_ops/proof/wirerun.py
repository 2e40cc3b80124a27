"""The fault run at the wire: the real handlers and their real botocore clients (``adapters/clients``
``Config``: timeouts, retry modes) against moto server and the local webhook receiver, each behind a
fault proxy (``faultproxy.py``) driven by the seed; the webhook adapter's resolver fails transiently.

``python -m reminders_ops.proof.wirerun --seed 7 -n 300``. Wall-clock time, not virtual: moto in server
mode answers a few hundred calls a second on these two cores, so this part runs a few hundred
reminders (the explorer, ``proof/explorer/``, runs thousands of steps in virtual time). Retry
delays, the lease and the ambiguous-email wait are the local runtime's seconds
(``local/runtime.LOCAL_ENVIRONMENT``), so a delivery's whole life fits in a minute.

What it holds, from the receiver's records, the proxies' logs and the table read directly from moto
(around the proxy): every non-cancelled delivery ends ``delivered`` or ``dead_letter``; accepted
sends per ``webhook-id`` <= 1; every dead letter is explained by an injected redirect (the only
permanent fault at this layer) and has its DLQ message; every item is under DynamoDB's 400 KB.
It prints, per fault kind, how many were injected and what they cost (extra requests: later
requests of the same botocore call or delivery key before the next fault; delay: from the fault to
the first later success of the same call or key).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import logging
import math
import os
import random
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from reminders_ops.local.faithful import start_moto_server

#: Per-request rates at the AWS proxy (DynamoDB, SQS, SES v2).
AWS_RATES = {
    "drop_after_apply": 0.006,
    "reset_before": 0.004,
    "reset_after": 0.004,
    "stall": 0.002,
    "trickle": 0.004,
    "error_after_apply": 0.004,
    "http_500": 0.004,
    "http_503": 0.004,
    "throttle": 0.01,
    "redirect": 0.002,
}
#: Per-POST rates at the webhook proxy.
WEBHOOK_RATES = {
    "drop_after_apply": 0.03,
    "reset_before": 0.02,
    "reset_after": 0.02,
    "stall": 0.015,
    "trickle": 0.02,
    "error_after_apply": 0.02,
    "http_500": 0.02,
    "http_503": 0.02,
    "throttle": 0.02,
    "retry_after_past": 0.015,
    "retry_after_huge": 0.005,
    "retry_after_nonascii": 0.015,
    "redirect": 0.01,
}
RESOLVER_FAILURE_RATE = 0.03  # per lookup at send time: EAI_AGAIN
#: The local runtime's seconds, plus the ambiguous-email wait scaled to the SES event latency below.
WIRE_ENVIRONMENT = {
    "DELAY_WINDOW_SECONDS": "20",
    "CURSOR_START_BACK_SECONDS": "120",
    "WATCH_LAG_SECONDS": "30",
    "REMINDERS_RETRY_BASE_SECONDS": "2",
    "REMINDERS_RETRY_CAP_SECONDS": "10",
    "REMINDERS_RETRY_JITTER_SECONDS": "1",
    "REMINDERS_RETRY_LEASE_SECONDS": "15",
    "REMINDERS_RETRY_PROVIDER_TIMEOUT_SECONDS": "3",
    "REMINDERS_RETRY_HOLD_SECONDS": "5",
    "REMINDERS_RETRY_UNCONFIRMED_WAIT_SECONDS": "6",
    # A huge Retry-After is honoured up to this cap (12 h in AWS: SQS's visibility ceiling).
    "REMINDERS_RETRY_RETRY_AFTER_CAP_SECONDS": "20",
    "POWERTOOLS_LOG_LEVEL": "CRITICAL",
    "DELIVERY_MAX_CONCURRENCY": "1",
    # Issue 16 in real time: an endpoint whose every send failed for 5 s (and 3 of them) is held.
    "REMINDERS_HEALTH_ALL_FAILED_SECONDS": "5",
}
#: Issue 16: one shared endpoint (one account's receiver host) is down for everyone (503) for this
#: window after the run starts creating: it is held, probed (through the fault proxies, on the
#: table in moto), resumed, and its backlog delivered. Every OUTAGE_EVERY-th reminder's webhook.
OUTAGE_HOST = "hook-down.wire.test"
OUTAGE_ACCOUNT = "acct-down"
OUTAGE_WINDOW_SECONDS = (5.0, 35.0)
OUTAGE_EVERY = 10
VISIBILITY_TIMEOUT_SECONDS = 30  # > the 15 s lease
AWS_STALL_SECONDS = 2.5  # > the 2 s AWS read timeout (domain/timing.py)
WEBHOOK_STALL_SECONDS = 3.5  # > the 3 s attempt deadline
SES_EVENT_DELAY_SECONDS = (0.3, 3.0)  # the wall-clock stand-in for SES -> EventBridge latency
SES_EVENT_LOSS = 0.02
DYNAMODB_ITEM_LIMIT_BYTES = 400_000


@dataclass
class WireReport:
    seed: int
    n: int
    reminders: int = 0
    deliveries: Counter[str] = field(default_factory=Counter)
    states: Counter[str] = field(default_factory=Counter)
    dead_letters: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    duplicate_accepted: int = 0
    webhook_posts: int = 0
    webhook_accepted: int = 0
    email_sends: int = 0
    email_duplicates: int = 0
    max_item_bytes: int = 0
    costs: dict[str, dict[str, float]] = field(default_factory=dict)
    resolver_failures: int = 0
    outage_posts: int = 0  # 503s of the endpoint down for everyone (issue 16)
    outage_endpoint: str = ""  # its health at the end: state, transitions (held, resumed)
    endpoint_states: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    handler_errors: Counter[str] = field(default_factory=Counter)
    wall_seconds: float = 0.0
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def format(self) -> str:
        def counts(c: Counter[str]) -> str:
            return ", ".join(f"{k}={v}" for k, v in sorted(c.items())) or "-"

        lines = [
            f"wire fault run: seed={self.seed} n={self.n}  ({self.wall_seconds:.1f} s wall; real botocore"
            " clients -> fault proxy -> moto server; webhook adapter -> fault proxy -> receiver)",
            f"deliveries           {sum(self.deliveries.values())} ({counts(self.deliveries)})",
            f"final states         {counts(self.states)}",
            f"dead letters         {counts(self.dead_letters)}",
            f"lost                 {self.lost}",
            f"duplicate accepted   {self.duplicate_accepted}  (webhook accepted sends per key > 1)",
            f"webhook POSTs        {self.webhook_posts} for {self.webhook_accepted} accepted keys",
            f"email sends          {self.email_sends}, duplicates {self.email_duplicates}"
            " (SES honours no key: residual)",
            f"max item bytes       {self.max_item_bytes} (limit {DYNAMODB_ITEM_LIMIT_BYTES})",
            f"endpoint outage      {self.outage_posts} POSTs into it (503); its health at the end:"
            f" {self.outage_endpoint or '-'}; endpoints by state {counts(self.endpoint_states)}",
            f"operator/user acts   {counts(self.actions)}",
            f"handler errors       {counts(self.handler_errors)}  (crashed invocations: retried by SQS)",
            f"{'wire fault':<34} {'injected':>8} {'extra req':>9} {'delay s':>8}",
        ]
        for kind, row in sorted(self.costs.items()):
            lines.append(
                f"  {kind:<32} {int(row['injected']):>8} {int(row['extra_requests']):>9}"
                f" {row['delay_seconds']:>8.1f}"
            )
        lines.append(f"  {'resolver.eai_again':<32} {self.resolver_failures:>8} {'-':>9} {'-':>8}")
        if self.violations:
            lines.append(f"VIOLATIONS ({len(self.violations)}):")
            lines += [f"  - {v}" for v in self.violations[:50]]
        else:
            lines.append(
                "wire invariant holds: 0 lost, 0 duplicate accepted webhook sends, every dead letter"
                " explained, every item under 400 KB"
            )
        return "\n".join(lines)


class Outage:
    """The receiver behind ``OUTAGE_HOST`` answers 503 to every POST within the window (epoch
    seconds, set when the run starts creating), before verifying or recording anything."""

    def __init__(self, receiver: Any) -> None:
        self.receiver, self.handle = receiver, receiver.handle
        self.window = (math.inf, math.inf)
        self.posts = 0
        self.lock = threading.Lock()
        receiver.handle = self

    def __call__(self, raw: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], float]:
        if headers.get("host", "").startswith(OUTAGE_HOST) and self.window[0] <= time.time() < self.window[1]:
            with self.lock:
                self.posts += 1
            return 503, {}, 0.0
        return self.handle(raw, headers)


class FlakyResolver:
    """The webhook adapter's resolver seam: names under ``.wire.test`` resolve to 127.0.0.1, and fail
    transiently (``EAI_AGAIN``) at the seeded rate once ``armed`` (after the create-time check)."""

    def __init__(self, rng: random.Random, rate: float) -> None:
        self.rng, self.rate = rng, rate
        self.armed = False
        self.failures = 0
        self.lock = threading.Lock()

    def __call__(self, host: str, port: int) -> list[str]:
        with self.lock:
            fail = self.armed and self.rng.random() < self.rate
            if fail:
                self.failures += 1
        if fail:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host.endswith(".wire.test"):
            return ["127.0.0.1"]
        return [str(ai[4][0]) for ai in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)]


class SesEventTap:
    """SES send events, which moto does not publish: every SendEmail that moto applied (seen by the
    AWS proxy, whatever the client then got) becomes an ``Email Sent`` event a moment later."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.timers: list[threading.Timer] = []
        self.sent: Counter[str] = Counter()  # accepted by moto, per delivery key
        self.lost = 0
        self.lock = threading.Lock()

    def __call__(self, service: str, operation: str, body: bytes, status: int, reply: bytes) -> None:
        if service != "sesv2" or operation != "outbound-emails" or status != 200:
            return
        tags = {t["Name"]: t["Value"] for t in json.loads(body).get("EmailTags", [])}
        message_id = json.loads(reply or b"{}").get("MessageId", str(uuid.uuid4()))
        with self.lock:
            self.sent[tags.get("delivery_key", "")] += 1
            if self.rng.random() < SES_EVENT_LOSS:
                self.lost += 1
                return
            delay = self.rng.uniform(*SES_EVENT_DELAY_SECONDS)
        timer = threading.Timer(delay, _ses_event, args=(tags, message_id))
        timer.daemon = True
        with self.lock:
            self.timers.append(timer)
        timer.start()


def _ses_event(tags: dict[str, str], message_id: str) -> None:
    from reminders.handlers.ses_events import handler

    from reminders_ops.bench.sim.embedded import lambda_context

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with contextlib.suppress(Exception):  # an event the reconciler cannot take is retried by EventBridge
        handler(
            {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Email Sent",
                "source": "aws.ses",
                "account": "111111111111",
                "time": now,
                "region": "us-east-1",
                "resources": [],
                "detail": {
                    "eventType": "Send",
                    "mail": {
                        "messageId": message_id,
                        "timestamp": now,
                        "tags": {k: [v] for k, v in tags.items()},
                    },
                },
            },
            lambda_context("ses-events"),
        )


@contextlib.contextmanager
def _patched(target: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


def _with_retries(fn: Callable[[], Any], attempts: int = 8) -> Any:
    """A client of the API retrying its call (same key: the create is idempotent)."""
    for i in range(attempts):
        try:
            return fn()
        except Exception:
            if i == attempts - 1:
                raise
            time.sleep(0.2 * (i + 1))
    return None  # pragma: no cover


def run(
    seed: int,
    n: int,
    *,
    timeout_seconds: float = 600.0,
    aws_rates: dict[str, float] | None = None,
    webhook_rates: dict[str, float] | None = None,
    resolver_rate: float = RESOLVER_FAILURE_RATE,
    due_spread_seconds: float = 45.0,
    force_every_kind: bool = False,
) -> WireReport:
    import boto3
    from reminders import runtime
    from reminders.adapters.destinations import DestinationPolicy
    from reminders.domain.models import ChannelType
    from reminders.handlers.delivery import email_handler, webhook_handler
    from reminders.handlers.dispatcher import shard_handler, tick_handler
    from reminders.services.intents import ChannelSpec, NewReminder

    from reminders_ops.bench.sim.embedded import (
        DEV_SECRET,
        Poller,
        create_stack_resources,
        fake_aws_env,
        lambda_context,
        scheduled_event,
    )
    from reminders_ops.bench.sim.model import item_size
    from reminders_ops.local.receiver import WebhookReceiver
    from reminders_ops.proof.faultproxy import KINDS, RETRY_AFTER_KINDS, FaultProxy

    started = time.perf_counter()
    rng = random.Random(seed)
    report = WireReport(seed, n)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server, port = start_moto_server()
    host = "127.0.0.1"
    moto_url = f"http://{host}:{port}"
    tap = SesEventTap(random.Random(seed + 1))
    aws_proxy = FaultProxy(
        port,
        rates=AWS_RATES if aws_rates is None else aws_rates,
        seed=seed,
        name="aws-proxy",
        stall_seconds=AWS_STALL_SECONDS,
        forced=[k for k in KINDS if k not in RETRY_AFTER_KINDS] if force_every_kind else (),
        on_applied=tap,
    )
    resolver = FlakyResolver(random.Random(seed + 2), resolver_rate)
    receiver = WebhookReceiver(DEV_SECRET)
    outage = Outage(receiver)
    try:
        with (
            fake_aws_env({"AWS_ENDPOINT_URL": moto_url, **WIRE_ENVIRONMENT}),
            contextlib.redirect_stdout(io.StringIO()),
            receiver,
            aws_proxy,
        ):
            env = create_stack_resources(
                visibility_timeout=VISIBILITY_TIMEOUT_SECONDS,
                dispatch_visibility_timeout=VISIBILITY_TIMEOUT_SECONDS,
            )
            os.environ.update(env)
            boto3.client("ses").verify_email_identity(EmailAddress="reminders@example.com")
            direct_sqs = boto3.client("sqs")  # the event source mapping's own polling: not our client
            table = boto3.resource("dynamodb").Table(env["TABLE_NAME"])
            hook_proxy = FaultProxy(
                receiver.server.server_address[1],
                rates=WEBHOOK_RATES if webhook_rates is None else webhook_rates,
                seed=seed + 3,
                name="webhook-proxy",
                stall_seconds=WEBHOOK_STALL_SECONDS,
                forced=KINDS if force_every_kind else (),
            )
            os.environ["AWS_ENDPOINT_URL"] = aws_proxy.url  # from here on, every client of ours
            runtime.reset()
            policy = DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"})
            policy.resolver = resolver
            with hook_proxy, _patched(runtime, "destination_policy", lambda: policy):
                now = time.time()
                outage.window = (now + OUTAGE_WINDOW_SECONDS[0], now + OUTAGE_WINDOW_SECONDS[1])
                _drive(
                    rng,
                    n,
                    report,
                    resolver,
                    hook_proxy.port,
                    pollers=[
                        (Poller(direct_sqs, env["WEBHOOK_QUEUE_URL"], webhook_handler), "webhook"),
                        (Poller(direct_sqs, env["WEBHOOK_QUEUE_URL"], webhook_handler), "webhook"),
                        (Poller(direct_sqs, env["EMAIL_QUEUE_URL"], email_handler), "email"),
                        (Poller(direct_sqs, env["DISPATCH_QUEUE_URL"], shard_handler), "dispatch"),
                    ],
                    tick=lambda: tick_handler(scheduled_event(), lambda_context("tick")),
                    table=table,
                    timeout_seconds=timeout_seconds,
                    due_spread_seconds=due_spread_seconds,
                    new=lambda i, due: _new_reminder(
                        i, due, hook_proxy.port, rng, ChannelSpec, NewReminder, ChannelType
                    ),
                )
                aws_proxy.active = hook_proxy.active = False
                _check(report, table, direct_sqs, env, receiver, hook_proxy, aws_proxy, tap, item_size)
                report.resolver_failures = resolver.failures
                report.outage_posts = outage.posts
    finally:
        for t in tap.timers:
            t.cancel()
        server.terminate()  # the process this run started, by its handle
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    report.wall_seconds = time.perf_counter() - started
    return report


def _new_reminder(
    i: int,
    due: datetime,
    hook_port: int,
    rng: random.Random,
    ChannelSpec: Any,
    NewReminder: Any,
    ChannelType: Any,
) -> Any:
    shape = rng.random()
    channels = []
    down = i % OUTAGE_EVERY == 0  # one account's receiver, down for a while (issue 16)
    if shape < 0.7:
        host = OUTAGE_HOST if down else f"hook-{i % 20}.wire.test"
        channels.append(ChannelSpec(ChannelType.WEBHOOK, f"http://{host}:{hook_port}/r/{i}"))
    if shape >= 0.45:
        channels.append(ChannelSpec(ChannelType.EMAIL, f"customer{i}@example.com"))
    return NewReminder(
        account_id=OUTAGE_ACCOUNT if down else f"acct-{i % 17}",
        key=f"wire:{i}",
        kind="renewal",
        due_at=due,
        channels=tuple(channels),
        template_id="renewal",
        template_version=1,
        data={"n": i},
    )


def _drive(
    rng: random.Random,
    n: int,
    report: WireReport,
    resolver: FlakyResolver,
    hook_port: int,
    *,
    pollers: list[tuple[Any, str]],
    tick: Callable[[], Any],
    table: Any,
    timeout_seconds: float,
    new: Callable[[int, datetime], Any],
    due_spread_seconds: float,
) -> None:
    from reminders import runtime

    service = runtime.reminders_service()
    stop = threading.Event()
    lock = threading.Lock()

    def loop(p: Any, name: str) -> None:
        while not stop.is_set():
            before = p.errors
            got = p.poll_once()
            if p.errors > before:
                with lock:
                    report.handler_errors[name] += 1
            if not got:
                time.sleep(0.05)

    def ticking() -> None:
        while not stop.is_set():
            try:
                tick()
            except Exception as exc:  # EventBridge retries a failed asynchronous invocation
                with lock:
                    report.handler_errors[f"tick:{type(exc).__name__}"] += 1
            stop.wait(2.0)

    threads = [threading.Thread(target=loop, args=pl, daemon=True) for pl in pollers]
    threads.append(threading.Thread(target=ticking, daemon=True))
    for t in threads:
        t.start()
    ids: list[str] = []
    canceled: set[str] = set()
    start = time.time()
    resolver.armed = False
    for i in range(n):
        due = datetime.now(UTC) + timedelta(seconds=rng.uniform(-5, due_spread_seconds))
        cmd = new(i, due)
        reminder, _ = _with_retries(functools.partial(service.create, cmd))
        ids.append(reminder.id)
        for ch in cmd.channels:
            report.deliveries[ch.type.value] += 1
        resolver.armed = True  # the create-time check is done; sends may now see DNS blips
        u = rng.random()
        if u < 0.04 and ids:
            rid = rng.choice(ids)
            try:
                _with_retries(functools.partial(service.cancel, rid), attempts=3)
                canceled.add(rid)
                report.actions["cancel"] += 1
            except Exception:
                report.actions["cancel_refused"] += 1
        elif u < 0.08 and ids:
            rid = rng.choice(ids)
            when = datetime.now(UTC) + timedelta(seconds=rng.uniform(-5, 40))
            try:
                _with_retries(functools.partial(service.reschedule, rid, when), attempts=3)
                report.actions["reschedule"] += 1
            except Exception:
                report.actions["reschedule_refused"] += 1
    report.reminders = len(ids)
    deadline = start + timeout_seconds
    while time.time() < deadline:
        time.sleep(2.0)
        if all(_terminal(table, rid) for rid in ids):
            break
    stop.set()
    for t in threads:
        t.join(timeout=15)


def _terminal(table: Any, rid: str) -> bool:
    item = table.get_item(Key={"pk": f"R#{rid}", "sk": "R"}, ConsistentRead=True).get("Item")
    if item is None:
        return False
    return all(d["st"] in ("delivered", "dead_letter", "canceled") for d in item["dl"].values())


def _check(
    report: WireReport,
    table: Any,
    sqs: Any,
    env: dict[str, str],
    receiver: Any,
    hook_proxy: Any,
    aws_proxy: Any,
    tap: SesEventTap,
    item_size: Callable[[dict[str, Any]], int],
) -> None:
    v = report.violations
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {}
    while True:
        page = table.scan(**kwargs)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    redirected = {
        ex.correlation.split(":", 1)[1] for ex in hook_proxy.stats.exchanges if ex.fault == "redirect"
    }
    dead: dict[str, str] = {}
    snap = receiver.snapshot()
    for item in items:
        if item.get("sk") == "H":  # an endpoint's health (issue 16)
            report.endpoint_states[str(item.get("st"))] += 1
            if item.get("acct") == OUTAGE_ACCOUNT:
                report.outage_endpoint = f"{item.get('st')}, {int(item.get('tv', 0))} transitions"
                # Held by the outage, it must have been resumed by a probe (its backlog delivered).
                if report.outage_posts and (item.get("st") != "active" or int(item.get("tv", 0)) < 2):
                    v.append(f"the endpoint down for everyone ends {report.outage_endpoint}")
    if report.outage_posts and not report.outage_endpoint:
        v.append("the endpoint down for everyone was never held")
    for item in items:
        report.max_item_bytes = max(report.max_item_bytes, item_size(item))
        if item_size(item) >= DYNAMODB_ITEM_LIMIT_BYTES:
            v.append(f"{item['pk']}: item of {item_size(item)} bytes")
        for cid, d in item.get("dl", {}).items():
            state, key = d["st"], d["k"]
            report.states[state] += 1
            if state == "dead_letter":
                reason = str(d.get("dr"))
                report.dead_letters[reason] += 1
                dead[key] = reason
                if not (reason == "permanent_failure" and key in redirected):
                    v.append(f"{key}: dead letter {reason} not explained by an injected fault")
            elif state == "delivered":
                if cid.startswith("webhook") and snap["accepted"].get(key, 0) != 1:
                    v.append(f"{key}: delivered, receiver accepted {snap['accepted'].get(key, 0)}")
                if cid.startswith("email") and not tap.sent.get(key):
                    v.append(f"{key}: delivered, SES never accepted it")
            elif state != "canceled":
                report.lost += 1
                from reminders.adapters.codec import decode_history

                tail = [a.to_dict() for a in decode_history(d.get("h", []))][-4:]
                v.append(
                    f"{key}: lost in state {state} (next attempt {d.get('na')}, lease {d.get('lu')},"
                    f" now {datetime.now(UTC).isoformat()}, history tail {tail})"
                )
    report.webhook_posts = sum(snap["posts"].values())
    report.webhook_accepted = sum(1 for c in snap["accepted"].values() if c)
    report.duplicate_accepted = snap["duplicates_accepted"]
    if report.duplicate_accepted:
        v.append(f"{report.duplicate_accepted} duplicate accepted webhook sends")
    if snap["rejected_signatures"]:
        v.append(f"{snap['rejected_signatures']} webhook signatures rejected")
    report.email_sends = sum(tap.sent.values())
    report.email_duplicates = sum(c - 1 for c in tap.sent.values() if c > 1)
    in_dlq: dict[str, str] = {}
    for name in ("WEBHOOK_DLQ_URL", "EMAIL_DLQ_URL"):
        while True:
            got = sqs.receive_message(
                QueueUrl=env[name],
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                VisibilityTimeout=600,
            ).get("Messages", [])
            if not got:
                break
            for m in got:
                attrs = {k: a.get("StringValue", "") for k, a in m.get("MessageAttributes", {}).items()}
                in_dlq[attrs.get("delivery_key", "")] = attrs.get("reason", "")
    for key, reason in dead.items():
        if in_dlq.get(key) != reason:
            v.append(f"{key}: dead letter {reason} has no DLQ message with that reason")
    report.costs = {**aws_proxy.costs(), **hook_proxy.costs()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reminders_ops.proof.wirerun", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-n", type=int, default=300, help="number of reminders")
    args = parser.parse_args(argv)
    report = run(args.seed, args.n)
    print(report.format())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
