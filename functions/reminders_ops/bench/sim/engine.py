"""A discrete-event simulator of the AWS deployment on the in-memory backends and a virtual clock.

The real services run unchanged (``Reminders.create``, ``Dispatcher.tick``/``run_shard``,
``Deliverer.process``); only concurrency is simulated. The code runs sequentially in one process:
each record of a batch is one event at its virtual start time, during which every AWS call and the
provider's answer move the clock by their modelled latency; the next record of that invocation
starts when it ends. What is modelled around the code:

* the per-minute EventBridge rule invoking the tick function (which fans out one dispatch message
  per shard) and the dispatch queue's event source invoking shard workers in parallel;
* SQS event source mappings: pollers receive batches (batch size, ``MaximumBatchingWindowInSeconds``
  gathering), invoke the function synchronously, delete what was not reported failed (the handler
  has already set a failed record's visibility), and scale like Lambda does for SQS: 5 concurrent
  batches at first, up to +300 per minute while messages wait, capped at ``MaximumConcurrency``,
  back to 5 after a minute idle;
* execution environments: a new one pays a cold start (billed), and keeps its worker id;
* the provider: latency, rate limit R with 429 + Retry-After, a fraction p of transient failures.
"""

from __future__ import annotations

import heapq
import itertools
import json
import random
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import Received
from reminders.adapters.ratelimit_store import MemoryRateSlots
from reminders.domain.errors import MalformedMessageError
from reminders.domain.ratelimit import SharedRateLimiter
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import DUE_ATTRIBUTE
from reminders.domain.states import DeliveryState
from reminders.services.deliver import Deliverer, DeliveryMessage, MessageContext, batch_behind_seconds
from reminders.services.dispatch import Dispatcher, ShardReport
from reminders.services.intents import NewReminder

from reminders_ops.world import InMemoryWorld

from .meter import Meter, MeteredSqs, MeteredStore, SimTelemetry
from .model import Deployment, Latency, SimClock
from .receiver import SimReceiver

_CALL, _TICK, _POLL, _RECORD, _FINISH, _SCALE = range(6)


class _MeteredRateSlots(MemoryRateSlots):
    """The limiter's record: each try is one conditional UpdateItem (latency and a write unit)."""

    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self.meter = meter

    def advance(self, key: str, now: float, next_at: float) -> tuple[bool, float]:
        self.meter.call("dynamodb", "UpdateItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1.0)
        return super().advance(key, now, next_at)

    def reserve(self, key: str, now: float, latest: float, interval: float) -> tuple[bool, float]:
        self.meter.call("dynamodb", "UpdateItem", self.meter.latency.ddb_write)
        self.meter.add_units("WRU", 1.0)
        return super().reserve(key, now, latest, interval)


TERMINAL_OUTCOMES = frozenset(
    {
        "delivered",
        "dead_lettered",
        "recorded_after_conflict_delivered",
        "recorded_after_conflict_dead_letter",
    }
)
START_BATCHES = 5  # an SQS event source starts with five concurrent batches
SCALE_PER_SECOND = 300 / 60  # and adds up to 300 per minute while messages wait
IDLE_RESET_SECONDS = 60.0
#: Physical function names as CloudFormation generates them (64 characters): the worker id that
#: ends up in every ledger record is "<function name>:<12 hex>", so item sizes are realistic.
FUNCTION_NAMES = {
    "webhook": "RemindersStack-DeliveryWebhookDeliveryFunctionAE20B3-Xk7P2mQ9rT4v",
    "email": "RemindersStack-DeliveryEmailDeliveryFunction7C263AD0-Hq3Lm8Zs1Nw6",
    "shard": "RemindersStack-DispatcherDispatchWorkerFunctionBFE7-Jd5Rt2Wy8Kp3",
    "tick": "RemindersStack-DispatcherDispatcherFunction6A269B5-Gf6Vb9Xc2Mn7",
}


class _MeteredDispatcher(Dispatcher):
    """The real Dispatcher; its watchdog pass is billed to the ``watchdog`` step."""

    meter: Meter

    def _watch(self, *args: Any, **kwargs: Any) -> Any:
        with self.meter.stepping("watchdog"):
            return super()._watch(*args, **kwargs)


@dataclass
class _Container:
    n: int
    service: Any  # Deliverer or Dispatcher
    warm: bool = False


@dataclass
class _Esm:
    function: str  # webhook | email | shard
    queue: str
    step: str  # consume | dispatch
    batch_size: int
    max_concurrency: int
    window: float
    lanes: int
    timeout: float
    memory_mb: int
    allowed: float = START_BATCHES
    busy: int = 0
    peak: int = 0
    buffer: list[Received] = field(default_factory=list)
    deadline: float | None = None
    wake_at: float | None = None
    saturated: bool = False
    scale_pending: bool = False
    last_active: float = 0.0
    free: list[_Container] = field(default_factory=list)
    containers: int = 0
    cold_starts: int = 0
    invocations: int = 0


@dataclass
class _Invocation:
    esm: _Esm
    container: _Container
    start: float
    exec_start: float
    init: float
    lanes: list[deque[Received]]
    lane_ends: list[float] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    watch_seconds: float = 0.0
    behind: float = 0.0  # how late its most overdue record was at the start (the handler's view)


@dataclass
class SimResult:
    """What a run produced: ledger states, receiver statistics, throughput, calls and units."""

    created: int
    ledger: Counter[str]
    outcomes: Counter[str]
    done_times: list[float]
    lateness: list[float]
    receiver: dict[str, int]
    shard_dispatched: Counter[int]
    shard_runs: int
    peak_concurrency: dict[str, int]
    cold_starts: dict[str, int]
    telemetry: Counter[str]
    errors: list[str]

    @property
    def lost(self) -> int:
        """Deliveries not terminal at the end (neither delivered nor dead-lettered nor canceled)."""
        return sum(n for s, n in self.ledger.items() if s not in ("delivered", "dead_letter", "canceled"))


class Simulation:
    def __init__(
        self,
        *,
        start: datetime,
        deployment: Deployment | None = None,
        latency: Latency | None = None,
        rate_per_second: float | None = None,
        failure_rate: float = 0.0,
        policy: RetryPolicy | None = None,
        seed: int = 7,
        lanes: int | None = None,
        size_every: int = 1,
        destination_rate: float | None = None,
        tick_offset: float | None = None,
        endpoint_health: bool = True,
    ) -> None:
        self.endpoint_health = endpoint_health  # issue 16: hold, probe, resume (each container's own view)
        self.deployment = d = deployment or Deployment.from_template()
        lanes = d.record_concurrency if lanes is None else lanes  # the handler's thread pool
        self.latency = latency or Latency()
        self.clock = SimClock(start.timestamp())
        self.meter = Meter(self.clock, self.latency)
        self.memory = MemoryReminderStore()
        # The one in-memory world (reminders_ops/world.py): the stack's queues on a metered SQS.
        self.world = InMemoryWorld.build(
            clock=self.clock,
            telemetry=SimTelemetry(),
            sqs=MeteredSqs(self.clock, self.meter),
            store=MeteredStore(self.memory, self.meter, size_every=size_every),
            policy=policy,
            shards=d.shards,
            visibility_timeout=d.visibility_timeout,
            max_receive_count=d.max_receive_count,
            dispatch_visibility_timeout=d.dispatch_visibility_timeout,
            dispatch_max_receive_count=d.dispatch_max_receive_count,
        )
        self.sqs: MeteredSqs = self.world.sqs  # type: ignore[assignment]
        self.queues, self.store = self.world.queues, self.world.store
        self.telemetry: SimTelemetry = self.world.telemetry
        self.policy = self.world.policy
        self.seed = seed
        self.destination_rate = destination_rate
        # Issue 15: one rate per destination shared by every consumer instance (the stack's GCRA
        # record, here on the in-memory slots): all instances together stay within the rate.
        self.rate_slots = _MeteredRateSlots(self.meter)
        self.receiver = SimReceiver(
            self.clock, self.latency, rate_per_second=rate_per_second, failure_rate=failure_rate, seed=seed
        )
        self.reminders = self.world.reminders()
        self.tick_dispatcher = self._dispatcher(0, "tick")
        self.esms = {
            name: _Esm(
                name,
                name,
                "consume",
                d.delivery_batch_size,
                d.delivery_max_concurrency,
                d.delivery_batching_window,
                lanes,
                d.delivery_timeout,
                d.memory_mb.get("delivery", 256),
            )
            for name in ("webhook", "email")
        }
        self.esms["dispatch"] = _Esm(
            "shard",
            "dispatch",
            "dispatch",
            1,
            d.dispatch_max_concurrency,
            0.0,
            1,
            d.dispatch_timeout,
            d.memory_mb.get("shard", 256),
        )
        for esm in self.esms.values():
            esm.allowed = min(START_BATCHES, esm.max_concurrency)
        self.sqs.on_visible = self._on_visible
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = itertools.count()
        self.created = 0
        self.done = 0
        self.done_times: list[float] = []
        self.outcomes: Counter[str] = Counter()
        self.shard_dispatched: Counter[int] = Counter()
        self.shard_reports: list[ShardReport] = []
        self.shard_seconds: defaultdict[int, float] = defaultdict(float)  # virtual s per shard (dispatch)
        self.shard_read_units: defaultdict[int, float] = defaultdict(float)
        self.errors: list[str] = []
        self._tick_rng = random.Random(seed + 1)
        self._tick_offset = tick_offset
        minute = (int(self.clock.t) // 60 + 1) * 60
        self._push(minute + self._next_offset(), _TICK, None)

    # -- wiring ------------------------------------------------------------------------------------
    def _dispatcher(self, n: int, function: str) -> Dispatcher:
        disp = _MeteredDispatcher(
            store=self.store,
            queues=self.queues,
            clock=self.clock,
            telemetry=self.telemetry,
            shards=self.deployment.shards,
            worker=f"{FUNCTION_NAMES[function]}:{n:012x}",
        )
        disp.meter = self.meter
        return disp

    def _deliverer(self, function: str, n: int) -> Deliverer:
        d = self.deployment
        kwargs: dict[str, Any] = {}
        if self.destination_rate:
            rate = self.destination_rate
            kwargs["limiter"] = SharedRateLimiter(self.rate_slots, lambda _bucket: rate)
        rng = random.Random(self.seed * 100_003 + n)
        return Deliverer(
            store=self.store,
            queues=self.queues,
            senders={"webhook": self.receiver, "email": self.receiver},
            clock=self.clock,
            policy=self.policy,
            telemetry=self.telemetry,
            worker=f"{FUNCTION_NAMES[function]}:{rng.getrandbits(48):012x}",
            max_receive_count=d.max_receive_count,
            rng=rng,
            health=self.world.health_guard() if self.endpoint_health else None,
            **kwargs,
        )

    # -- public ------------------------------------------------------------------------------------
    def create(self, cmd: NewReminder) -> bool:
        """Create through the real service at the current virtual time (billed to ``create``). The
        API runs beside everything else: its calls' latency does not move the shared clock."""
        t = self.clock.t
        with self.meter.stepping("create"):
            _, created = self.reminders.create(cmd)
        self.clock.t = t
        self.created += created
        return created

    def at(self, t: float, fn: Callable[[], Any]) -> None:
        """Run ``fn`` at virtual time ``t`` (e.g. a creation arriving from the API)."""
        self._push(t, _CALL, fn)

    def run(self, until: float, stop: Callable[[], bool] | None = None) -> None:
        heap = self._heap
        while heap and heap[0][0] <= until:
            t, _, kind, obj = heapq.heappop(heap)
            self.clock.t = t
            if kind == _RECORD:
                self._record(obj)
            elif kind == _POLL:
                if obj.wake_at == t:
                    self._poll(obj)
            elif kind == _FINISH:
                self._finish(obj)
                if stop is not None and stop():
                    return
            elif kind == _SCALE:
                self._scale(obj)
            elif kind == _TICK:
                self._tick(t)
            else:
                obj()

    def result(self) -> SimResult:
        ledger: Counter[str] = Counter()
        for item in self.memory.items.values():
            for d in item["dl"].values():
                ledger[d["st"]] += 1
        rs = self.receiver.stats
        return SimResult(
            created=self.created,
            ledger=ledger,
            outcomes=self.outcomes,
            done_times=self.done_times,
            lateness=rs.lateness,
            receiver={
                "posts": rs.posts,
                "accepted": rs.accepted,
                "throttled_429": rs.throttled,
                "failed_500": rs.failed,
                "resent_after_accept": rs.resent_after_accept,
                "accepted_twice": sum(1 for n in rs.accepted_keys.values() if n > 1),
            },
            shard_dispatched=self.shard_dispatched,
            shard_runs=len(self.shard_reports),
            peak_concurrency={e.function: e.peak for e in self.esms.values()},
            cold_starts={e.function: e.cold_starts for e in self.esms.values()},
            telemetry=self.telemetry.counts,
            errors=self.errors,
        )

    # -- events ------------------------------------------------------------------------------------
    def _push(self, t: float, kind: int, obj: Any) -> None:
        heapq.heappush(self._heap, (t, next(self._seq), kind, obj))

    def _on_visible(self, queue: str, visible_at: float) -> None:
        esm = self.esms.get(queue)
        if esm is not None:
            self._wake(esm, max(visible_at, self.clock.t))

    def _wake(self, esm: _Esm, t: float) -> None:
        if esm.wake_at is not None and esm.wake_at <= t:
            return
        esm.wake_at = t
        self._push(t, _POLL, esm)

    def _next_offset(self) -> float:
        """A scheduled rule fires within the first seconds of its minute, not on the second."""
        return self._tick_offset if self._tick_offset is not None else self._tick_rng.uniform(0.2, 3.0)

    def _tick(self, t: float) -> None:
        """The EventBridge rule: invoke the tick function, which fans out one message per shard."""
        minute = (int(t) // 60 + 1) * 60
        self._push(minute + self._next_offset(), _TICK, None)
        with self.meter.stepping("dispatch"):
            self.clock.advance(self.latency.invoke)
            t0 = self.clock.t
            self.tick_dispatcher.tick()
            self.clock.advance(self.latency.handler_cpu_at(self.deployment.memory_mb.get("tick", 256)))
            self.meter.lambda_run(
                "tick", self.clock.t - t0, self.deployment.memory_mb.get("tick", 256), "dispatch"
            )

    def _poll(self, esm: _Esm) -> None:
        """One round of the event source's pollers: fill free concurrency with batches."""
        esm.wake_at = None
        t = self.clock.t
        if esm.busy == 0 and not esm.buffer and t - esm.last_active > IDLE_RESET_SECONDS:
            esm.allowed = min(START_BATCHES, esm.max_concurrency)
        self.sqs.poller = True
        try:
            with self.meter.stepping(esm.step):
                while esm.busy < int(esm.allowed):
                    got = self.sqs.receive(esm.queue, min(10, esm.batch_size - len(esm.buffer)))
                    if got:
                        esm.buffer.extend(got)
                        if esm.deadline is None:
                            esm.deadline = t + esm.window
                    if esm.buffer and (len(esm.buffer) >= esm.batch_size or t >= (esm.deadline or t)):
                        batch, esm.buffer, esm.deadline = esm.buffer, [], None
                        self._start(esm, batch)
                        continue
                    nv = self.sqs.next_visible_at(esm.queue)
                    if esm.buffer:  # a partial batch: gather until the window closes
                        assert esm.deadline is not None
                        self._wake(esm, esm.deadline if nv is None else min(esm.deadline, max(nv, t)))
                    elif nv is not None:
                        self._wake(esm, max(nv, t))
                    return
                nv = self.sqs.next_visible_at(esm.queue)
                if nv is not None and nv <= t:
                    esm.saturated = True  # messages wait for a free slot: scale up
                    if not esm.scale_pending and esm.allowed < esm.max_concurrency:
                        esm.scale_pending = True
                        self._push(t + 1.0, _SCALE, esm)
        finally:
            self.sqs.poller = False

    def _scale(self, esm: _Esm) -> None:
        esm.scale_pending = False
        if esm.saturated:
            esm.saturated = False
            esm.allowed = min(float(esm.max_concurrency), esm.allowed + SCALE_PER_SECOND)
            self._poll(esm)

    def _start(self, esm: _Esm, batch: list[Received]) -> None:
        if esm.free:
            container = esm.free.pop()
        else:
            esm.containers += 1
            n = esm.containers
            service: Any = (
                self._dispatcher(n, "shard") if esm.function == "shard" else self._deliverer(esm.function, n)
            )
            container = _Container(n, service)
        init = 0.0
        if not container.warm:
            container.warm = True
            init = self.latency.cold_start_at(esm.memory_mb)
            esm.cold_starts += 1
        esm.busy += 1
        esm.invocations += 1
        esm.peak = max(esm.peak, esm.busy)
        t = self.clock.t
        lanes = max(1, min(esm.lanes, len(batch)))
        inv = _Invocation(
            esm,
            container,
            t,
            t + self.latency.invoke + init,
            init,
            [deque(batch[i::lanes]) for i in range(lanes)],
            behind=batch_behind_seconds((m.attributes.get(DUE_ATTRIBUTE) for m in batch), _utc(t)),
        )
        for i in range(lanes):
            self._push(inv.exec_start, _RECORD, (inv, i))

    def _record(self, job: tuple[_Invocation, int]) -> None:
        inv, i = job
        lane = inv.lanes[i]
        msg = lane.popleft()
        with self.meter.stepping(inv.esm.step):
            if inv.esm.function == "shard":
                self._shard_record(inv, msg)
            else:
                self._delivery_record(inv, msg)
            self.clock.advance(self.latency.handler_cpu_at(inv.esm.memory_mb))
        end = self.clock.t
        if lane:
            self._push(end, _RECORD, job)
            return
        inv.lane_ends.append(end)
        if len(inv.lane_ends) == len(inv.lanes):
            self._push(max(inv.lane_ends), _FINISH, inv)

    def _delivery_record(self, inv: _Invocation, msg: Received) -> None:
        """What handlers.delivery does per record, around the real Deliverer."""
        channel = inv.esm.function
        try:
            dm = DeliveryMessage.parse(json.loads(msg.body))
        except (ValueError, MalformedMessageError):
            self.outcomes["malformed"] += 1
            return  # a failed record keeps its visibility; maxReceiveCount moves it to the DLQ
        ctx = MessageContext(
            msg.message_id,
            msg.receipt_handle,
            msg.receive_count,
            msg.attributes,
            batch_behind_seconds=inv.behind,
        )
        try:
            res = inv.container.service.process(dm, ctx)
        except Exception as exc:  # a crashed record comes back after the visibility timeout
            self.outcomes["error"] += 1
            if len(self.errors) < 20:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        self.outcomes[res.outcome] += 1
        if res.ack:
            inv.acked.append(msg.receipt_handle)
        else:
            self.queues.change_visibility(channel, msg.receipt_handle, res.visibility_seconds)
        if res.outcome in TERMINAL_OUTCOMES:
            self.done += 1
            self.done_times.append(self.clock.t)

    def _shard_record(self, inv: _Invocation, msg: Received) -> None:
        """What handlers.dispatcher.shard_handler does per record, around the real Dispatcher."""
        shard = int(json.loads(msg.body)["shard"])
        timeout = inv.esm.timeout
        start = inv.exec_start
        watch_before = self.meter.busy["watchdog"]
        t_before, rru_before = self.clock.t, self.meter.units[("RRU", "dispatch")]
        report = inv.container.service.run_shard(shard, lambda: timeout - (self.clock.t - start))
        inv.watch_seconds += self.meter.busy["watchdog"] - watch_before
        self.shard_seconds[shard] += self.clock.t - t_before
        self.shard_read_units[shard] += self.meter.units[("RRU", "dispatch")] - rru_before
        if report.more:
            self.queues.send_dispatch([shard])
        self.shard_dispatched[shard] += report.dispatched
        self.shard_reports.append(report)
        inv.acked.append(msg.receipt_handle)

    def _finish(self, inv: _Invocation) -> None:
        esm = inv.esm
        t = self.clock.t
        self.sqs.poller = True
        try:
            with self.meter.stepping(esm.step):
                for s in range(0, len(inv.acked), 10):
                    self.sqs.delete_batch(esm.queue, inv.acked[s : s + 10])
        finally:
            self.sqs.poller = False
        self.clock.t = t
        billed = (t - inv.exec_start) + inv.init
        watch = min(inv.watch_seconds, billed)
        self.meter.lambda_run(esm.function, billed - watch, esm.memory_mb, esm.step)
        if watch:
            self.meter.gb_seconds[(esm.function, "watchdog")] += watch * esm.memory_mb / 1024
        esm.busy -= 1
        esm.last_active = t
        esm.free.append(inv.container)
        self._poll(esm)


def _utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def ledger_states(store: MemoryReminderStore) -> Counter[str]:
    out: Counter[str] = Counter()
    for item in store.items.values():
        for d in item["dl"].values():
            out[DeliveryState(d["st"]).value] += 1
    return out
