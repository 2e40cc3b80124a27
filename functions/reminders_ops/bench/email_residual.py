"""The email residual against the ambiguous-email wait (issue 32.4; MISSION §9: ≤ 0.2 % of sends).

SES honours no idempotency key: an email whose send was ambiguous (a timeout after SES took it, a
crash after the send) may go twice. The consumer waits ``unconfirmed_send_wait_seconds`` for SES's
send event before it re-sends; the event's latency follows ``reminders_ops.ses_latency`` (AWS
publishes none: a documented, pessimistic model). This run measures, for each wait of
``CURVE_WAITS_SECONDS``, the duplicates (the residual exposure) and what the wait costs an
ambiguous email in lateness — the figures the in-memory fault run (``faultrun.py``, retired by the
explorer, issue 26) printed with ``--curve``.

The real services (the API's ``Reminders``, the dispatcher, the email consumer's ``Deliverer`` and
``SesEmailSender``, the SES-event reconciler) on the one in-memory world, on a virtual clock: N email
reminders due over two hours; each SES call throttled, failing (5xx), unreachable, timing out before
or after SES took it with the fault run's probabilities; each accepted send's event delayed (or
lost, or delivered twice) by the model. Correctness is not judged here (the explorer judges it);
``python -m reminders_ops.bench.email_residual --seed 7 -n 5000`` prints the table.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from reminders.adapters.clock import FixedClock
from reminders.adapters.memory_sqs import Received
from reminders.adapters.ses import SesEmailSender
from reminders.domain.models import ChannelType
from reminders.domain.ports import NullTelemetry
from reminders.domain.retry import RetryPolicy
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.intents import ChannelSpec, NewReminder

from reminders_ops import ses_latency
from reminders_ops.world import InMemoryWorld

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
#: The ambiguous-email waits the residual curve compares (seconds).
CURVE_WAITS_SECONDS = (0.0, 15.0, 30.0, 120.0)
#: An email's first send this close to its due time was not delayed by another fault (issue 32.4).
ON_TIME_SECONDS = 5.0
CREATION_SPAN_SECONDS = 2 * 3600.0
STEP_SECONDS = 5.0  # the consumers' and the event bus's resolution
#: SES faults per call, as the fault run drew them (FaultPlan's ses_* probabilities).
SES_UNREACHABLE = 0.02
SES_THROTTLE = 0.04
SES_5XX = 0.03
SES_TIMEOUT_BEFORE_ACCEPT = 0.01
SES_TIMEOUT_AFTER_ACCEPT = 0.015
#: SES outcomes that may hide an acceptance but were not accepted: the re-send waits (its cost).
AMBIGUOUS_UNACCEPTED = frozenset({"timeout_before_accept", "5xx"})


def p99(values: Sequence[float]) -> float:
    late = sorted(values)
    return late[min(len(late) - 1, int(0.99 * len(late)))] if late else 0.0


@dataclass
class Send:
    at: float
    label: str
    accepted: bool


@dataclass
class Result:
    wait_seconds: float
    emails: int = 0
    accepted_sends: int = 0
    duplicates: int = 0
    ambiguous_waits: int = 0  # emails re-sent (or not) only after the unconfirmed wait
    lateness_after_ambiguous: list[float] = field(default_factory=list)  # s from due, first acceptance
    wait_after_ambiguous: list[float] = field(default_factory=list)  # acceptance - first ambiguous send
    lateness_on_time_ambiguous: list[float] = field(default_factory=list)  # first send on time
    open_deliveries: int = 0  # not ended when the run stopped (the explorer judges "lost")

    @property
    def duplicate_percent(self) -> float:
        return 100.0 * self.duplicates / self.accepted_sends if self.accepted_sends else 0.0

    def summary(self) -> str:
        late = self.lateness_after_ambiguous
        if not late:
            return "email lateness after an ambiguous send: -"
        return (
            f"email lateness after an ambiguous send: {len(late)} emails, mean {sum(late) / len(late):.0f} s,"
            f" p99 {p99(late):.0f} s after due; the wait added p99 {p99(self.wait_after_ambiguous):.0f} s;"
            f" first send on time ({len(self.lateness_on_time_ambiguous)}):"
            f" p99 {p99(self.lateness_on_time_ambiguous):.0f} s after due (goal ≤ 300 s)"
        )


class _SesClient:
    """The ``sesv2`` client: seeded faults, and each accepted send's event scheduled by the model."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def send_email(self, **kwargs: Any) -> dict[str, Any]:
        return self.run.ses_send(kwargs)


def _error(code: str, status: int) -> ClientError:
    response: Any = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(response, "SendEmail")


class _Run:
    def __init__(self, seed: int, n: int, wait: float) -> None:
        self.rng = random.Random(seed)
        self.event_rng = random.Random(seed * 7919 + 3)
        self.n = n
        self.clock = FixedClock(T0)
        policy = replace(RetryPolicy(), unconfirmed_send_wait_seconds=wait)
        self.world = InMemoryWorld.build(clock=self.clock, telemetry=NullTelemetry(), policy=policy)
        self.reminders = self.world.reminders(check_destination=lambda spec: None)
        self.dispatcher = self.world.dispatcher(worker="dispatch")
        self.reconciler = self.world.reconciler()
        sender = SesEmailSender(_SesClient(self), from_address="reminders@example.com", configuration_set="r")
        self.deliverer = self.world.deliverer(
            worker="email", senders={"email": sender}, rng=random.Random(seed * 100_003)
        )
        self.sends: dict[str, list[Send]] = defaultdict(list)
        self.due: dict[str, float] = {}
        self.events: list[tuple[float, int, dict[str, str], str]] = []
        self.seq = itertools.count()

    def now(self) -> float:
        return self.clock.now().timestamp()

    def ses_send(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        tags = {t["Name"]: t["Value"] for t in kwargs.get("EmailTags", [])}
        key, now, u = tags["delivery_key"], self.now(), self.rng.random()
        bounds = list(
            itertools.accumulate((SES_UNREACHABLE, SES_THROTTLE, SES_5XX, SES_TIMEOUT_BEFORE_ACCEPT))
        )
        if u < bounds[0]:
            raise EndpointConnectionError(endpoint_url="https://email.us-east-1.amazonaws.com")
        if u < bounds[1]:
            self.sends[key].append(Send(now, "429", False))
            raise _error("TooManyRequestsException", 429)
        if u < bounds[2]:
            self.sends[key].append(Send(now, "5xx", False))
            raise _error("ServiceUnavailable", 503)
        if u < bounds[3]:
            self.sends[key].append(Send(now, "timeout_before_accept", False))
            raise ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com")
        message_id = f"ses-{self.rng.getrandbits(64):016x}"
        after = self.rng.random() < SES_TIMEOUT_AFTER_ACCEPT
        self.sends[key].append(Send(now, "timeout_after_accept" if after else "ok", True))
        delay = ses_latency.send_event_delay(self.event_rng)
        if delay is not None:
            heapq.heappush(self.events, (now + delay, next(self.seq), tags, message_id))
            if self.event_rng.random() < ses_latency.EVENT_DUPLICATE:
                again = now + delay + self.event_rng.uniform(0.5, 600)
                heapq.heappush(self.events, (again, next(self.seq), tags, message_id))
        if after:
            raise ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com")
        return {"MessageId": message_id, "ResponseMetadata": {"HTTPStatusCode": 200}}

    def create(self, i: int) -> None:
        due = self.clock.now() + timedelta(seconds=self.rng.uniform(-60, 1800))
        reminder, _ = self.reminders.create(
            NewReminder(
                account_id=f"acct-{i % 97}",
                key=f"renewal:{i}",
                kind="renewal",
                due_at=due,
                channels=(ChannelSpec(ChannelType.EMAIL, f"customer{i}@example.com"),),
                template_id="generic",
                template_version=1,
                data={"n": i},
            )
        )
        for d in reminder.deliveries.values():
            self.due[d.key] = reminder.due_at.timestamp()

    def consume(self) -> None:
        from reminders.handlers.dispatcher import parse_shard_body

        self.dispatcher.tick()
        for _ in range(1000):
            got = self.world.sqs.receive("dispatch", 10)
            if not got:
                break
            for m in got:
                report = self.dispatcher.run_shard(parse_shard_body(m.body), lambda: 60.0)
                if report.more:
                    self.world.queues.send_dispatch([report.shard])
                self.world.sqs.delete("dispatch", m.receipt_handle)
        for _ in range(10_000):
            batch: list[Received] = self.world.sqs.receive("email", 10)
            if not batch:
                return
            for m in batch:
                msg = DeliveryMessage.parse(json.loads(m.body))
                ctx = MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes))
                result = self.deliverer.process(msg, ctx)
                if result.ack:
                    self.world.sqs.delete("email", m.receipt_handle)
                else:
                    self.world.sqs.change_visibility("email", m.receipt_handle, result.visibility_seconds)

    def deliver_events(self) -> None:
        while self.events and self.events[0][0] <= self.now():
            _, _, tags, message_id = heapq.heappop(self.events)
            self.reconciler.provider_accepted(
                tags.get("reminder_id", ""),
                tags.get("channel_id", ""),
                tags.get("delivery_key", ""),
                message_id,
            )

    def open_count(self) -> int:
        return sum(
            1
            for rid in self.world.store.items
            for d in (self.world.store.get(rid) or _NONE).deliveries.values()
            if not d.state.terminal
        )

    def run(self) -> None:
        created = 0
        start = self.now()
        deadline = start + CREATION_SPAN_SECONDS + 30 * 3600
        next_tick = start
        while self.now() < deadline:
            while created < self.n and start + CREATION_SPAN_SECONDS * created / self.n <= self.now():
                self.create(created)
                created += 1
            self.deliver_events()
            if self.now() >= next_tick:
                self.consume()
                next_tick = self.now() + 60.0
            else:
                self.consume_queue_only()
            if created == self.n and not self.events and self.open_count() == 0:
                break
            self.clock.advance(STEP_SECONDS)

    def consume_queue_only(self) -> None:
        if self.world.sqs.depth("email")["visible"]:
            self.consume()


class _Empty:
    deliveries: dict[str, Any] = {}


_NONE = _Empty()


def measure(seed: int, n: int, wait: float) -> Result:
    """One run at ``wait``: the duplicates and the ambiguous emails' lateness."""
    run = _Run(seed, n, wait)
    run.run()
    out = Result(wait, emails=len(run.due), open_deliveries=run.open_count())
    for key, sends in run.sends.items():
        accepted = [s for s in sends if s.accepted]
        out.accepted_sends += len(accepted)
        out.duplicates += max(0, len(accepted) - 1)
        first = next((i for i, s in enumerate(sends) if s.accepted), None)
        if first is not None and any(s.label in AMBIGUOUS_UNACCEPTED for s in sends[:first]):
            due = run.due[key]
            out.ambiguous_waits += 1
            out.lateness_after_ambiguous.append(sends[first].at - due)
            ambiguous_at = next(s.at for s in sends if s.label in AMBIGUOUS_UNACCEPTED)
            out.wait_after_ambiguous.append(sends[first].at - ambiguous_at)
            if sends[0].at - due <= ON_TIME_SECONDS:
                out.lateness_on_time_ambiguous.append(sends[first].at - due)
    return out


def curve(seed: int, n: int, waits: Sequence[float] = CURVE_WAITS_SECONDS) -> list[Result]:
    return [measure(seed, n, w) for w in waits]


def format_curve(results: Sequence[Result], default_wait: float) -> str:
    model = ses_latency
    lines = [
        "email residual against the ambiguous-email wait (unconfirmed_send_wait_seconds);"
        f" SES send-event model: median {model.NORMAL_MEDIAN_SECONDS:g} s (log-normal sigma"
        f" {model.NORMAL_SIGMA:g}), {model.RETRIED_FRACTION:.0%} retried by EventBridge within 1 h,"
        f" {model.LOST_FRACTION:.1%} lost (ses_latency.py)",
        f"  {'wait s':>6} {'P(ev>w)':>8} {'sends':>6} {'dups':>5} {'dup %':>6} {'waited':>6}"
        f" {'mean late s':>11} {'p99 late s':>10} {'p99 added':>9} {'p99 on-time':>11} {'open':>5}",
    ]
    for r in sorted(results, key=lambda r: r.wait_seconds):
        late = r.lateness_after_ambiguous
        mean = sum(late) / len(late) if late else 0.0
        mark = " (default)" if r.wait_seconds == default_wait else ""
        lines.append(
            f"  {r.wait_seconds:>6g} {model.later_than(r.wait_seconds):>8.2%} {r.accepted_sends:>6}"
            f" {r.duplicates:>5} {r.duplicate_percent:>6.2f} {r.ambiguous_waits:>6} {mean:>11.0f}"
            f" {p99(late):>10.0f} {p99(r.wait_after_ambiguous):>9.0f}"
            f" {p99(r.lateness_on_time_ambiguous):>11.0f} {r.open_deliveries:>5}{mark}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="reminders_ops.bench.email_residual", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-n", type=int, default=5000, help="number of email reminders")
    parser.add_argument(
        "--wait", type=float, action="append", help="a wait to measure (default: the curve's)"
    )
    args = parser.parse_args(argv)
    default = RetryPolicy().unconfirmed_send_wait_seconds
    results = curve(args.seed, args.n, tuple(args.wait) if args.wait else CURVE_WAITS_SECONDS)
    print(format_curve(results, default))
    for r in results:
        if r.wait_seconds == default:
            print(r.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
