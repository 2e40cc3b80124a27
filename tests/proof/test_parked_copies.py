"""Issue 25 item 6: a parked delivery has at most one live message, whatever the length of the hold.
Parking by visibility writes nothing to the row, so the row must say durably that the delivery is
parked (``parked_until``): the watchdog otherwise takes it for lost and re-queues a copy every
``watch_lag``, and each copy is parked too. In-memory world, virtual clock."""

from __future__ import annotations

from reminders.domain.states import DeliveryState

from tests.proof.test_matrix_health import _drain, _world
from tests.unit.fakes import World

HOUR = 3600


def _live_messages(w: World, rid: str) -> int:
    return sum(1 for m in w.queued("webhook") if m["reminder_id"] == rid)


def test_parked_delivery_has_one_live_message_after_a_24h_hold() -> None:
    w = _world(30 * HOUR)  # down longer than the hold can last
    rs = [w.create(f"renewal:acct-1:parked-{i}", due_in=i) for i in range(20)]  # enough to hold it
    most = 0
    for _ in range(24 * 60):  # 24 h in minutes: the dispatcher and its watchdog every minute
        w.run_shards()
        _drain(w)
        most = max(most, *(_live_messages(w, r.id) for r in rs))
        w.clock.advance(60)
    assert w.telemetry.counts["endpoint_parked"] > 0
    assert most <= 1, most
    assert w.telemetry.counts.get("watchdog_requeued", 0) == 0
    for r in rs:
        assert w.delivery(r.id).state is not DeliveryState.DELIVERED
