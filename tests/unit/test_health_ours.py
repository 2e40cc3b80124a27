"""Issue 25 item 9: only the receiver's answers (and connection failures to its address) count
against an endpoint's health. Our own failures — an endpoint-lookup error, our resolver failing, a
probe that fails on our configuration — never hold it, never fail a probe, never disable it.
The real webhook adapter on the in-memory world, virtual clock."""

from __future__ import annotations

import socket
from collections.abc import Sequence

from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.webhook import WebhookSender
from reminders.domain.health import EndpointState
from reminders.domain.models import Delivery, Reminder
from reminders.domain.ports import Rendered
from reminders.domain.retry import OutcomeClass, SendResult
from reminders.domain.states import DeliveryState

from tests.proof.test_matrix_health import _endpoint, _run
from tests.unit.fakes import ScriptedSender, World


def _lookup_fails(account_id: str, destination: str) -> None:
    raise RuntimeError("endpoint table throttled")


def _resolver_fails(host: str, port: int) -> Sequence[str]:
    raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")


def _assert_never_counted(w: World, ep: str) -> None:
    h = w.health.get(ep)
    assert [t for t in w.health.transitions if t[1] == ep] == []
    assert h is None or (h.failed_in_row == 0 and h.state is EndpointState.ACTIVE), h


def test_endpoint_lookup_error_never_counts_against_the_endpoint_health() -> None:
    w = World(shards=1)
    w.sender = WebhookSender(  # type: ignore[assignment]
        policy=DestinationPolicy(), secret=lambda: "s", clock=w.clock, endpoints=_lookup_fails
    )
    rs = [w.create(f"renewal:acct-1:lookup-{i}", due_in=i) for i in range(20)]
    _run(w, 120)
    assert (w.delivery(rs[0].id).last_error or {}).get("detail") == "endpoint_lookup:RuntimeError"
    _assert_never_counted(w, _endpoint(w, rs[0]))


def test_dns_failure_on_our_side_never_counts_against_the_endpoint_health() -> None:
    w = World(shards=1)
    w.sender = WebhookSender(  # type: ignore[assignment]
        policy=DestinationPolicy(resolver=_resolver_fails), secret=lambda: "s", clock=w.clock
    )
    rs = [w.create(f"renewal:acct-1:dns-{i}", due_in=i) for i in range(20)]
    _run(w, 120)
    assert (w.delivery(rs[0].id).last_error or {}).get("detail") == "dns_unresolved"
    _assert_never_counted(w, _endpoint(w, rs[0]))


class _DownThenMisconfigured(ScriptedSender):
    """The receiver answers 503 until the endpoint is held; from then on every send fails on our
    side (its signing secret cannot be read): what the adapter returns for it."""

    def __init__(self, w: World) -> None:
        super().__init__(w.clock)
        self.w = w

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        if self.w.health.transitions:
            return SendResult(OutcomeClass.CONFIGURATION, detail="secret unavailable")
        return SendResult(OutcomeClass.TRANSIENT, 503, fingerprint=rendered.fingerprint)


def test_probe_that_fails_on_our_configuration_never_counts_as_a_failed_probe() -> None:
    w = World(shards=1)
    w.sender = _DownThenMisconfigured(w)
    rs = [w.create(f"renewal:acct-1:probe-{i}", due_in=i) for i in range(20)]
    _run(w, 900)
    ep = _endpoint(w, rs[0])
    h = w.health.get(ep)
    assert h is not None and h.state is EndpointState.HELD
    assert w.telemetry.counts["endpoint_probe"] > 0
    assert h.probes == 0, "a probe our configuration failed was counted as the endpoint's failure"
    assert all(w.delivery(r.id).state is not DeliveryState.DEAD_LETTER for r in rs)
