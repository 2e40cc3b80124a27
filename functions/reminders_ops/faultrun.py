"""The seeded randomized fault run (``make verify SEED=… N=…``): proof of the delivery invariant.

``python -m reminders_ops.faultrun --seed 7 -n 5000`` creates N reminders (webhook, email or both;
due times spread around the 900 s delay window, some days beyond) through the real ``Reminders``
service and drives the real Lambda handlers — the webhook/email consumers, the dispatcher's tick
and shard workers, the SES-event reconciler — over the in-memory backends (``MemoryReminderStore``,
``MemorySqs``) on a virtual clock, with an event-source-mapping model (receive a batch, invoke,
delete what was not reported, visibility timeouts, maxReceiveCount).

Injected at random: crashes at every step boundary (after claim, after send, after record, before
ack; a crash aborts the whole invocation — nothing after it reaches a backend, the batch is
neither deleted nor reported and comes back after its visibility timeout), SQS duplicates and two
workers racing for the same message, HTTP 429 (Retry-After in seconds, as an HTTP-date, or none),
5xx, timeouts before and after the receiver accepted, refused connections, permanent 4xx and
destinations that turn private (SSRF guard) on chosen subsets, SES throttling/5xx/timeouts/pauses,
cancels and reschedules through the service (some racing a send), dispatcher pauses and crashes.

The webhook receiver model honours Standard Webhooks (verifies the signature and timestamp on the
virtual clock, deduplicates by ``webhook-id``, answers 409 to an id it has accepted). The SES
model honours no key: every email it accepts is counted, duplicates are the residual exposure.

At the end, from the models' own records and the ledger: every non-cancelled delivery is
``delivered`` or ``dead_letter`` with a reason (else it is lost); accepted sends per webhook key
<= 1; every raw POST beyond a key's first follows an injected failure or ambiguity (and none
follows a recorded ``delivered``); every dead letter matches an injected permanent fault or a budget
or age exhausted by injected failures only; nothing was sent before its due time. Exit 1 on any
violation.
"""

from __future__ import annotations

import argparse
import heapq
import hmac
import itertools
import json
import math
import random
import socket
import sys
import time
import uuid
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from types import SimpleNamespace
from typing import Any, cast

import standardwebhooks.webhooks
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from reminders import runtime
from reminders.adapters import webhook as webhook_adapter
from reminders.adapters.clock import FixedClock
from reminders.adapters.codec import decode_history
from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.endpoints_store import MemoryEndpointStore
from reminders.adapters.envelope import LocalKeyWrapper, SecretSealer
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import Received, sqs_event_records
from reminders.adapters.receipts import EndpointReceiverSecrets, MemoryReceiptLog
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, signing_key
from reminders.adapters.ses import SesEmailSender
from reminders.adapters.webhook import WebhookSender
from reminders.domain import localtime
from reminders.domain.endpoints import RotationLimitError, implicit_endpoint_id, is_endpoint_id, origin_of
from reminders.domain.errors import ConflictError, StoreConflictError
from reminders.domain.health import HealthPolicy
from reminders.domain.models import ChannelType
from reminders.domain.ports import OutMessage, Sender
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import SQS_MAX_DELAY_SECONDS, dispatch_horizon, iso
from reminders.domain.states import DeliveryState
from reminders.services import endpoints as endpoints_service
from reminders.services.deliver import Deliverer
from reminders.services.dispatch import Dispatcher
from reminders.services.endpoints import Endpoints, NewEndpoint
from reminders.services.intents import ChannelSpec, NewReminder
from reminders.services.receipts import ReceiptInbox, ReceiptMerger
from standardwebhooks.webhooks import Webhook

from reminders_ops import ses_latency
from reminders_ops.bench.sim.model import item_size
from reminders_ops.world import InMemoryWorld

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
SHARDS = 4  # the index shards of the simulated stack (the invariant does not depend on it)
VISIBILITY_TIMEOUT = 180  # 6 x a 30 s consumer timeout, as in the stack
DISPATCH_VISIBILITY_TIMEOUT = 360
MAX_RECEIVE_COUNT = 20
WORKERS = 3
PUBLIC_IP = "93.184.216.34"
PRIVATE_IP = "10.20.30.40"
SIGNATURE_TOLERANCE_SECONDS = 300
HORIZON_SECONDS = (dispatch_horizon(T0) - T0).total_seconds()  # how far ahead the dispatcher looks
IDLE_TICK_SECONDS = 900.0
#: Scheduled events the run waits for before it may end.
_PENDING_KINDS = frozenset(
    {"create", "ses_event", "redrive", "receipt_send", "receipt_resend", "receipt_stream"}
)
#: Labels of a webhook POST (or SES send) after which another attempt is expected.
RETRY_LABELS = frozenset({"429", "5xx", "timeout_before_accept", "timeout_after_accept"})
DYNAMODB_ITEM_LIMIT_BYTES = 400_000  # "400 KB", read conservatively
#: SES outcomes that may hide an acceptance but were not accepted: the re-send waits (its cost).
AMBIGUOUS_UNACCEPTED = frozenset({"timeout_before_accept", "5xx"})
#: An email's first send this close to its due time was not delayed by another fault (issue 32.4).
ON_TIME_SECONDS = 5.0


def _p99(values: list[float]) -> float:
    late = sorted(values)
    return late[min(len(late) - 1, int(0.99 * len(late)))] if late else 0.0


EXPECTED_DEAD_LETTER_REASONS = frozenset(
    {"permanent_failure", "invalid_destination", "attempts_exhausted", "expired"}
)


class Crash(BaseException):
    """The worker process died here: the batch processor does not catch it, the invocation ends."""


# -- the plan ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Probabilities of every injected fault (per boundary, per POST, per send, per reminder)."""

    crash_after_claim: float = 0.01
    crash_after_send: float = 0.01
    crash_after_record: float = 0.01
    crash_before_ack: float = 0.01  # per invocation: the handler returned, DeleteMessage never ran
    dispatch_crash_after_publish: float = 0.03
    duplicate_send: float = 0.02  # per message: SQS delivers it twice
    race_after_claim: float = 0.01  # a second worker gets the same message while the first sends
    race_before_claim: float = 0.01  # a second worker gets it and claims first
    api_race_at_send: float = 0.004  # a cancel/reschedule lands while the worker sends
    http_429: float = 0.06
    http_5xx: float = 0.05
    timeout_before_accept: float = 0.02
    timeout_after_accept: float = 0.02
    connection_refused: float = 0.02
    ses_throttle: float = 0.04
    ses_5xx: float = 0.03
    ses_timeout_before_accept: float = 0.01
    ses_timeout_after_accept: float = 0.015
    ses_unreachable: float = 0.02
    ses_event_duplicate: float = ses_latency.EVENT_DUPLICATE  # EventBridge delivers an event twice
    ses_event_lost: float = ses_latency.LOST_FRACTION  # best effort: never delivered
    ses_event_retried: float = ses_latency.RETRIED_FRACTION  # EventBridge retried the target: late
    # (the send event's delay and loss follow ses_latency.send_event_delay: documented model)
    dns_failure: float = 0.01  # per webhook send: the resolver fails transiently (EAI_AGAIN)
    webhook_gone: float = 0.02  # permanent 4xx (chosen subset)
    webhook_flaky: float = 0.015  # always 5xx: attempts exhausted
    webhook_throttled: float = 0.003  # always 429 (Retry-After 1 h): expires after the max age
    webhook_rebind: float = 0.005  # the host turns private after creation: SSRF guard refuses
    email_bounce: float = 0.02  # permanent rejection
    email_flaky: float = 0.01  # always 5xx
    cancel: float = 0.05
    reschedule: float = 0.05
    duplicate_create: float = 0.02
    dispatcher_pauses: int = 3
    ses_pause_minutes: int = 15
    operator_redrives: int = 4  # times an operator redrives every DLQ message to its source queue
    shard_changes: int = 2  # times an operator changes due_shards (up, then down)
    #: The ambiguous-email wait under test (None: the policy's default, RetryPolicy).
    unconfirmed_send_wait_seconds: float | None = None
    local_time: float = 0.1  # issue 17: due as a wall time in a random zone (DST rules apply)
    send_window: float = 0.1  # issue 17: quiet hours in the reminder's zone (deferrals spend nothing)
    # issue 15: endpoints with their own secrets, rotated while deliveries retry
    endpoint: float = 0.4  # per webhook reminder to a shared host: sent through a registered endpoint
    endpoint_named: float = 0.5  # of those: the channel names it (endpoint_id); else a bare url
    rotations: int = 25  # rotations of a random endpoint at random times of the run
    rotate_on_retry: float = 0.08  # per retryable answer through an endpoint: a rotation within 5 min
    rotation_overlap_seconds: tuple[float, float] = (600.0, 6 * 3600.0)  # the overlap asked for
    # issue 19: signed receiver receipts (POST /inbound/receiver), in random order, duplicated, late
    receipt: float = 0.3  # per accepted webhook: its receiver sends 1-3 receipts
    receipt_resent: float = 0.2  # per receipt: the receiver sends it again (same event id)
    receipt_stream_redelivered: float = 0.05  # per stored receipt: the stream's function gets it twice
    receipt_delay_seconds: float = 900.0  # each receipt leaves 0 .. this long after its event time
    #: Issue 16: times a shared endpoint (one of the ``hooks-<n>`` hosts) is down for everyone (503 to
    #: every POST) for 10-60 minutes: it is held, probed, resumed (or disabled past the limit).
    endpoint_outages: int = 6
    #: Issue 16: the endpoints' disable limit in this run (the deployment's default is the maximum age,
    #: 24 h). An always-failing endpoint (``flaky-<i>``) is disabled this long after its hold and its
    #: delivery dead-letters ``endpoint_disabled`` (a redrive while it stays disabled: again), instead
    #: of being probed until the maximum age: bounded virtual time for what never recovers (probes
    #: are ~70 % of the run's sends otherwise). Longer than any outage (shared hosts recover).
    endpoint_disable_after_seconds: float = 2 * 3600.0


#: Every fault and operator/user action the run injects: the short forced run (tests/proof/
#: test_fault_run.py) fails when one of them never happened, or when the run injects a kind missing here.
FAULT_KINDS = frozenset(
    {
        "crash_after_claim",
        "crash_after_send",
        "crash_after_record",
        "crash_before_ack",
        "dispatch_crash_after_publish",
        "duplicate_send",
        "duplicate_create",
        "race_second_worker_claims_first",
        "race_second_worker_during_lease",
        "api_race_during_send",
        "webhook_429_retry_after_seconds",
        "webhook_429_retry_after_date",
        "webhook_429_no_retry_after",
        "webhook_5xx",
        "webhook_timeout_before_accept",
        "webhook_timeout_after_accept",
        "webhook_connection_refused",
        "webhook_dns_eai_again",
        "webhook_always_5xx",
        "webhook_always_429",
        "webhook_permanent_400",
        "webhook_permanent_404",
        "webhook_permanent_410",
        "webhook_permanent_422",
        "ses_throttled",
        "ses_5xx",
        "ses_timeout_before_accept",
        "ses_timeout_after_accept",
        "ses_unreachable",
        "ses_sending_paused",
        "ses_permanent_rejection",
        "ses_always_5xx",
        "ses_event_lost",
        "ses_event_late_retried_by_eventbridge",
        "ses_event_duplicated",
        "cancel",
        "reschedule",
        "dispatcher_pause",
        "operator_redrive",
        "operator_redriven_message",
        "operator_shard_change",
        "due_local",  # issue 17: due as a wall time in a random zone (DST rules apply)
        "send_window",  # issue 17: quiet hours in the reminder's zone
        "endpoint_secret_rotation",  # issue 15: POST /endpoints/{id}/rotate-secret at a random time
        "endpoint_rotation_during_retry",  # issue 15: ... while one of its deliveries retries
        "receiver_switched_secret",  # issue 15: the receiver moves to the new secret in the overlap
        "receipt_sent",  # issue 19: a signed receipt to POST /inbound/receiver
        "receipt_resent",  # issue 19: the same receipt (event id) again
        "receipt_stream_redelivered",  # issue 19: the stream's function gets a stored receipt twice
        "receipt_older_after_newer",  # issue 19: a receipt older than the standing one arrives
        "endpoint_outage",  # issue 16: a shared endpoint down for everyone for minutes
    }
)
#: Counted, but outcomes of chance rather than injected faults (not required in every run).
NOTED_KINDS = frozenset(
    {
        "cancel_too_late",
        "reschedule_too_late",
        "ses_pause_window_minutes",
        "ses_event_for_canceled",
        "ses_event_for_dead_letter",
        "receipt_before_recorded_delivered",  # issue 19: the receipt is the evidence (reconciled)
        "rotation_refused_key_limit",  # issue 15: a 409, three secrets already sign
    }
)


# -- the report ----------------------------------------------------------------------------------------
@dataclass
class Report:
    seed: int
    n: int
    reminders: int = 0
    deliveries: Counter[str] = field(default_factory=Counter)  # by channel
    delivered: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)  # by reason
    dead_letters_all_failed_subset: int = 0  # of budget/age dead letters: on an always-failing target
    canceled: int = 0
    lost: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    webhook_posts: int = 0
    webhook_accepted_keys: int = 0
    duplicate_accepted_sends: int = 0  # accepted sends beyond one per key (must be 0)
    extra_posts_explained: Counter[str] = field(default_factory=Counter)  # by the fault before it
    posts_after_acceptance: Counter[str] = field(default_factory=Counter)  # by the ambiguous fault
    unexplained_posts: int = 0
    receiver_409: int = 0  # the receiver confirmed an id it had accepted (reconciled, not resent)
    posts_after_delivered: int = 0  # webhook POSTs and SES calls after the ledger said delivered
    rejected_signatures: int = 0
    endpoints: int = 0  # registered endpoints (issue 15)
    endpoint_deliveries: int = 0  # webhook deliveries signed with an endpoint's own secret
    rotations: int = 0
    receiver_switches: int = 0
    posts_in_overlap: int = 0  # POSTs signed while an endpoint had an old and a new key
    verified_with_old_key: int = 0  # of those: the receiver had not switched yet
    keys_retired_by_cap: int = 0  # an old key dropped before its expiry (MAX_SIGNING_KEYS)
    receipts_sent: int = 0  # POST /inbound/receiver requests (issue 19)
    receipt_answers: Counter[str] = field(default_factory=Counter)  # by HTTP status
    receipt_merges: Counter[str] = field(default_factory=Counter)  # by the merger's outcome
    receipt_regressions: int = 0  # a delivered delivery moved by a receipt (must be 0)
    receipts_merged_twice: int = 0  # one event id merged into a delivery more than once (must be 0)
    receipt_standing_wrong: int = 0  # standing receipt is not the latest stored one (must be 0)
    email_sends: int = 0
    email_duplicates: int = 0  # residual: SES honours no key
    email_duplicates_by_cause: Counter[str] = field(default_factory=Counter)
    unexplained_email_duplicates: int = 0
    early_sends: int = 0
    max_item_bytes: int = 0  # the largest ledger item at the end (DynamoDB's limit: 400 KB)
    unconfirmed_wait_seconds: float = 0.0
    email_ambiguous_waits: int = 0  # emails re-sent (or not) only after the unconfirmed wait
    email_lateness_after_ambiguous: list[float] = field(default_factory=list)  # s, first acceptance
    # issue 32.4: of that lateness, what the ambiguity's wait added (acceptance - first ambiguous send),
    # and the lateness after due of those whose first send was on time (no other fault before it)
    email_wait_after_ambiguous: list[float] = field(default_factory=list)
    email_lateness_on_time_ambiguous: list[float] = field(default_factory=list)
    telemetry: Counter[str] = field(default_factory=Counter)
    invocations: Counter[str] = field(default_factory=Counter)
    dlq_messages: int = 0
    dlq_superseded: int = 0  # DLQ messages of dead letters later proven delivered, or cancelled
    virtual_hours: float = 0.0
    wall_seconds: float = 0.0
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def email_duplicate_percent(self) -> float:
        return 100.0 * self.email_duplicates / self.email_sends if self.email_sends else 0.0

    def email_lateness_summary(self) -> str:
        late = sorted(self.email_lateness_after_ambiguous)
        if not late:
            return "-"
        on_time = self.email_lateness_on_time_ambiguous
        return (
            f"{len(late)} emails, mean {sum(late) / len(late):.0f} s, p99 {_p99(late):.0f} s after due;"
            f" the wait added p99 {_p99(self.email_wait_after_ambiguous):.0f} s; first send on time"
            f" ({len(on_time)}): p99 {_p99(on_time):.0f} s after due (goal ≤ 300 s)"
        )

    def format(self) -> str:
        def counts(c: Counter[str]) -> str:
            return ", ".join(f"{k}={v}" for k, v in sorted(c.items())) or "-"

        lines = [
            f"fault run: seed={self.seed} n={self.n}  ({self.wall_seconds:.1f} s wall,"
            f" {self.virtual_hours:.1f} h virtual)",
            f"reminders            {self.reminders}",
            f"deliveries           {sum(self.deliveries.values())} ({counts(self.deliveries)})",
            f"delivered            {self.delivered}",
            f"dead letters         {sum(self.dead_letters.values())} ({counts(self.dead_letters)});"
            f" budget/age on always-failing targets: {self.dead_letters_all_failed_subset}",
            f"cancelled            {self.canceled}",
            f"lost                 {self.lost}",
            f"injected faults      {sum(self.injected.values())}",
            *(f"  {k:<34} {v}" for k, v in sorted(self.injected.items())),
            f"webhook raw POSTs    {self.webhook_posts} for {self.webhook_accepted_keys} accepted keys",
            f"duplicate accepted   {self.duplicate_accepted_sends}  (accepted sends per key > 1)",
            f"extra POSTs explained {sum(self.extra_posts_explained.values())}"
            f" ({counts(self.extra_posts_explained)})",
            f"  of which after acceptance (answered 409) {sum(self.posts_after_acceptance.values())}"
            f" ({counts(self.posts_after_acceptance)})",
            f"409 from receiver    {self.receiver_409}  (id already accepted: reconciled as delivered)",
            f"unexplained POSTs    {self.unexplained_posts}",
            f"sends after delivered {self.posts_after_delivered}  (webhook POSTs and SES calls)",
            f"bad signatures       {self.rejected_signatures}",
            f"endpoints            {self.endpoints} registered, {self.endpoint_deliveries} deliveries through"
            f" them; {self.rotations} secret rotations, {self.receiver_switches} receiver switches;"
            f" {self.posts_in_overlap} POSTs in an overlap ({self.verified_with_old_key} verified by a"
            f" receiver still on the old key); old keys retired early by the key cap"
            f" {self.keys_retired_by_cap}",
            f"receipts             {self.receipts_sent} sent (answers {counts(self.receipt_answers)});"
            f" merged {counts(self.receipt_merges)}; delivered regressed {self.receipt_regressions},"
            f" merged twice {self.receipts_merged_twice}, standing not the latest"
            f" {self.receipt_standing_wrong}",
            f"early sends          {self.early_sends}",
            f"max item bytes       {self.max_item_bytes}  (DynamoDB limit {DYNAMODB_ITEM_LIMIT_BYTES})",
            f"email sends          {self.email_sends}",
            f"email duplicates     {self.email_duplicates} = {self.email_duplicate_percent:.2f} % of sends"
            f" (residual, key not honoured: {counts(self.email_duplicates_by_cause)});"
            f" unconfirmed wait {self.unconfirmed_wait_seconds:g} s",
            f"email lateness after an ambiguous send: {self.email_lateness_summary()}",
            f"DLQ messages         {self.dlq_messages}"
            f" ({self.dlq_superseded} of dead letters since proven delivered or cancelled)",
            f"handler invocations  {counts(self.invocations)}",
            f"telemetry            {counts(self.telemetry)}",
        ]
        if self.violations:
            lines.append(f"VIOLATIONS ({len(self.violations)}):")
            lines += [f"  - {v}" for v in self.violations[:50]]
        else:
            lines.append("invariant holds: 0 lost, 0 duplicate accepted sends, every stop explained")
        return "\n".join(lines)


# -- provider models -----------------------------------------------------------------------------------
@dataclass
class Attempted:
    """One raw POST (or SES call that reached SES) as the provider saw it."""

    at: float
    label: str  # ok | duplicate_409 | 429 | 5xx | 4xx | timeout_before_accept | timeout_after_accept
    accepted: bool  # this request was the accepted one
    crashed_after: bool = False  # the worker died right after this call returned


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    timeout: bool = False


class _SimResponse:
    def __init__(self, reply: Reply) -> None:
        self.status = reply.status
        self._headers = {k.lower(): v for k, v in reply.headers.items()}

    def read(self, amt: int | None = None) -> bytes:
        return b"{}"

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self._headers.get(name.lower(), default)


class _SimConnection:
    """Stands in for the sender's pinned HTTP(S) connection: the network of the simulation."""

    world: World | None = None

    def __init__(self, target: Any, timeout: float, connect_timeout: float, context: Any = None) -> None:
        self.target = target
        self._reply: Reply | None = None

    def connect(self) -> None:
        assert self.world is not None
        self.world.net_connect(self.target)

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> None:
        assert self.world is not None
        self._reply = self.world.net_post(self.target, body or b"", headers or {})

    def getresponse(self) -> _SimResponse:
        assert self._reply is not None
        if self._reply.timeout:
            raise TimeoutError("read timed out")
        return _SimResponse(self._reply)

    def close(self) -> None:
        return None


class SesModel:
    """The ``sesv2`` client of the simulation. Honours no idempotency key."""

    def __init__(self, world: World) -> None:
        self.world = world

    def send_email(self, **kwargs: Any) -> dict[str, Any]:
        return self.world.ses_send(kwargs)


class CountingTelemetry:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        self.counts[name] += int(value)
        for k, v in dimensions.items():
            if k in ("reason", "outcome"):
                self.counts[f"{name}.{v}"] += int(value)

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        return None

    def log(self, action: str, **fields: Any) -> None:
        return None


class Port:
    """An adapter seen through a step boundary: a crash can happen before or after each call, and
    once the process is dead nothing else reaches a backend."""

    def __init__(self, name: str, target: Any, world: World) -> None:
        self._name = name
        self._target = target
        self._world = world

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if not callable(value):
            return value
        point = f"{self._name}.{attr}"
        world = self._world

        def call(*args: Any, **kwargs: Any) -> Any:
            world.boundary(point, "before", args, None)
            result = value(*args, **kwargs)
            world.boundary(point, "after", args, result)
            return result

        return call


class DuplicatingQueues:
    """The Queues port with SQS's at-least-once delivery: some messages arrive twice."""

    def __init__(self, target: Any, world: World) -> None:
        self._target = target
        self._world = world

    def send(self, channel_type: str, messages: Sequence[OutMessage]) -> None:
        out: list[OutMessage] = []
        for m in messages:
            out.append(m)
            if self._world.chance("duplicate_send", self._world.plan.duplicate_send):
                out.append(m)
        self._target.send(channel_type, out)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._target, attr)


@dataclass
class _Context:
    function_name: str = "faultrun"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:111111111111:function:faultrun"
    aws_request_id: str = "faultrun"
    log_group_name: str = "/aws/lambda/faultrun"
    log_stream_name: str = "faultrun"
    function_version: str = "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def _context() -> LambdaContext:
    return cast(LambdaContext, _Context())


@contextmanager
def _patched(target: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


class _RecordingMerger(ReceiptMerger):
    """The real merge, counting its outcomes (``duplicate``: a redelivered record, merged once)."""

    def __init__(self, *, report: Report, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report

    def apply(self, reminder_id: str, channel_id: str, webhook_id: str, receipt: Any, **kw: Any) -> str:
        outcome = super().apply(reminder_id, channel_id, webhook_id, receipt, **kw)
        self.report.receipt_merges[outcome] += 1
        return outcome


def _virtual_datetime(world: World) -> type[datetime]:
    class VirtualDatetime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return world.clock.now().astimezone(tz)

    return VirtualDatetime


# -- the world -----------------------------------------------------------------------------------------
@dataclass
class Track:
    """What the simulation knows about one reminder (independently of the ledger)."""

    rid: str
    due: datetime
    channels: dict[str, str]  # channel id -> category (normal, gone, flaky, throttled, rebind, bounce)
    canceled: bool = False


class World:
    def __init__(self, seed: int, n: int, plan: FaultPlan) -> None:
        self.seed, self.n, self.plan = seed, n, plan
        self.rng = random.Random(seed)
        self.clock = FixedClock(T0)
        # The one in-memory world (world.py), as the stack defines its queues.
        self.world = InMemoryWorld.build(
            clock=self.clock,
            telemetry=CountingTelemetry(),
            store=MemoryReminderStore(cursor_start_back_seconds=3600),
            policy=RetryPolicy()
            if plan.unconfirmed_send_wait_seconds is None
            else replace(RetryPolicy(), unconfirmed_send_wait_seconds=plan.unconfirmed_send_wait_seconds),
            shards=SHARDS,
            visibility_timeout=VISIBILITY_TIMEOUT,
            max_receive_count=MAX_RECEIVE_COUNT,
            dispatch_visibility_timeout=DISPATCH_VISIBILITY_TIMEOUT,
            dispatch_max_receive_count=5,
            health_policy=HealthPolicy(disable_after_seconds=plan.endpoint_disable_after_seconds),
        )
        self.sqs, self.queues, self.store = self.world.sqs, self.world.queues, self.world.store
        self.telemetry: CountingTelemetry = self.world.telemetry
        self.policy = self.world.policy
        self.report_wait = self.policy.unconfirmed_send_wait_seconds
        self.event_rng = random.Random(seed * 7919 + 1)  # SES event latencies: apart from the faults
        self.redriven: dict[str, list[float]] = defaultdict(list)  # delivery key -> redrive times
        self.shards = SHARDS
        self.checking = False
        self.injected: Counter[str] = Counter()
        self.report = Report(seed, n)
        self.rebound: set[str] = set()
        self.gone_hosts = 0  # gone-<k> targets drawn so far
        self.destinations = DestinationPolicy(resolver=self._resolve)
        self.dead = False  # the current invocation's process has crashed
        self._calls_before_send = 0
        self.dispatch_targets: list[tuple[float, int, str]] = []
        self.next_tick = 0.0
        self.last_tick = 0.0
        self.faults_on = True  # off inside a nested (racing) invocation
        self.batch: list[Received] = []
        self.batch_queue = ""
        self.tracks: dict[str, Track] = {}
        self.posts: dict[str, list[Attempted]] = defaultdict(list)
        self.accepted: Counter[str] = Counter()
        self.ses_sends: dict[str, list[Attempted]] = defaultdict(list)
        self.ses_paused: tuple[float, float] = (0.0, 0.0)
        self.outages: dict[str, list[tuple[float, float]]] = defaultdict(list)  # host -> windows
        self.events: list[tuple[float, int, str, Any]] = []
        self.seq = itertools.count()
        self.secret = DEV_WEBHOOK_SECRET
        self.verifier = Webhook(self.secret)
        # Issue 15: endpoints with their own secrets (envelope-sealed in the in-memory endpoint
        # store). The API instance rotates; the consumers' instance reads through its own lookup
        # cache (LOOKUP_CACHE_SECONDS on the virtual clock), as two Lambda functions would.
        endpoint_store = MemoryEndpointStore(SecretSealer(LocalKeyWrapper()))
        self.endpoints_api = Endpoints(
            store=endpoint_store, reminders=self.store, clock=self.clock, telemetry=self.telemetry
        )
        self.endpoints_send = Endpoints(
            store=endpoint_store, reminders=self.store, clock=self.clock, telemetry=self.telemetry
        )
        self.endpoint_ids: list[str] = []  # registered, in creation order (seeded choices)
        self.endpoint_of_origin: dict[tuple[str, str], str] = {}  # (account, origin) -> endpoint id
        self.endpoint_of: dict[str, str] = {}  # reminder id -> the endpoint its webhook goes through
        #: The receiver model's secret per endpoint, and the rotation generation it holds.
        self.receiver_key: dict[str, tuple[int, str]] = {}
        self.rotation_generation: Counter[str] = Counter()
        self.endpoint_rng = random.Random(seed * 15_485_863 + 15)  # apart from the faults' sequence
        # Issue 19: the inbox (verify, one conditional put) and the merge the table's stream drives.
        self.receipt_rng = random.Random(seed * 104_729 + 19)  # apart from the faults' sequence
        self.receipt_log = MemoryReceiptLog(on_put=self._stream_put)
        self.receipt_inbox = ReceiptInbox(
            store=self.store,
            log=self.receipt_log,
            secrets=EndpointReceiverSecrets(self.endpoints_send.for_send, self.clock.now),
            clock=self.clock,
            telemetry=self.telemetry,
        )
        self.receipt_merger = _RecordingMerger(
            store=self.store, clock=self.clock, telemetry=self.telemetry, report=self.report
        )

        self.service = self.world.reminders(
            queues=DuplicatingQueues(self.queues, self), check_destination=self._check_destination
        )
        webhook_sender = WebhookSender(
            policy=self.destinations,
            secret=lambda: self.secret,
            clock=self.clock,
            timeout_seconds=self.policy.provider_timeout_seconds,
            endpoints=self.endpoints_send.signing_endpoint,
        )
        email_sender = SesEmailSender(
            SesModel(self), from_address="reminders@example.com", configuration_set="reminders"
        )
        self.senders: dict[str, Sender] = {
            "webhook": Port("sender", webhook_sender, self),
            "email": Port("sender", email_sender, self),
        }
        self.worker_generation = itertools.count(1)
        self.workers = [self._new_worker() for _ in range(WORKERS)]
        self.current: Deliverer = self.workers[0]
        self.dispatch_generation = 0
        self.dispatcher = self._new_dispatcher()
        self.reconciler = self.world.reconciler()

    # -- randomness -----------------------------------------------------------------------------------
    def chance(self, fault: str, p: float) -> bool:
        if p > 0 and self.rng.random() < p:
            self.injected[fault] += 1
            return True
        return False

    def now_ts(self) -> float:
        return self.clock.now().timestamp()

    # -- destinations ---------------------------------------------------------------------------------
    def _resolve(self, host: str, port: int) -> list[str]:
        if (
            not self.checking
            and self.faults_on
            and self.chance("webhook_dns_eai_again", self.plan.dns_failure)
        ):
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [PRIVATE_IP if host in self.rebound else PUBLIC_IP]

    def _check_destination(self, spec: ChannelSpec) -> None:
        if spec.type is ChannelType.WEBHOOK and not is_endpoint_id(spec.destination):
            self.checking = True  # the create-time check (a failure there is the client's 422)
            try:
                self.destinations.resolve(spec.destination, field="channels.url")
            finally:
                self.checking = False

    @staticmethod
    def category_of(host_or_address: str) -> str:
        head = host_or_address.split("-", 1)[0]
        return head if head in ("gone", "flaky", "throttled", "rebind", "bounce") else "normal"

    # -- wiring -----------------------------------------------------------------------------------------
    def _new_worker(self) -> Deliverer:
        """A consumer instance (a crashed one is replaced by a new instance with a new identity)."""
        n = next(self.worker_generation)
        return self.world.deliverer(
            store=Port("store", self.store, self),
            queues=Port("queues", DuplicatingQueues(self.queues, self), self),
            senders=self.senders,
            worker=f"worker-{n}",
            rng=random.Random(self.seed * 100_000 + n),
            endpoints=self.endpoints_send.for_send,  # as the runtime: a foreign endpoint is no one's
        )

    def _new_dispatcher(self) -> Dispatcher:
        self.dispatch_generation += 1
        return self.world.dispatcher(
            store=Port("dstore", self.store, self),
            queues=Port("dqueues", DuplicatingQueues(self.queues, self), self),
            shards=self.shards,
            worker=f"dispatch-{self.dispatch_generation}",
        )

    # -- step boundaries --------------------------------------------------------------------------------
    def _calls_of(self, delivery: Any) -> list[Attempted]:
        return (self.posts if delivery.type is ChannelType.WEBHOOK else self.ses_sends)[delivery.key]

    def boundary(self, point: str, phase: str, args: tuple[Any, ...], result: Any) -> None:
        if self.dead:
            raise Crash(f"dead before {point}")
        if point == "sender.send" and phase == "before":
            self._check_send(args[0], args[1])
            self._calls_before_send = len(self._calls_of(args[0]))
        if not self.faults_on:
            return
        p = self.plan
        if phase == "before":
            if point == "store.claim" and self.chance("race_second_worker_claims_first", p.race_before_claim):
                self._race(args[0], args[1])
            elif point == "sender.send" and self.chance("api_race_during_send", p.api_race_at_send):
                self._api_race(args[1].id)
            return
        if point in ("store.claim", "store.claim_expired") and result.claimed:
            if self.chance("race_second_worker_during_lease", p.race_after_claim):
                self._race(args[0], args[1])
            self._maybe_crash("crash_after_claim", p.crash_after_claim)
        elif point == "sender.send":
            if self.chance("crash_after_send", p.crash_after_send):
                calls = self._calls_of(args[0])
                if len(calls) > self._calls_before_send:  # the request reached the provider
                    calls[-1].crashed_after = True
                self._crash("crash_after_send")
        elif point == "store.save_delivery" and result is True:
            self._maybe_crash("crash_after_record", p.crash_after_record)
        elif point == "dqueues.send":
            self._maybe_crash("dispatch_crash_after_publish", p.dispatch_crash_after_publish)

    def _maybe_crash(self, fault: str, p: float) -> None:
        if self.chance(fault, p):
            self._crash(fault)

    def _crash(self, fault: str) -> None:
        self.dead = True
        raise Crash(fault)

    def _check_send(self, delivery: Any, reminder: Any) -> None:
        if self.clock.now() < reminder.due_at:
            self.report.early_sends += 1
            self.report.violations.append(f"sent before due: {delivery.key} at {iso(self.clock.now())}")

    def _race(self, reminder_id: str, channel_id: str) -> None:
        """SQS hands the message being processed to a second worker too (at-least-once delivery)."""
        body = {"reminder_id": reminder_id, "channel_id": channel_id}
        mine = next(
            (r for r in self.batch if {k: json.loads(r.body).get(k) for k in body} == body),
            None,
        )
        if mine is None:
            return
        again = self._redeliver(self.batch_queue, mine.message_id)
        if again is None:
            return
        others = [w for w in self.workers if w is not self.current]
        self.invoke(self.batch_queue, [again], nested=True, worker=self.rng.choice(others))

    def _redeliver(self, queue: str, message_id: str) -> Received | None:
        """MemorySqs has no call to hand an in-flight message to a second consumer; SQS can."""
        sqs = self.sqs
        with sqs.lock:
            q = sqs.queues[queue]
            m = q.messages.get(message_id)
            if m is None:
                return None
            m.receive_count += 1
            if m.receipt:
                q.by_receipt.pop(m.receipt, None)
            m.receipt = uuid.uuid4().hex
            q.by_receipt[m.receipt] = m.id
            m.visible_at = sqs.now() + q.config.visibility_timeout
            sqs._push(q, m)
            return Received(m.id, m.receipt, m.body, m.receive_count, dict(m.attributes), m.sent_at)

    def _api_race(self, reminder_id: str) -> None:
        was = self.faults_on
        self.faults_on = False
        try:
            if self.rng.random() < 0.5:
                self.cancel(reminder_id)
            else:
                self.reschedule(reminder_id, self.rng.uniform(-60, 1800))
        finally:
            self.faults_on = was

    # -- the network: the webhook receiver model ----------------------------------------------------------
    def net_connect(self, target: Any) -> None:
        if self.faults_on and self.chance("webhook_connection_refused", self.plan.connection_refused):
            raise ConnectionRefusedError("connection refused")

    def _verify(self, body: bytes, headers: dict[str, str], secret: str | None = None) -> bool:
        """Standard Webhooks verification with the one secret the receiver holds (on the virtual
        clock): the stack's channel secret, or its endpoint's secret as it last switched to."""
        try:
            msg_id, ts = headers["webhook-id"], int(headers["webhook-timestamp"])
            signatures = headers["webhook-signature"].split()
        except (KeyError, ValueError):
            return False
        if abs(self.now_ts() - ts) > SIGNATURE_TOLERANCE_SECONDS:
            return False
        verifier = self.verifier if secret is None else Webhook(signing_key(secret))
        expected = verifier.sign(msg_id, datetime.fromtimestamp(ts, tz=UTC), body.decode())
        return any(hmac.compare_digest(expected, s) for s in signatures)

    def _held_secret(self, rid: str) -> tuple[str | None, str | None]:
        """(endpoint id, the secret the receiver holds for it); (None, secret): a bare URL's receiver
        holds the secret of the implicit endpoint the service made for its account and origin
        (issue 24: no stack-wide secret); (None, None): none made yet."""
        eid = self.endpoint_of.get(rid)
        if eid is None:
            reminder = self.store.get(rid)
            d = reminder.deliveries.get("webhook-0") if reminder else None
            if reminder is None or d is None:
                return None, None
            implicit = self.endpoints_api.store.get(implicit_endpoint_id(reminder.account_id, d.destination))
            keys = implicit.signing_secrets(self.clock.now()) if implicit else []
            return None, keys[0] if keys else None
        return eid, self.receiver_key[eid][1]

    def _endpoint_for(self, account: str, url: str) -> str | None:
        """The endpoint of (account, origin), registered (``bare_urls``) the first time the pair is
        seen if chosen; a pair is decided once, so a bare url never changes secret under a retry."""
        pair = (account, origin_of(url))
        if pair not in self.endpoint_of_origin:
            eid: str | None = None
            if self.endpoint_rng.random() < self.plan.endpoint:
                endpoint, secret = self.endpoints_api.create(
                    NewEndpoint(account, f"{pair[1]}/hooks", bare_urls=True)
                )
                eid = endpoint.id
                self.endpoint_ids.append(eid)
                self.receiver_key[eid] = (0, secret)
                self.report.endpoints += 1
            self.endpoint_of_origin[pair] = eid or ""
        return self.endpoint_of_origin[pair] or None

    # -- issue 15: secret rotations and the receivers that follow them ------------------------------
    def rotate(self, payload: tuple[str, str] | None) -> None:
        """``POST /endpoints/{id}/rotate-secret`` with a random overlap; the receiver switches to the
        new secret at a random point within that overlap."""
        if payload is None:
            if not self.endpoint_ids:
                return
            eid, kind = self.endpoint_rng.choice(self.endpoint_ids), "endpoint_secret_rotation"
        else:
            eid, kind = payload
        overlap = self.endpoint_rng.uniform(*self.plan.rotation_overlap_seconds)
        try:
            _, secret = self.endpoints_api.rotate_secret(eid, overlap)
        except RotationLimitError:  # 409: three secrets already sign; no overlap is cut short
            self.injected["rotation_refused_key_limit"] += 1
            return
        self.injected[kind] += 1
        self.report.rotations += 1
        self.rotation_generation[eid] += 1
        self.schedule(
            self.now_ts() + self.endpoint_rng.uniform(0, overlap),
            "switch",
            (eid, self.rotation_generation[eid], secret),
        )

    def switch(self, payload: tuple[str, int, str]) -> None:
        eid, generation, secret = payload
        if generation > self.receiver_key[eid][0]:  # never back to an older secret
            self.receiver_key[eid] = (generation, secret)
            self.injected["receiver_switched_secret"] += 1
            self.report.receiver_switches += 1

    def _signature_check(self, rid: str, body: bytes, h: dict[str, str]) -> bool:
        """Verify as the receiver does; every refusal is a violation: the receiver's key is the
        current one or an old one it has not yet left, within the overlap it was promised."""
        eid, held = self._held_secret(rid)
        ok = self._verify(body, h, held)
        signing: list[str] = []
        if eid is not None:
            endpoint = self.endpoints_api.store.get(eid)
            # From the record itself (not the sender's code): the current key first, then those
            # whose overlap has not ended.
            keys = sorted(endpoint.keys if endpoint else [], key=lambda k: k.expires_at is not None)
            signing = [k.secret for k in keys if k.active(self.clock.now())]
            if len(signing) > 1:
                self.report.posts_in_overlap += 1
                if ok and held != signing[0]:
                    self.report.verified_with_old_key += 1
        if not ok:
            self.report.rejected_signatures += 1
            why = ""
            if eid is not None and held not in signing:
                self.report.keys_retired_by_cap += 1  # dropped before its expiry (MAX_SIGNING_KEYS)
                why = " (its key retired before its expiry)"
            elif eid is not None:
                why = " (its key within the overlap)"
            self.report.violations.append(f"receiver rejected a signature for {h.get('webhook-id')}{why}")
        return ok

    def net_post(self, target: Any, body: bytes, headers: dict[str, str]) -> Reply:
        h = {k.lower(): v for k, v in headers.items()}
        rid = json.loads(body)["id"]
        if not self._signature_check(rid, body, h):
            return Reply(401, {})
        key = h["webhook-id"]
        if self._recorded_delivered(rid, "webhook-0"):
            self.report.posts_after_delivered += 1
            self.report.violations.append(f"POST after recorded delivered: {key}")
        category = self.category_of(target.host)
        p = self.plan
        retry_after: str | None = None
        status = 200
        if category == "gone":
            # The status by the gone host's number (gone-<k>, k-th drawn): each of the four comes up
            # whatever the ids (a hash of the key left one out when endpoint holds changed the draws).
            number = target.host.split(".", 1)[0].removeprefix("gone-")
            label, status = "4xx", (400, 404, 410, 422)[int(number) % 4 if number.isdigit() else 0]
            self.injected[f"webhook_permanent_{status}"] += 1
        elif category == "flaky":
            label, status = "5xx", 503
            self.injected["webhook_always_5xx"] += 1
        elif category == "throttled":
            label, status, retry_after = "429", 429, "3600"
            self.injected["webhook_always_429"] += 1
        elif any(a <= self.now_ts() < b for a, b in self.outages.get(target.host, ())):
            label, status = "5xx", 503
            self.injected["endpoint_outage"] += 1
        else:
            u = self.rng.random()
            cuts = itertools.accumulate(
                (p.http_429, p.http_5xx, p.timeout_before_accept, p.timeout_after_accept)
            )
            c429, c5xx, cbefore, cafter = cuts
            if u < c429:
                label, status = "429", 429
                form = self.rng.randrange(3)
                seconds = self.rng.randint(1, 300)
                if form == 0:
                    retry_after = str(seconds)
                    self.injected["webhook_429_retry_after_seconds"] += 1
                elif form == 1:
                    when = self.clock.now() + timedelta(seconds=seconds)
                    retry_after = format_datetime(when, usegmt=True)
                    self.injected["webhook_429_retry_after_date"] += 1
                else:
                    self.injected["webhook_429_no_retry_after"] += 1
            elif u < c5xx:
                label, status = "5xx", self.rng.choice((500, 502, 503, 504, 408, 425))
                self.injected["webhook_5xx"] += 1
            elif u < cbefore:
                label = "timeout_before_accept"
                self.injected["webhook_timeout_before_accept"] += 1
            elif u < cafter:
                label = "timeout_after_accept"
                self.injected["webhook_timeout_after_accept"] += 1
            else:
                label = "ok"
        eid = self.endpoint_of.get(rid)
        if (
            eid is not None
            and label in RETRY_LABELS
            and self.faults_on
            and self.endpoint_rng.random() < p.rotate_on_retry
        ):
            self.schedule(
                self.now_ts() + self.endpoint_rng.uniform(0, 300),
                "rotate",
                (eid, "endpoint_rotation_during_retry"),
            )
        accepts = label in ("ok", "timeout_after_accept")
        accepted_now = False
        if accepts and self.accepted[key]:
            if label == "ok":
                label, status = "duplicate_409", 409  # the id was accepted before: confirm it
                self.report.receiver_409 += 1
        elif accepts:
            self.accepted[key] += 1
            accepted_now = True
        self.posts[key].append(Attempted(self.now_ts(), label, accepted_now))
        if accepted_now:
            self._plan_receipts(rid, key)
        reply_headers = {"retry-after": retry_after} if retry_after else {}
        if accepted_now:
            reply_headers["webhook-receipt"] = f"rcpt-{key[-12:]}"
        return Reply(status, reply_headers, timeout=label.startswith("timeout"))

    def _recorded_delivered(self, rid: str, cid: str) -> bool:
        """Has the ledger ever recorded this delivery as delivered (whatever its state says now)?"""
        item = self.store.items.get(rid)
        d = item["dl"].get(cid) if item else None
        if d is None:
            return False
        return d["st"] == DeliveryState.DELIVERED.value or any(
            a.decision == "delivered" for a in decode_history(d.get("h", []))
        )

    # -- issue 19: the receiver's receipts ---------------------------------------------------------------
    def _plan_receipts(self, rid: str, key: str) -> None:
        """The receiver reports on what it accepted: 1-3 receipts with event times within a minute,
        each sent after a random delay (so in any order), some sent twice."""
        r, p = self.receipt_rng, self.plan
        if r.random() >= p.receipt:
            return
        now = self.now_ts()
        for j in range(r.randint(1, 3)):
            event_at = now + r.uniform(0, 60)
            status = "processed" if r.random() < 0.7 else "rejected"
            receipt = (rid, key, f"evt-{key[-10:]}-{j}", status, event_at)
            send_at = event_at + r.uniform(0, p.receipt_delay_seconds)
            self.schedule(send_at, "receipt_send", receipt)
            if r.random() < p.receipt_resent:
                self.schedule(send_at + r.uniform(1, 600), "receipt_resend", receipt)

    def send_receipt(self, receipt: tuple[str, str, str, str, float], again: bool = False) -> None:
        """``POST /inbound/receiver``, signed with the secret the receiver holds now."""
        from reminders.domain.receipts import ReceiptRejectedError

        rid, key, event_id, status, event_at = receipt
        self.injected["receipt_resent" if again else "receipt_sent"] += 1
        self.report.receipts_sent += 1
        if not self._recorded_delivered(rid, "webhook-0"):
            self.injected["receipt_before_recorded_delivered"] += 1
        doc = {
            "webhook_id": key,
            "reminder_id": rid,
            "status": status,
            "event_time": iso(datetime.fromtimestamp(event_at, tz=UTC)),
            "event_id": event_id,
            **({"reason": "schema"} if status == "rejected" else {}),
        }
        body = json.dumps(doc).encode()
        _, held = self._held_secret(rid)
        signer = self.verifier if held is None else Webhook(signing_key(held))
        msg_id = f"msg_{event_id}_{self.report.receipts_sent}"
        headers = {
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(self.now_ts())),
            "webhook-signature": signer.sign(msg_id, self.clock.now(), body.decode()),
        }
        try:
            self.receipt_inbox.accept(body, headers)
            self.report.receipt_answers["202"] += 1
        except ReceiptRejectedError as exc:
            self.report.receipt_answers[str(exc.status)] += 1
            if exc.status != 409 or not again:  # a resent event id is a 409: expected
                self.report.violations.append(f"{key}: receipt {event_id} refused {exc.status} {exc.code}")

    def _stream_put(self, item: dict[str, str]) -> None:
        """The table's stream: each stored receipt reaches ReceiptsFunction within seconds, some twice."""
        r = self.receipt_rng
        at = self.now_ts() + r.uniform(0.2, 3.0)
        self.schedule(at, "receipt_stream", dict(item))
        if r.random() < self.plan.receipt_stream_redelivered:
            self.injected["receipt_stream_redelivered"] += 1
            self.schedule(at + r.uniform(1, 120), "receipt_stream", dict(item))

    def receipt_stream(self, item: dict[str, str]) -> None:
        """ReceiptsFunction (the real handler) on one stream record; checks nothing regressed."""
        from boto3.dynamodb.types import TypeSerializer
        from reminders.domain.receipts import decode
        from reminders.handlers import receipts as receipts_handler

        rid, cid = item["rid"], item["cid"]
        d = self.store.items[rid]["dl"][cid]
        before = d["st"]
        standing = decode(d.get("rr"))
        if standing is not None and (item["et"], item["st"]) < (standing.event_time, standing.status.value):
            self.injected["receipt_older_after_newer"] += 1
        ser = TypeSerializer()
        image = {k: ser.serialize(v) for k, v in item.items()}
        record = {
            "eventID": uuid.uuid4().hex,
            "eventName": "INSERT",
            "eventSource": "aws:dynamodb",
            "awsRegion": "us-east-1",
            "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/reminders/stream/x",
            "dynamodb": {
                "Keys": {"pk": image["pk"], "sk": image["sk"]},
                "NewImage": image,
                "SequenceNumber": str(next(self.seq)),
                "StreamViewType": "NEW_IMAGE",
            },
        }
        self.report.invocations["receipts"] += 1
        response = receipts_handler.handler({"Records": [record]}, _context())
        if response.get("batchItemFailures"):  # the mapping retries the record
            self.schedule(self.now_ts() + 5, "receipt_stream", item)
        after = self.store.items[rid]["dl"][cid]["st"]
        if before == DeliveryState.DELIVERED.value and after != before:
            self.report.receipt_regressions += 1
            self.report.violations.append(f"{item['pk']}: a receipt moved a delivered delivery to {after}")

    # -- the SES model --------------------------------------------------------------------------------------
    def ses_send(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        tags = {t["Name"]: t["Value"] for t in kwargs.get("EmailTags", [])}
        key = tags["delivery_key"]
        address = kwargs["Destination"]["ToAddresses"][0]
        category = self.category_of(address)
        p = self.plan
        now = self.now_ts()
        if self._recorded_delivered(tags.get("reminder_id", ""), tags.get("channel_id", "")):
            self.report.posts_after_delivered += 1
            self.report.violations.append(f"email sent after recorded delivered: {key}")

        def error(code: str, status: int, message: str = "") -> ClientError:
            response: Any = {
                "Error": {"Code": code, "Message": message},
                "ResponseMetadata": {"HTTPStatusCode": status},
            }
            return ClientError(response, "SendEmail")

        if self.ses_paused[0] <= now < self.ses_paused[1]:
            self.injected["ses_sending_paused"] += 1
            raise error("SendingPausedException", 400, "sending paused for the account")
        if category == "bounce":
            self.injected["ses_permanent_rejection"] += 1
            self.ses_sends[key].append(Attempted(now, "4xx", False))
            raise error("MessageRejected", 400, "address on the suppression list")
        if category == "flaky":
            self.injected["ses_always_5xx"] += 1
            self.ses_sends[key].append(Attempted(now, "5xx", False))
            raise error("InternalFailure", 500)
        u = self.rng.random()
        c = list(
            itertools.accumulate((p.ses_unreachable, p.ses_throttle, p.ses_5xx, p.ses_timeout_before_accept))
        )
        if self.faults_on and u < c[0]:
            self.injected["ses_unreachable"] += 1
            raise EndpointConnectionError(endpoint_url="https://email.us-east-1.amazonaws.com")
        if u < c[1]:
            self.injected["ses_throttled"] += 1
            self.ses_sends[key].append(Attempted(now, "429", False))
            raise error("TooManyRequestsException", 429)
        if u < c[2]:
            self.injected["ses_5xx"] += 1
            self.ses_sends[key].append(Attempted(now, "5xx", False))
            raise error("ServiceUnavailable", 503)
        if u < c[3]:
            self.injected["ses_timeout_before_accept"] += 1
            self.ses_sends[key].append(Attempted(now, "timeout_before_accept", False))
            raise ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com")
        message_id = f"ses-{uuid.UUID(int=self.rng.getrandbits(128)).hex}"
        after = self.chance("ses_timeout_after_accept", p.ses_timeout_after_accept)
        self.ses_sends[key].append(Attempted(now, "timeout_after_accept" if after else "ok", True))
        delay = ses_latency.send_event_delay(
            self.event_rng, lost=p.ses_event_lost, retried=p.ses_event_retried
        )
        if delay is None:
            self.injected["ses_event_lost"] += 1
        else:
            if delay > ses_latency.RETRIED_SECONDS[0]:
                self.injected["ses_event_late_retried_by_eventbridge"] += 1
            self.schedule(now + delay, "ses_event", (tags, message_id))
            if self.event_rng.random() < p.ses_event_duplicate:  # at-least-once: the same event again
                self.injected["ses_event_duplicated"] += 1
                self.schedule(now + delay + self.event_rng.uniform(0.5, 600), "ses_event", (tags, message_id))
        if after:
            raise ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com")
        return {"MessageId": message_id, "ResponseMetadata": {"HTTPStatusCode": 200, "RequestId": "r"}}

    # -- events ---------------------------------------------------------------------------------------
    def schedule(self, at: float, kind: str, payload: Any) -> None:
        heapq.heappush(self.events, (at, next(self.seq), kind, payload))

    # -- the service (the API's use cases) ----------------------------------------------------------------
    def create(self, i: int) -> str:
        rng = self.rng
        kind = rng.choice(("renewal", "cart-expiry", "trial-end"))
        account = f"acct-{i % 97}"
        key = f"{kind}:{account}:{i}"
        shape = rng.random()
        channels: list[ChannelSpec] = []
        categories: dict[str, str] = {}
        eid: str | None = None
        p = self.plan
        if shape < 0.70:
            u = rng.random()
            if u < p.webhook_gone:
                # Numbered in the order drawn: the four permanent statuses come up in turn whatever
                # the reminder numbers the draws land on.
                host = f"gone-{self.gone_hosts}.example.com"
                self.gone_hosts += 1
            elif u < p.webhook_gone + p.webhook_flaky:
                host = f"flaky-{i}.example.com"
            elif u < p.webhook_gone + p.webhook_flaky + p.webhook_throttled:
                host = f"throttled-{i}.example.com"
            elif u < p.webhook_gone + p.webhook_flaky + p.webhook_throttled + p.webhook_rebind:
                host = f"rebind-{i}.example.com"
            else:
                host = f"hooks-{(i % 97) % 50}.example.com"  # one receiver host per account
            url = f"https://{host}/reminders/{i}"
            categories["webhook-0"] = self.category_of(host)
            eid = self._endpoint_for(account, url) if categories["webhook-0"] == "normal" else None
            named = eid is not None and self.endpoint_rng.random() < p.endpoint_named
            channels.append(ChannelSpec(ChannelType.WEBHOOK, eid if named and eid else url))
        if shape >= 0.45:
            u = rng.random()
            if u < p.email_bounce:
                address = f"bounce-{i}@example.com"
            elif u < p.email_bounce + p.email_flaky:
                address = f"flaky-{i}@example.com"
            else:
                address = f"customer{i}@example.com"
            channels.append(ChannelSpec(ChannelType.EMAIL, address))
            categories["email-0"] = self.category_of(address)
        now = self.clock.now()
        due = now + timedelta(seconds=self._due_offset())
        due, time_fields = _local_time_fields(rng, p, due)
        for name in ("due_local", "send_window"):
            if name in time_fields:
                self.injected[name] += 1
        cmd = NewReminder(
            account_id=account,
            key=key,
            kind=kind,
            due_at=due,
            channels=tuple(channels),
            template_id=kind,
            template_version=1,
            data={"n": i, "plan": rng.choice(("basic", "pro"))},
            **time_fields,
        )
        reminder, created = self.service.create(cmd)
        assert created
        if rng.random() < p.duplicate_create:  # the client retries its POST: same key, same body
            self.injected["duplicate_create"] += 1
            again, created_again = self.service.create(cmd)
            if created_again or again.id != reminder.id:
                self.report.violations.append(f"duplicate create made a second reminder: {key}")
        if categories.get("webhook-0") == "rebind":
            self.rebound.add(f"rebind-{i}.example.com")  # DNS turns private after the create check
        self.tracks[reminder.id] = Track(reminder.id, due, categories)
        if "webhook-0" in categories and eid is not None:
            self.endpoint_of[reminder.id] = eid
            self.report.endpoint_deliveries += 1
        self._watch_due(reminder.id, due)
        self.report.deliveries.update(c.split("-")[0] for c in categories)
        if rng.random() < p.cancel:
            at = self.now_ts() + rng.uniform(0, max(60.0, (due - now).total_seconds() + 300))
            self.schedule(at, "cancel", reminder.id)
        if rng.random() < p.reschedule:
            at = self.now_ts() + rng.uniform(0, max(60.0, (due - now).total_seconds() + 120))
            self.schedule(at, "reschedule", reminder.id)
        return reminder.id

    def _due_offset(self) -> float:
        """Due times around the 900 s window: overdue, exactly at and beside the boundary, inside,
        beyond (dispatched from the index), and days ahead."""
        rng = self.rng
        u = rng.random()
        if u < 0.10:
            return rng.uniform(-600, 0)
        if u < 0.13:
            return float(
                rng.choice((SQS_MAX_DELAY_SECONDS - 1, SQS_MAX_DELAY_SECONDS, SQS_MAX_DELAY_SECONDS + 1))
            )
        if u < 0.45:
            return rng.uniform(0, SQS_MAX_DELAY_SECONDS)
        if u < 0.85:
            return rng.uniform(SQS_MAX_DELAY_SECONDS, 4 * 3600)
        if u < 0.97:
            return rng.uniform(4 * 3600, 24 * 3600)
        return rng.uniform(24 * 3600, 3 * 24 * 3600)

    def cancel(self, rid: str) -> None:
        try:
            self.service.cancel(rid)
        except (ConflictError, StoreConflictError):
            self.injected["cancel_too_late"] += 1
            return
        self.injected["cancel"] += 1
        self.tracks[rid].canceled = True

    def reschedule(self, rid: str, offset: float) -> None:
        due = self.clock.now() + timedelta(seconds=offset)
        try:
            self.service.reschedule(rid, due)
        except (ConflictError, StoreConflictError):
            self.injected["reschedule_too_late"] += 1
            return
        self.injected["reschedule"] += 1
        self.tracks[rid].due = due
        self._watch_due(rid, due)

    # -- when the dispatcher must run ------------------------------------------------------------
    def _watch_due(self, rid: str, due: datetime) -> None:
        """Remember when a reminder waiting in the due index enters the dispatch horizon."""
        enters = due.timestamp() - HORIZON_SECONDS
        if enters > self.now_ts():
            heapq.heappush(self.dispatch_targets, (enters, next(self.seq), rid))
            self.next_tick = min(self.next_tick, max(self.last_tick + 60, enters))

    def _next_dispatch_target(self, now: float) -> float | None:
        while self.dispatch_targets:
            enters, _, rid = self.dispatch_targets[0]
            track = self.tracks[rid]
            if enters <= now or track.canceled or track.due.timestamp() - HORIZON_SECONDS != enters:
                heapq.heappop(self.dispatch_targets)
                continue
            return enters
        return None

    # -- the event source mappings -----------------------------------------------------------------------
    def invoke(
        self, queue: str, received: list[Received], *, nested: bool = False, worker: Deliverer | None = None
    ) -> None:
        from reminders.handlers.delivery import email_handler, webhook_handler

        handler = webhook_handler if queue == "webhook" else email_handler
        previous = (self.current, self.batch, self.batch_queue, self.faults_on)
        chosen = worker or self.rng.choice(self.workers)
        self.current = chosen
        if nested:
            self.faults_on = False
        else:
            self.dead = False
            self.batch, self.batch_queue = received, queue
        self.report.invocations[f"{queue}{'-race' if nested else ''}"] += 1
        try:
            response = handler(
                sqs_event_records(received, f"arn:aws:sqs:us-east-1:111111111111:{queue}"), _context()
            )
        except Crash:
            # Nothing deleted, nothing reported: the batch comes back after its visibility timeout.
            self.workers[self.workers.index(chosen)] = self._new_worker()
            return
        finally:
            self.current, self.batch, self.batch_queue, self.faults_on = previous
            if not nested:
                self.dead = False
        failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        if not nested and self.faults_on and self.chance("crash_before_ack", self.plan.crash_before_ack):
            return
        acked = [r.receipt_handle for r in received if r.message_id not in failed]
        for start in range(0, len(acked), 10):
            self.sqs.delete_batch(queue, acked[start : start + 10])

    def drain(self, queue: str) -> None:
        for _ in range(100_000):
            received = self.sqs.receive(queue, 10)
            if not received:
                return
            if queue == "dispatch":
                self.invoke_dispatch(received)
            else:
                self.invoke(queue, received)
        raise RuntimeError(f"{queue}: no end to visible messages")  # pragma: no cover

    def invoke_dispatch(self, received: list[Received]) -> None:
        from reminders.handlers.dispatcher import shard_handler

        self.dead = False
        self.report.invocations["dispatch-shard"] += 1
        try:
            response = shard_handler(
                sqs_event_records(received, "arn:aws:sqs:us-east-1:111111111111:dispatch"), _context()
            )
        except Crash:
            self.dispatcher = self._new_dispatcher()  # a new instance takes over after the lease
            return
        finally:
            self.dead = False
        failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        acked = [r.receipt_handle for r in received if r.message_id not in failed]
        if acked:
            self.sqs.delete_batch("dispatch", acked)

    def tick(self) -> None:
        from reminders.handlers.dispatcher import tick_handler

        self.report.invocations["dispatch-tick"] += 1
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "111111111111",
            "time": iso(self.clock.now()),
            "region": "us-east-1",
            "resources": [],
            "detail": {},
        }
        tick_handler(event, _context())

    def ses_event(self, payload: tuple[dict[str, str], str]) -> None:
        from reminders.handlers.ses_events import handler

        tags, message_id = payload
        self.report.invocations["ses-event"] += 1
        item = self.store.items.get(tags.get("reminder_id", ""))
        d = item["dl"].get(tags.get("channel_id", "")) if item else None
        if d is not None and d["st"] in ("canceled", "dead_letter"):
            # The delivery moved on before SES's event came: cancelled, or dead-lettered meanwhile
            self.injected[f"ses_event_for_{d['st']}"] += 1
        handler(
            {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Email Sent",
                "source": "aws.ses",
                "account": "111111111111",
                "time": iso(self.clock.now()),
                "region": "us-east-1",
                "resources": [],
                "detail": {
                    "eventType": "Send",
                    "mail": {
                        "messageId": message_id,
                        "timestamp": iso(self.clock.now()),
                        "tags": {k: [v] for k, v in tags.items()},
                    },
                },
            },
            _context(),
        )

    # -- the run --------------------------------------------------------------------------------------
    def run(self) -> Report:
        rng, p = self.rng, self.plan
        start = self.now_ts()
        creation_span = 2 * 3600.0
        for i in range(self.n):
            self.schedule(start + rng.uniform(0, creation_span), "create", i)
        for _ in range(p.dispatcher_pauses):
            self.schedule(start + rng.uniform(0, 4 * 3600), "pause", rng.uniform(10, 60) * 60)
        for _ in range(p.operator_redrives):  # after a fix: every DLQ message back to its source queue
            self.schedule(start + rng.uniform(3600, 26 * 3600), "redrive", None)
        for k in range(p.shard_changes):  # up, then back down (the high-water mark keeps both read)
            self.schedule(
                start + rng.uniform(0, creation_span), "shards", SHARDS * 2 if k % 2 == 0 else SHARDS
            )
        for _ in range(p.rotations):  # issue 15: while reminders are created, sent and retried
            self.schedule(start + self.endpoint_rng.uniform(600, creation_span + 4 * 3600), "rotate", None)
        for _ in range(p.endpoint_outages):
            down_at = start + rng.uniform(0, creation_span)
            self.outages[f"hooks-{rng.randrange(50)}.example.com"].append(
                (down_at, down_at + rng.uniform(600, 3600))
            )
        ses_pause_at = start + rng.uniform(0, 3 * 3600)
        self.ses_paused = (ses_pause_at, ses_pause_at + p.ses_pause_minutes * 60)
        self.injected["ses_pause_window_minutes"] += p.ses_pause_minutes

        self.next_tick = start
        paused_until = 0.0
        next_check = start + 600
        deadline = start + creation_span + 3 * 24 * 3600 + 30 * 3600
        open_ids: set[str] = set()
        while True:
            now = self.now_ts()
            while self.events and self.events[0][0] <= now:
                _, _, kind, payload = heapq.heappop(self.events)
                if kind == "create":
                    open_ids.add(self.create(payload))
                elif kind == "cancel":
                    self.cancel(payload)
                elif kind == "reschedule":
                    self.reschedule(payload, rng.uniform(-120, 6 * 3600))
                elif kind == "pause":
                    paused_until = max(paused_until, now + payload)
                    self.injected["dispatcher_pause"] += 1
                elif kind == "ses_event":
                    self.ses_event(payload)
                elif kind == "redrive":
                    self.operator_redrive()
                elif kind == "shards":
                    self.change_shards(payload)
                elif kind == "rotate":
                    self.rotate(payload)
                elif kind == "switch":
                    self.switch(payload)
                elif kind in ("receipt_send", "receipt_resend"):
                    self.send_receipt(payload, again=kind == "receipt_resend")
                elif kind == "receipt_stream":
                    self.receipt_stream(payload)
            if now >= self.next_tick:
                if now >= paused_until:
                    self.tick()
                # Every minute while reminders enter the dispatch horizon; otherwise at least every
                # 15 minutes (the watchdog). Idle minutes are no-ops: skipping them is a short pause.
                self.last_tick = now
                target = self._next_dispatch_target(now)
                self.next_tick = max(now + 60, min(now + IDLE_TICK_SECONDS, target or math.inf))
            self.drain("dispatch")
            self.drain("webhook")
            self.drain("email")
            if now >= next_check:
                next_check = now + 600
                open_ids = {rid for rid in open_ids if not self._terminal(rid)}
                pending = any(
                    e[2]
                    in ("create", "ses_event", "redrive", "receipt_send", "receipt_resend", "receipt_stream")
                    for e in self.events
                )
                queued = any(self.sqs.size(q) for q in ("webhook", "email"))
                if (not open_ids and not pending and not queued) or now > deadline:
                    break
            candidates = [self.next_tick, next_check]
            if self.events:
                candidates.append(self.events[0][0])
            for q in ("dispatch", "webhook", "email"):
                v = self.sqs.next_visible_at(q)
                if v is not None:
                    candidates.append(v)
            nxt = max(now + 0.001, min(candidates))
            self.clock.advance(nxt - now)
        self.report.virtual_hours = (self.now_ts() - start) / 3600
        return self.report

    # -- operator actions ------------------------------------------------------------------------
    def operator_redrive(self) -> None:
        """Redrive every DLQ message to its source queue (console "redrive to source")."""
        self.injected["operator_redrive"] += 1
        for ch in ("webhook", "email"):
            while True:
                got = self.sqs.receive(f"{ch}-dlq", 10, visibility_timeout=600)
                if not got:
                    break
                for r in got:
                    self.redriven[r.attributes.get("delivery_key", "")].append(self.now_ts())
                    self.sqs.send(ch, r.body, attributes=dict(r.attributes))
                    self.injected["operator_redriven_message"] += 1
                self.sqs.delete_batch(f"{ch}-dlq", [r.receipt_handle for r in got])

    def change_shards(self, shards: int) -> None:
        """An operator changes ``due_shards`` (a redeploy): new reminders spread over the new count."""
        self.injected["operator_shard_change"] += 1
        self.shards = shards
        # A redeploy: new API instances (each raises the shard high-water mark before its first
        # entry). Changing the old instance's count in place skipped that (it had raised it once,
        # for the old count): entries in the shards above were never dispatched (HOT, seed 17).
        self.service = self.world.reminders(
            queues=DuplicatingQueues(self.queues, self),
            check_destination=self._check_destination,
            shards=shards,
        )
        self.dispatcher.shards = shards

    #: Hook for operator corrections (issue 18: PATCH under If-Match): schedule ("correct", rid)
    #: events and handle them in ``run`` (secret rotations, issue 15, are ``rotate`` / ``switch``).

    def _terminal(self, rid: str) -> bool:
        item = self.store.items.get(rid)
        if item is None:
            return False
        return all(d["st"] in ("delivered", "dead_letter", "canceled") for d in item["dl"].values())


# -- the verdict ---------------------------------------------------------------------------------------
def _explain(previous: Attempted, redrives: Sequence[float] = (), at: float = math.inf) -> str | None:
    if any(previous.at <= t <= at for t in redrives):
        return "operator_redrive"
    if previous.crashed_after:
        return "crash_after_send"
    if previous.label in RETRY_LABELS:
        return previous.label
    return None


#: Issue 17: zones with DST in both hemispheres, a half-hour and a 45-minute offset; windows that are
#: wide (so a deferral stays well inside the maximum age), one across midnight.
_ZONES = ("Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "Pacific/Chatham", "UTC")
_WINDOWS = (("06:00", "23:30"), ("20:00", "18:00"), ("00:00", "21:00"))


def _local_time_fields(rng: random.Random, plan: FaultPlan, due: datetime) -> tuple[datetime, dict[str, Any]]:
    """Maybe make the reminder a local-time one (the wall time ``due`` shows in a random zone, at
    whole seconds, resolved by the DST rule) and maybe give it a send window."""
    fields: dict[str, Any] = {}
    if rng.random() < plan.local_time:
        name = rng.choice(_ZONES)
        wall = localtime.local_wall(due, localtime.zone(name)).replace(microsecond=0)
        due = localtime.resolve(wall, localtime.zone(name)).instant
        fields.update(due_local=localtime.format_wall(wall), time_zone=name)
    if rng.random() < plan.send_window:
        fields["send_window"] = localtime.SendWindow.parse(*rng.choice(_WINDOWS))
        fields.setdefault("time_zone", rng.choice(_ZONES))
    return due, fields


def check(world: World) -> Report:
    rep = world.report
    rep.reminders = len(world.tracks)
    rep.injected = world.injected
    rep.telemetry = Counter(
        {
            k: v
            for k, v in world.telemetry.counts.items()
            if k.split(".")[0]
            in (
                "duplicate_suppressed",
                "stale_skipped",
                "lease_expired",
                "lease_busy",
                "watchdog_requeued",
                "message_renewed",
                "configuration_hold",
                "provider_event_reconciled",
                "dispatched",
                "early_message",
                "deferred_quiet_hours",
                "endpoint_transition",
                "endpoint_probe",
                "endpoint_parked",
            )
        }
    )
    v = rep.violations
    rep.unconfirmed_wait_seconds = world.policy.unconfirmed_send_wait_seconds
    for rid, stored in world.store.items.items():
        size = item_size(stored)
        rep.max_item_bytes = max(rep.max_item_bytes, size)
        if size >= DYNAMODB_ITEM_LIMIT_BYTES:
            v.append(f"{rid}: ledger item of {size} bytes (DynamoDB refuses 400 KB)")
    dead_keys: dict[str, str] = {}
    for rid, track in world.tracks.items():
        item = world.store.items.get(rid)
        if item is None:
            v.append(f"reminder {rid} missing from the ledger")
            rep.lost += len(track.channels)
            continue
        for cid, category in track.channels.items():
            d = item["dl"][cid]
            state, key = d["st"], d["k"]
            history = [a.to_dict() for a in decode_history(d.get("h", []))]
            # The lines that decided a cycle: the attempts and the gate's dead letters (issue 28: a
            # deadline or the maximum age ends it before any attempt, a "gate" line).
            attempts = [h for h in history if h.get("event") in ("attempt", "gate")]
            # Every dead-letter cycle, not only the last state: a redrive may have delivered it since.
            for h in attempts:
                if h.get("decision") != "dead_letter":
                    continue
                cycle_reason = str(h.get("detail"))
                if (
                    (cycle_reason == "permanent_failure" and category not in ("gone", "bounce"))
                    or (cycle_reason == "invalid_destination" and category != "rebind")
                    or (cycle_reason == "endpoint_disabled" and category != "flaky")
                ):
                    v.append(
                        f"{key}: {cycle_reason} without an injected permanent fault (a dead-letter cycle)"
                    )
            if state == "delivered":
                rep.delivered += 1
                if not any(h.get("decision") == "delivered" for h in history):
                    v.append(f"{key}: delivered without an attempt or event explaining it")
                if cid.startswith("webhook") and world.accepted[key] != 1:
                    v.append(f"{key}: delivered but the receiver accepted {world.accepted[key]}")
                if cid.startswith("email") and not any(s.accepted for s in world.ses_sends[key]):
                    v.append(f"{key}: delivered but SES never accepted it")
            elif state == "dead_letter":
                reason = d.get("dr")
                rep.dead_letters[str(reason)] += 1
                dead_keys[key] = str(reason)
                last = attempts[-1] if attempts else {}
                if last.get("decision") != "dead_letter" or last.get("detail") != reason:
                    v.append(f"{key}: dead letter {reason} not explained by its history")
                tried = world.posts[key] if cid.startswith("webhook") else world.ses_sends[key]
                if reason == "permanent_failure":
                    if category not in ("gone", "bounce"):
                        v.append(f"{key}: permanent_failure without an injected permanent fault")
                elif reason == "invalid_destination":
                    if category != "rebind":
                        v.append(f"{key}: invalid_destination without an injected SSRF target")
                elif reason in ("attempts_exhausted", "expired", "endpoint_disabled"):
                    # endpoint_disabled: held past the disable limit, which only an endpoint that
                    # never answers reaches (the shared hosts' outages are shorter).
                    if reason == "endpoint_disabled" and category != "flaky":
                        v.append(f"{key}: endpoint_disabled without an always-failing endpoint ({category})")
                    if any(t.accepted for t in tried):
                        v.append(f"{key}: {reason} although the provider accepted a send")
                    if category in ("flaky", "throttled"):
                        rep.dead_letters_all_failed_subset += 1
                else:
                    v.append(f"{key}: unexpected dead-letter reason {reason}")
            elif state == "canceled":
                rep.canceled += 1
                if not track.canceled:
                    v.append(f"{key}: canceled, but no cancel was requested")
            else:
                rep.lost += 1
                v.append(f"{key}: lost in state {state} (next attempt {d.get('na')}, lease {d.get('lu')})")
            if cid.startswith("email") and state == "delivered":
                sends = world.ses_sends[key]
                first = next((i for i, s in enumerate(sends) if s.accepted), None)
                if first is not None and any(s.label in AMBIGUOUS_UNACCEPTED for s in sends[:first]):
                    # the cost of the unconfirmed wait: SES had not taken it, the re-send waited
                    rep.email_ambiguous_waits += 1
                    due_ts = track.due.timestamp()
                    rep.email_lateness_after_ambiguous.append(sends[first].at - due_ts)
                    ambiguous_at = next(s.at for s in sends if s.label in AMBIGUOUS_UNACCEPTED)
                    rep.email_wait_after_ambiguous.append(sends[first].at - ambiguous_at)
                    if sends[0].at - due_ts <= ON_TIME_SECONDS:
                        rep.email_lateness_on_time_ambiguous.append(sends[first].at - due_ts)
            if category in ("gone", "bounce", "rebind") and state == "delivered":
                v.append(f"{key}: delivered to a target that only ever failed permanently")

    _check_receipts(world)

    # Raw POSTs: each one beyond a key's first is explained by the attempt before it.
    for key, posts in world.posts.items():
        rep.webhook_posts += len(posts)
        accepted_before = False
        for i, post in enumerate(posts):
            if i > 0:
                why = _explain(posts[i - 1], world.redriven.get(key, ()), post.at)
                if why is None:
                    rep.unexplained_posts += 1
                    v.append(f"{key}: POST #{i + 1} not explained (previous: {posts[i - 1].label})")
                else:
                    rep.extra_posts_explained[why] += 1
                    if accepted_before:
                        root = next(p for p in posts if p.accepted)
                        cause = "crash_after_send" if root.crashed_after else root.label
                        rep.posts_after_acceptance[cause] += 1
            accepted_before = accepted_before or post.accepted
    rep.webhook_accepted_keys = sum(1 for n in world.accepted.values() if n)
    rep.duplicate_accepted_sends = sum(n - 1 for n in world.accepted.values() if n > 1)
    if rep.duplicate_accepted_sends:
        v.append(f"{rep.duplicate_accepted_sends} duplicate accepted webhook sends")

    # Email: SES honours no key; duplicates are counted (and each must follow an ambiguity).
    for key, sends in world.ses_sends.items():
        accepted = [s for s in sends if s.accepted]
        rep.email_sends += len(accepted)
        for i, s in enumerate(sends):
            if not s.accepted or i == 0 or not any(t.accepted for t in sends[:i]):
                continue
            rep.email_duplicates += 1
            why = _explain(sends[i - 1], world.redriven.get(key, ()), s.at)
            previous_accepted = [t for t in sends[:i] if t.accepted][-1]
            cause = "crash_after_send" if previous_accepted.crashed_after else previous_accepted.label
            if cause not in ("crash_after_send", "timeout_after_accept") or why is None:
                rep.unexplained_email_duplicates += 1
                v.append(f"{key}: email resent without an ambiguous fault (previous: {cause})")
            else:
                rep.email_duplicates_by_cause[cause] += 1

    # Every dead letter also sits in its channel's DLQ with its reason.
    in_dlq: dict[str, str] = {}
    for q in ("webhook-dlq", "email-dlq"):
        while True:
            got = world.sqs.receive(q, 10, visibility_timeout=43200)
            if not got:
                break
            rep.dlq_messages += len(got)
            for r in got:
                in_dlq[r.attributes.get("delivery_key", "")] = r.attributes.get("reason", "")
    for key, reason in dead_keys.items():
        if in_dlq.get(key) != reason:
            v.append(f"{key}: dead letter {reason} has no DLQ message with that reason")
    # A DLQ message whose delivery is no longer a dead letter: the provider's evidence of an earlier
    # acceptance (a stale worker's 2xx, a late send event) turned it into delivered, or a person
    # cancelled the dead letter; a redrive of that message is acknowledged unsent. Anything else in
    # a DLQ is unexplained.
    settled = {
        d["k"]
        for item in world.store.items.values()
        for d in item["dl"].values()
        if d["st"] in ("delivered", "canceled")
    }
    for key in set(in_dlq) - set(dead_keys):
        if key in settled:
            rep.dlq_superseded += 1
        else:
            v.append(f"{key}: DLQ message for a delivery that is not dead-lettered")
    return rep


def _check_receipts(world: World) -> None:
    """Issue 19: the standing receipt of each delivery is the latest of those stored for it (the
    merge is order-insensitive), each event id is merged once, and a delivery the ledger ever
    recorded delivered is delivered."""
    from reminders.domain.receipts import Receipt, ReceiptStatus, decode

    rep, v = world.report, world.report.violations
    stored: dict[str, list[Receipt]] = defaultdict(list)
    where: dict[str, tuple[str, str]] = {}
    for (pk, sk), item in world.receipt_log.items.items():
        key = pk.removeprefix("RCPT#")
        stored[key].append(Receipt(sk.removeprefix("E#"), ReceiptStatus(item["st"]), item["et"]))
        where[key] = (item["rid"], item["cid"])
    for key, receipts in stored.items():
        rid, cid = where[key]
        d = world.store.items[rid]["dl"][cid]
        if d["k"] != key:
            continue  # the delivery moved on (its key changed): the merger reports it unmatched
        expected = max(receipts, key=Receipt.order_key)
        standing = decode(d.get("rr"))
        if standing is None or standing.order_key() != expected.order_key():
            rep.receipt_standing_wrong += 1
            v.append(f"{key}: standing receipt {standing} is not the latest stored {expected}")
        merged = Counter(a.receipt for a in decode_history(d.get("h", [])) if a.event == "receipt")
        twice = sum(n - 1 for n in merged.values() if n > 1)
        if twice:
            rep.receipts_merged_twice += twice
            v.append(f"{key}: {twice} receipt(s) merged more than once")
    for rid, row in world.store.items.items():
        for cid, d in row["dl"].items():
            if d["st"] != "delivered" and world._recorded_delivered(rid, cid) and d["st"] != "canceled":
                v.append(f"{d['k']}: recorded delivered, now {d['st']} (a regression)")


# -- entry points ---------------------------------------------------------------------------------------
def run(seed: int, n: int, plan: FaultPlan | None = None) -> Report:
    """Run the fault run and check the invariant (importable: tests call this)."""
    started = time.perf_counter()
    world = World(seed, n, plan or FaultPlan())
    _SimConnection.world = world
    with ExitStack() as stack, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stack.enter_context(_patched(webhook_adapter, "_PinnedHTTPConnection", _SimConnection))
        stack.enter_context(_patched(webhook_adapter, "_PinnedHTTPSConnection", _SimConnection))
        stack.enter_context(_patched(runtime, "deliverer", lambda: world.current))
        stack.enter_context(_patched(runtime, "queues", lambda: world.queues))
        stack.enter_context(_patched(runtime, "dispatcher", lambda: world.dispatcher))
        stack.enter_context(_patched(runtime, "reconciler", lambda: world.reconciler))
        stack.enter_context(_patched(runtime, "receipt_merger", lambda: world.receipt_merger))
        # Receipt signatures are checked against the virtual clock (Standard Webhooks' 5 min tolerance).
        stack.enter_context(_patched(standardwebhooks.webhooks, "datetime", _virtual_datetime(world)))
        # The endpoint lookup cache's seconds are the virtual clock's (a sender re-reads within 5 s).
        stack.enter_context(_patched(endpoints_service, "time", SimpleNamespace(monotonic=world.now_ts)))
        # One virtual clock and one "current worker" for the whole world: a batch's records run one
        # after another here (seeded, reproducible); their concurrency is proven by
        # tests/integration/test_concurrent_records.py.
        from reminders.handlers import delivery as delivery_handler

        stack.enter_context(_patched(delivery_handler, "record_concurrency", lambda: 1))
        try:
            world.run()
        finally:
            _SimConnection.world = None
    report = check(world)
    report.wall_seconds = time.perf_counter() - started
    return report


#: The ambiguous-email waits the residual curve compares (seconds).
CURVE_WAITS_SECONDS = (0.0, 15.0, 30.0, 120.0)


def residual_curve(seed: int, n: int, reports: dict[float, Report] | None = None) -> dict[float, Report]:
    """The fault run at each wait of ``CURVE_WAITS_SECONDS`` (reusing any report already made)."""
    out = dict(reports or {})
    for wait in CURVE_WAITS_SECONDS:
        if wait not in out:
            out[wait] = run(seed, n, replace(FaultPlan(), unconfirmed_send_wait_seconds=wait))
    return out


def format_curve(reports: dict[float, Report], default_wait: float) -> str:
    model = ses_latency
    lines = [
        "email residual against the ambiguous-email wait (unconfirmed_send_wait_seconds);"
        f" SES send-event model: median {model.NORMAL_MEDIAN_SECONDS:g} s (log-normal sigma"
        f" {model.NORMAL_SIGMA:g}), {model.RETRIED_FRACTION:.0%} retried by EventBridge within 1 h,"
        f" {model.LOST_FRACTION:.1%} lost (ses_latency.py)",
        f"  {'wait s':>6} {'P(ev>w)':>8} {'sends':>6} {'dups':>5} {'dup %':>6} {'waited':>6}"
        f" {'mean late s':>11} {'p99 late s':>10} {'p99 added':>9} {'p99 on-time':>11}  invariant",
    ]
    for wait, r in sorted(reports.items()):
        late = sorted(r.email_lateness_after_ambiguous)
        mean = sum(late) / len(late) if late else 0.0
        p99 = late[min(len(late) - 1, int(0.99 * len(late)))] if late else 0.0
        mark = " (default)" if wait == default_wait else ""
        lines.append(
            f"  {wait:>6g} {model.later_than(wait):>8.2%} {r.email_sends:>6} {r.email_duplicates:>5}"
            f" {r.email_duplicate_percent:>6.2f} {r.email_ambiguous_waits:>6} {mean:>11.0f} {p99:>10.0f}"
            f" {_p99(r.email_wait_after_ambiguous):>9.0f} {_p99(r.email_lateness_on_time_ambiguous):>11.0f}"
            f"  {'holds' if r.ok else 'VIOLATED'}{mark}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reminders_ops.faultrun", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-n", type=int, default=5000, help="number of reminders")
    parser.add_argument(
        "--curve", action="store_true", help="also run each wait of the email residual curve and print it"
    )
    args = parser.parse_args(argv)
    report = run(args.seed, args.n)
    print(report.format())
    ok = report.ok
    if args.curve:
        default = RetryPolicy().unconfirmed_send_wait_seconds
        curve = residual_curve(args.seed, args.n, {default: report})
        print(format_curve(curve, default))
        ok = ok and all(r.ok for r in curve.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
