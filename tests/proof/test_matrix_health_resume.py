"""Issue 16, after a hold (matrix addition): once its endpoint resumes, a delivery's failure is an
isolated one again — its retry comes within the policy's first backoff (1-2 s), however many of its
attempts failed while the endpoint was down before it was held. Those attempts still count against
the budget. In-memory world, virtual clock."""

from __future__ import annotations

from reminders.domain.health import EndpointState, HealthPolicy
from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import Rendered
from reminders.domain.retry import OutcomeClass, SendResult
from reminders.domain.schedule import parse_iso

from tests.proof.test_matrix_health import Outage, _create, _endpoint, _run
from tests.unit.fakes import SendCall, World


class FailsOnceAfterResume(Outage):
    """Down for ``down_for`` seconds; after the endpoint is active again, each key's first send fails
    once (500) before it is accepted — the isolated failure a resumed backlog meets."""

    def __init__(self, w: World, down_from: float, down_until: float) -> None:
        super().__init__(w, down_from, down_until)
        self.w, self.failed_once, self.endpoint = w, set[str](), ""

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        h = self.w.health.items.get(self.endpoint)
        resumed = h is not None and h.state is EndpointState.ACTIVE and h.tv > 0
        if resumed and not self.down() and delivery.key not in self.failed_once:
            self.failed_once.add(delivery.key)
            self.calls.append(SendCall(delivery.key, "500", rendered.body, self.clock.now(), delivery.state))
            return SendResult(OutcomeClass.TRANSIENT, 500, fingerprint=rendered.fingerprint)
        return super().send(delivery, reminder, rendered)


def test_after_its_endpoint_resumes_an_outage_failed_delivery_retries_within_the_first_backoff() -> None:
    # Only the 60 s rule (here 10 s) holds it: every delivery fails a few times before the hold.
    w = World(shards=1, health_policy=HealthPolicy(min_sends=10**6, all_failed_seconds=10.0))
    t0 = w.clock.now().timestamp()
    w.sender = sender = FailsOnceAfterResume(w, t0, t0 + 120)
    rs = _create(w, 6, spread=0)
    sender.endpoint = _endpoint(w, rs[0])
    _run(w, 400)
    states = [s for _, e, s, _ in w.health.transitions if e == sender.endpoint]
    assert states[:2] == ["held", "active"], states
    held, resumed = (t for t, e, _, _ in w.health.transitions if e == sender.endpoint)
    policy, checked = w.policy, 0
    for r in rs:
        d = w.delivery(r.id)
        assert d.state.value == "delivered" and w.sender.accepted[d.key] == 1
        tries = [a for a in d.history if a.event == "attempt"]
        before = [a for a in tries if parse_iso(a.at).timestamp() < resumed and a.outcome == "transient"]
        after = [a for a in tries if parse_iso(a.at).timestamp() >= resumed]
        if len(before) < 3 or not after or after[0].outcome != "transient":
            continue  # the probe (it resumed the endpoint) or a delivery the outage barely touched
        checked += 1
        # The failed attempt after the resume waited the first backoff (U(0, base), at least 1 s),
        # not the ceiling its attempts would give (base * 2**(n-1): 8 s and more).
        assert after[0].delay_seconds is not None and after[0].delay_seconds <= policy.base_seconds, after[0]
        # The outage's failures before the hold (no probes then) still count against the budget,
        # with the failure after the resume and the accepted send.
        assert d.attempts >= sum(1 for a in before if parse_iso(a.at).timestamp() < held) + 2
    assert checked >= 3, checked
    # Retried within seconds, each is accepted long before the 10 s rule could hold it again.
    assert states == ["held", "active"], states
