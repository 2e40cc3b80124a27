"""The endpoint health item (``pk=E#<id>, sk=H``): the DynamoDB store on moto and its in-memory
twin behave alike (outcomes by ADD, transitions conditional on ``tv``, one probe lease at a time)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from reminders.adapters.health_store import DynamoHealthStore, MemoryHealthStore
from reminders.domain.health import EndpointHealth, EndpointState, HealthPolicy, HealthWhy

from tests.contract.conftest import STORE_BACKENDS, create_table, dynamodb_resource, low_level_client

P = HealthPolicy()
T = 1_800_000_000.0
EP = "ep_" + "a" * 32


@pytest.fixture(params=STORE_BACKENDS)
def hs(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryHealthStore(P)
        return
    ddb = dynamodb_resource(request, request.param)
    table = create_table(ddb)
    yield DynamoHealthStore(low_level_client(ddb), table.name, P)
    table.delete()


def _threads(hs: Any) -> int:
    """Writers at once: in-process moto takes no lock between a condition and its write (DynamoDB
    applies one item's writes one at a time), so its writers run one after the other; dynalite (a
    server on 127.0.0.1) applies them one at a time as DynamoDB does, so it takes them at once."""
    if isinstance(hs, MemoryHealthStore):
        return 8
    return 8 if str(hs.client.meta.endpoint_url).startswith("http://127.0.0.1") else 1


def test_outcomes_add_up_in_the_window_from_any_writer(hs: Any) -> None:
    assert hs.get(EP) is None
    with ThreadPoolExecutor(_threads(hs)) as pool:
        list(
            pool.map(
                lambda i: hs.record(EP, "acct-1", T + 0.01 * i, 1 - i % 2, i % 2, "transient"), range(40)
            )
        )
    h = hs.get(EP)
    assert h.window(T + 1, P) == (20, 20)
    assert (h.state, h.tv, h.account_id, h.last_error) == (EndpointState.ACTIVE, 0, "acct-1", "transient")


def test_an_answer_resets_the_failure_streak_and_old_buckets_are_pruned(hs: Any) -> None:
    hs.record(EP, "acct-1", T, 0, 3)
    h = hs.record(EP, "acct-1", T + 5, 0, 1)
    assert (h.failing_since, h.failed_in_row) == (T, 4)
    h = hs.record(EP, "acct-1", T + 200, 1, 0, prune=h.stale_buckets(T + 200, P))
    assert (h.failing_since, h.failed_in_row) == (None, 0)
    assert h.window(T + 200, P) == (1, 0) and list(h.buckets) == [P.bucket(T + 200)]


def test_a_transition_is_conditional_on_the_transition_counter(hs: Any) -> None:
    h = hs.record(EP, "acct-1", T, 0, 1)
    held = hs.transition(h, EndpointState.HELD, HealthWhy.ALL_FAILED_60S, T + 60)
    assert held is not None and (held.state, held.tv, held.why, held.since) == (
        EndpointState.HELD,
        1,
        "all_failed_60s",
        T + 60,
    )
    assert held.next_probe_at == T + 60 + P.probe_base_seconds
    assert hs.transition(h, EndpointState.DISABLED, HealthWhy.OPERATOR, T + 61) is None  # stale tv
    resumed = hs.transition(held, EndpointState.ACTIVE, HealthWhy.PROBE_SUCCEEDED, T + 70)
    assert resumed is not None and resumed.tv == 2 and resumed.buckets == {} and resumed.failed_in_row == 0


def test_an_operator_can_disable_an_endpoint_that_never_sent(hs: Any) -> None:
    h = hs.transition(EndpointHealth(EP, "acct-1"), EndpointState.DISABLED, HealthWhy.OPERATOR, T)
    assert h is not None and (h.state, h.tv, h.account_id) == (EndpointState.DISABLED, 1, "acct-1")


def test_one_probe_lease_at_a_time_and_failed_probes_back_off(hs: Any) -> None:
    h = hs.transition(hs.record(EP, "a", T, 0, 1), EndpointState.HELD, HealthWhy.FAILURE_RATIO, T)
    assert hs.take_probe(h, T + 1) is None  # not due before the first interval
    due = T + P.probe_base_seconds
    with ThreadPoolExecutor(_threads(hs)) as pool:
        won = [x for x in pool.map(lambda _: hs.take_probe(h, due), range(8)) if x is not None]
    assert len(won) == 1 and won[0].probe_until == due + P.probe_lease_seconds
    after = hs.probe_failed(won[0], due + 1, "timeout")
    assert after is not None and after.probes == 1 and after.probe_until is None
    assert after.next_probe_at == due + 1 + P.probe_interval(1) and after.last_error == "timeout"
    assert hs.take_probe(after, due + 2) is None
    again = hs.take_probe(after, after.next_probe_at)
    assert again is not None
    after2 = hs.probe_failed(again, after.next_probe_at + 1, "transient")
    failed_at = after.next_probe_at + 1
    assert after2.next_probe_at == failed_at + P.probe_interval(2, failed_at - T)  # held since T


def test_another_accounts_writes_never_touch_an_owned_health_item(hs: Any) -> None:
    """Issue 24: the owner is fixed at the endpoint's creation (``own``); outcomes, transitions and
    probe leases of any other account are refused by the write's own condition (nothing written)."""
    hs.own(EP, "acct-a")
    assert hs.record(EP, "acct-b", T, 0, 5, "transient") is None
    h = hs.get(EP)
    assert h is not None and h.account_id == "acct-a" and h.state is EndpointState.ACTIVE and not h.buckets
    assert hs.transition(h, EndpointState.HELD, HealthWhy.FAILURE_RATIO, T, "acct-b") is None
    held = hs.transition(h, EndpointState.HELD, HealthWhy.FAILURE_RATIO, T, "acct-a")
    assert held is not None and held.account_id == "acct-a"
    foreign = EndpointHealth(EP, "acct-b", EndpointState.HELD, tv=held.tv)
    assert hs.take_probe(foreign, T + 3600) is None
    assert hs.probe_failed(foreign, T + 3600, "transient") is None
    assert hs.take_probe(held, T + 3600) is not None  # the owner's own probe


def test_owning_an_item_another_account_wrote_first_starts_it_afresh(hs: Any) -> None:
    hs.transition(hs.record(EP, "acct-b", T, 0, 3), EndpointState.HELD, HealthWhy.FAILURE_RATIO, T)
    hs.own(EP, "acct-a")  # A creates its endpoint: B's earlier outcomes are not A's
    h = hs.get(EP)
    assert h is not None and h.account_id == "acct-a" and h.state is EndpointState.ACTIVE
    assert not h.buckets and h.failed_in_row == 0
    hs.own(EP, "acct-a")  # again (its own item): kept as it is
    assert hs.record(EP, "acct-a", T + 1, 1, 0) is not None


def test_the_local_live_view_counts_endpoints_by_state_and_lists_the_unhealthy(_moto_dynamodb: Any) -> None:
    from reminders_ops.local.status import endpoint_states

    table = create_table(_moto_dynamodb)
    hs = DynamoHealthStore(boto3.client("dynamodb", region_name="us-east-1"), table.name, P)
    hs.record(EP, "acct-1", T, 5, 0)
    other = "ep_" + "b" * 32
    hs.transition(hs.record(other, "acct-1", T, 0, 1), EndpointState.HELD, HealthWhy.FAILURE_RATIO, T)
    snap = endpoint_states(table)
    assert snap["by_state"] == {"active": 1, "held": 1}
    assert snap["unhealthy"] == [
        {"endpoint_id": other, "state": "held", "why": "failure_ratio", "since": "2027-01-15T08:00:00.000Z"}
    ]
