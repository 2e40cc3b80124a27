"""The one in-memory world: the real services (Reminders, Deliverer, Dispatcher, Reconciler) on the
in-memory backends (``MemoryReminderStore``, ``MemorySqs`` with the stack's queues and DLQs) and a
virtual clock of the caller's choice.

Used by the unit tests' ``World`` (tests/unit/fakes.py), the explorer (``proof/explorer/``) and the
simulator (``sim/engine.py``), so a backend fix or a new queue lands in all three. Each caller may
pass its own subclass or wrapper of a part — a recording store, a metered SQS, a fault boundary
around a port — and keeps its own driver (event loop, fault plan, cost model): this module only
assembles.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from reminders.adapters.health_store import MemoryHealthStore
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_sqs import MemoryQueues, MemorySqs, QueueConfig
from reminders.domain.health import HealthPolicy
from reminders.domain.retry import RetryPolicy
from reminders.services.deliver import Deliverer
from reminders.services.dispatch import Dispatcher
from reminders.services.health import EndpointHealthGuard
from reminders.services.intents import Reminders
from reminders.services.reconcile import Reconciler

CHANNELS = ("webhook", "email")
#: The stack's queues (infra): a delivery queue per channel with its DLQ, and the dispatch queue.
QUEUE_NAMES = {ch: ch for ch in CHANNELS}
DLQ_NAMES = {ch: f"{ch}-dlq" for ch in CHANNELS}
DISPATCH_QUEUE = "dispatch"


def create_queues(
    sqs: MemorySqs,
    *,
    visibility_timeout: int,
    max_receive_count: int,
    dispatch_visibility_timeout: int | None = None,
    dispatch_max_receive_count: int | None = None,
) -> MemoryQueues:
    """The stack's queues in ``sqs``; the dispatch queue gets a DLQ when it has a receive budget."""
    for ch in CHANNELS:
        sqs.create_queue(DLQ_NAMES[ch])
        sqs.create_queue(
            QUEUE_NAMES[ch],
            QueueConfig(
                visibility_timeout=visibility_timeout,
                dead_letter_queue=DLQ_NAMES[ch],
                max_receive_count=max_receive_count,
            ),
        )
    if dispatch_max_receive_count is None:
        sqs.create_queue(
            DISPATCH_QUEUE,
            QueueConfig(visibility_timeout=dispatch_visibility_timeout)
            if dispatch_visibility_timeout is not None
            else None,
        )
    else:
        sqs.create_queue(f"{DISPATCH_QUEUE}-dlq")
        sqs.create_queue(
            DISPATCH_QUEUE,
            QueueConfig(
                visibility_timeout=dispatch_visibility_timeout or visibility_timeout,
                dead_letter_queue=f"{DISPATCH_QUEUE}-dlq",
                max_receive_count=dispatch_max_receive_count,
            ),
        )
    return MemoryQueues(
        sqs, queue_names=dict(QUEUE_NAMES), dlq_names=dict(DLQ_NAMES), dispatch=DISPATCH_QUEUE
    )


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


@dataclass
class InMemoryWorld:
    """The backends and the settings every service of one world shares."""

    clock: Any  # anything with ``now() -> datetime`` (FixedClock, the simulator's SimClock)
    sqs: MemorySqs
    queues: MemoryQueues
    store: MemoryReminderStore | Any  # the store port (a recording or metered store is fine)
    telemetry: Any
    policy: RetryPolicy
    shards: int
    max_receive_count: int
    #: Endpoint health (issue 16): one item per endpoint shared by every consumer of the world.
    health_policy: HealthPolicy
    health_store: MemoryHealthStore

    @classmethod
    def build(
        cls,
        *,
        clock: Any,
        telemetry: Any,
        sqs: MemorySqs | None = None,
        store: Any | None = None,
        policy: RetryPolicy | None = None,
        shards: int = 4,
        visibility_timeout: int = 180,
        max_receive_count: int = 20,
        dispatch_visibility_timeout: int | None = None,
        dispatch_max_receive_count: int | None = None,
        health_policy: HealthPolicy | None = None,
    ) -> InMemoryWorld:
        sqs = sqs if sqs is not None else MemorySqs(lambda: clock.now().timestamp())
        queues = create_queues(
            sqs,
            visibility_timeout=visibility_timeout,
            max_receive_count=max_receive_count,
            dispatch_visibility_timeout=dispatch_visibility_timeout,
            dispatch_max_receive_count=dispatch_max_receive_count,
        )
        policy = policy or RetryPolicy()
        health_policy = health_policy or HealthPolicy(disable_after_seconds=policy.max_age_seconds)
        return cls(
            clock=clock,
            sqs=sqs,
            queues=queues,
            store=store if store is not None else MemoryReminderStore(),
            telemetry=telemetry,
            policy=policy,
            shards=shards,
            max_receive_count=max_receive_count,
            health_policy=health_policy,
            health_store=MemoryHealthStore(health_policy),
        )

    # -- the services, each port overridable (a fault boundary, a meter) ---------------------------
    def reminders(self, *, store: Any = None, queues: Any = None, **kwargs: Any) -> Reminders:
        return Reminders(
            store=_or(store, self.store),
            queues=_or(queues, self.queues),
            clock=self.clock,
            telemetry=self.telemetry,
            shards=kwargs.pop("shards", self.shards),
            **kwargs,
        )

    def deliverer(
        self,
        *,
        worker: str,
        senders: dict[str, Any],
        rng: random.Random,
        store: Any = None,
        queues: Any = None,
        clock: Any = None,
        **kwargs: Any,
    ) -> Deliverer:
        return Deliverer(
            store=_or(store, self.store),
            queues=_or(queues, self.queues),
            senders=senders,
            clock=_or(clock, self.clock),
            policy=self.policy,
            telemetry=self.telemetry,
            worker=worker,
            max_receive_count=self.max_receive_count,
            rng=rng,
            health=kwargs.pop("health", None) or self.health_guard(),
            **kwargs,
        )

    def health_guard(self) -> EndpointHealthGuard:
        """A consumer's view of endpoint health (its own cache) on the world's one health store."""
        return EndpointHealthGuard(
            store=self.health_store, policy=self.health_policy, telemetry=self.telemetry
        )

    def dispatcher(
        self, *, worker: str, store: Any = None, queues: Any = None, clock: Any = None, **kwargs: Any
    ) -> Dispatcher:
        return Dispatcher(
            store=_or(store, self.store),
            queues=_or(queues, self.queues),
            clock=_or(clock, self.clock),
            telemetry=self.telemetry,
            shards=kwargs.pop("shards", self.shards),
            worker=worker,
            **kwargs,
        )

    def reconciler(self, *, store: Any = None) -> Reconciler:
        return Reconciler(store=_or(store, self.store), clock=self.clock, telemetry=self.telemetry)
