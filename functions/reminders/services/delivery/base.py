"""The deliverer's ports and its one conditional write (the steps build on it)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ...domain.models import Delivery, Reminder
from ...domain.ports import Clock, Queues, ReminderStore, Rendered, Sender, Telemetry
from ...domain.ratelimit import DestinationLimiter, SharedRateLimiter
from ...domain.retry import RetryPolicy
from ...domain.suppression import SuppressionList
from ...domain.timing import DeliveryTiming, aws_call_worst_seconds
from ..health import EndpointHealthGuard
from ..render import render
from .messages import _same_line


class DelivererBase:
    """The ports and settings every step of a delivery uses, and the one conditional write of a
    delivery row (``_save``) that the claim, the record and the hand-off all make."""

    def __init__(
        self,
        *,
        store: ReminderStore,
        queues: Queues,
        senders: dict[str, Sender],
        clock: Clock,
        policy: RetryPolicy,
        telemetry: Telemetry,
        worker: str,
        max_receive_count: int = 20,
        rng: random.Random | None = None,
        limiter: DestinationLimiter | SharedRateLimiter | None = None,
        timing: DeliveryTiming | None = None,
        sleep: Callable[[float], None] | None = None,
        suppressions: SuppressionList | None = None,
        health: EndpointHealthGuard | None = None,
        endpoints: Callable[[str, str], object | None] | None = None,
        renderer: Callable[[Reminder, Delivery], Rendered] = render,
    ) -> None:
        self.store = store
        #: What is sent (issue 30: ``render.TemplateRenderer``, the account's template version).
        self.renderer = renderer
        self.health = health
        #: ``Endpoints.for_send(account_id, destination)`` (the sender's cached lookup): a delivery
        #: naming an endpoint its account does not own is neither counted in nor paced by that
        #: endpoint's health and rate (issue 24); the sender then refuses it (endpoint_not_found).
        self.endpoints = endpoints
        self.queues = queues
        self.senders = senders
        self.clock = clock
        self.policy = policy
        self.telemetry = telemetry
        self.worker = worker
        # Hand a long-lived delivery a fresh message before SQS's backstop moves it to the DLQ.
        self.receive_budget = max(2, max_receive_count - 3)
        self.rng = rng or random.Random()
        self.limiter = limiter
        self.suppressions = suppressions
        self._last_lease = datetime.min.replace(tzinfo=UTC)
        # The records of one batch run in threads (handlers/delivery.py): the lease nonce, the rate
        # limiter's buckets and the random generator are shared by them and guarded by this lock.
        self._lock = threading.Lock()
        self.sleep: Callable[[float], None] = sleep or getattr(clock, "sleep", None) or time.sleep
        self.timing = timing or DeliveryTiming(
            attempt_deadline_seconds=policy.provider_timeout_seconds,
            lease_seconds=policy.lease_seconds,
            store_call_worst_seconds=aws_call_worst_seconds(),
        )

    def _save(self, reminder_id: str, d: Delivery, expected_rev: int, **conditions: object) -> bool:
        """``save_delivery``, recognising our own write when its answer was lost: botocore retried the
        conditional update and the retry failed its own condition. The row then holds exactly what we
        wrote: revision + 1, the same state, lease and next attempt, its history ending with our line."""
        if self.store.save_delivery(reminder_id, d, expected_rev, **conditions):  # type: ignore[arg-type]
            return True
        current = self.store.get(reminder_id)
        cur = current.deliveries.get(d.channel_id) if current else None
        if cur is None or cur.rev != expected_rev + 1:
            return False
        same = (
            cur.state is d.state
            and cur.lease_owner == d.lease_owner
            and cur.lease_until == d.lease_until
            and cur.next_attempt_at == d.next_attempt_at
            and cur.dlq_pending == d.dlq_pending
            and cur.cycle == d.cycle
            and len(cur.history) == len(d.history)
            and (not d.history or _same_line(cur.history[-1], d.history[-1]))
        )
        if same:
            d.rev = cur.rev
            self.telemetry.count("own_write_recognised")
        return same
