"""Issue 25 item 10: the function's remaining time is checked immediately before every provider
call, not only after the claim: the health and rate-limiter calls between the claim and the send
take time, and a send that no longer fits (with its record) is handed back unsent."""

from __future__ import annotations

import json
import random
from typing import Any

from reminders.domain.states import DeliveryState
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.health import EndpointHealthGuard

from tests.unit.fakes import World


class _SlowStore:
    """A store whose every call takes ``step`` seconds of the world's clock."""

    def __init__(self, inner: Any, w: World, step: float) -> None:
        self._inner, self._w, self._step = inner, w, step

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self._w.clock.advance(self._step)
            return target(*args, **kwargs)

        return call


def test_send_that_no_longer_fits_the_budget_is_handed_back_unsent() -> None:
    w = World(shards=1)
    r = w.create("renewal:acct-1:budget", due_in=0)
    w.run_shards()
    timing = w.worker().timing
    # Each health-store call takes longer than the slack the claim left: after the claim the send
    # fits; after the health read it no longer does.
    slack = 0.5
    health = EndpointHealthGuard(
        store=_SlowStore(w.health, w, timing.store_call_worst_seconds + slack + 0.5),
        policy=w.world.health_policy,
        telemetry=w.telemetry,
    )
    deliverer = w.world.deliverer(
        worker="w-budget", senders={"webhook": w.sender}, rng=random.Random(7), health=health
    )
    deadline = w.clock.now().timestamp() + timing.record_budget_seconds + slack
    [m] = w.receive()
    result = deliverer.process(
        DeliveryMessage.parse(json.loads(m.body)),
        MessageContext(
            m.message_id,
            m.receipt_handle,
            m.receive_count,
            dict(m.attributes),
            remaining_seconds=lambda: deadline - w.clock.now().timestamp(),
        ),
    )
    assert w.sender.calls == [], "sent without the time to record it"
    assert (result.ack, result.outcome) == (False, "no_time_left")
    d = w.delivery(r.id)
    assert d.state is DeliveryState.QUEUED and d.lease_owner is None and d.attempts == 0
