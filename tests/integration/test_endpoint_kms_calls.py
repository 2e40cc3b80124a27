"""Issue 24 item 2, cost: KMS requests per webhook send, counted on moto's KMS (real calls).

The sender's lookup (:meth:`Endpoints.signing_endpoint`) opens the endpoint's signing secrets at every
send its caches do not cover. A sparse workload — many (account, origin) pairs, each sending less
often than the caches keep anything — must not pay a KMS request per send: an implicit endpoint's
secret is derived (HKDF) from one sealed deployment key that each instance decrypts once. Two sender
instances share the table and the KMS key; the instances' monotonic clocks jump past every cache
between rounds (a count of calls, not a measure of time).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.adapters import envelope
from reminders.adapters.clock import SystemClock
from reminders.adapters.endpoints_store import DynamoEndpointStore
from reminders.adapters.envelope import DATA_KEY_CACHE_SECONDS, KmsKeyWrapper, SecretSealer
from reminders.domain.ports import NullTelemetry
from reminders.services import endpoints as endpoints_module
from reminders.services.endpoints import Endpoints, NewEndpoint

INSTANCES = 2
ACCOUNTS = 4
ORIGINS = 3  # M = ACCOUNTS x ORIGINS sparse implicit endpoints
ROUNDS = 5  # N = ROUNDS x M sends


def _kms_calls(client: Any) -> Counter[str]:
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("provide-client-params.kms.*", count)
    return calls


def _instances(aws: dict[str, str], kms: Any) -> list[Endpoints]:
    """Sender instances: each its own store, sealer and caches; one table, one KMS key."""
    return [
        Endpoints(
            store=DynamoEndpointStore(
                boto3.client("dynamodb"),
                aws["TABLE_NAME"],
                SecretSealer(KmsKeyWrapper(kms, aws["ENDPOINT_KEY_ID"])),
            ),
            reminders=runtime.store(),
            clock=SystemClock(),
            telemetry=NullTelemetry(),
        )
        for _ in range(INSTANCES)
    ]


@pytest.fixture
def mono(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The caches' monotonic clock, moved by the test."""
    now = [1000.0]
    fake = SimpleNamespace(monotonic=lambda: now[0])
    monkeypatch.setattr(envelope, "time", fake)
    monkeypatch.setattr(endpoints_module, "time", fake)
    return now


def test_kms_requests_stay_per_instance_when_sends_go_to_many_sparse_implicit_endpoints(
    aws: dict[str, str], mono: list[float]
) -> None:
    kms = boto3.client("kms")
    calls = _kms_calls(kms)
    senders = _instances(aws, kms)
    targets = [
        (f"acct-{a}", f"https://hooks-{o}.example/in") for a in range(ACCOUNTS) for o in range(ORIGINS)
    ]
    secrets: dict[tuple[str, str], set[str]] = {}
    sends = 0
    for _ in range(ROUNDS):
        for account, url in targets:
            endpoint = senders[sends % INSTANCES].signing_endpoint(account, url)
            assert endpoint is not None and endpoint.account_id == account and endpoint.implicit
            secrets.setdefault((account, url), set()).update(endpoint.signing_secrets(SystemClock().now()))
            sends += 1
        mono[0] += DATA_KEY_CACHE_SECONDS + 100  # sparse: every cache of every instance has expired
    assert sends == ROUNDS * ACCOUNTS * ORIGINS
    # every endpoint signs with one secret of its own, the same on every instance
    assert all(len(s) == 1 for s in secrets.values())
    assert len({s for group in secrets.values() for s in group}) == len(targets)
    # The bound: one GenerateDataKey ever (the deployment key), one Decrypt per instance at most —
    # not one per endpoint, nor one per send.
    assert calls["GenerateDataKey"] <= 1
    assert calls["Decrypt"] <= INSTANCES
    assert calls["GenerateDataKey"] + calls["Decrypt"] <= INSTANCES + 1


def test_registered_endpoints_pay_decrypt_per_endpoint_and_instance_not_per_send_when_dense(
    aws: dict[str, str], receiver: Any, mono: list[float]
) -> None:
    """A registered endpoint's secret (shown once) stays envelope-encrypted: a dense workload opens its
    data key once per instance per ``DATA_KEY_CACHE_SECONDS``, whatever the number of sends."""
    kms = boto3.client("kms")
    senders = _instances(aws, kms)
    made = [
        senders[0].create(NewEndpoint(account_id=f"acct-{i}", url=f"{receiver.url}/r{i}"))[0]
        for i in range(3)
    ]
    calls = _kms_calls(kms)
    sends = 0
    for _ in range(4):  # windows of the data-key cache
        for _ in range(20):  # dense: 20 sends per endpoint per window
            for e in made:
                assert senders[sends % INSTANCES].signing_endpoint(e.account_id, e.id) is not None
                sends += 1
            mono[0] += 6  # past the 5 s lookup cache: every send re-reads and re-opens the item
        mono[0] += DATA_KEY_CACHE_SECONDS
    assert sends == 4 * 20 * len(made)
    assert calls["GenerateDataKey"] == 0
    assert calls["Decrypt"] <= 4 * len(made) * INSTANCES  # per window, endpoint and instance
