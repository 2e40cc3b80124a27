from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

# No real AWS, ever: fake credentials and a pinned region before anything creates a client.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "MOTO_ACCOUNT_ID": "111111111111",
        "POWERTOOLS_METRICS_NAMESPACE": "Reminders",
        "POWERTOOLS_SERVICE_NAME": "reminders",
        "POWERTOOLS_DEV": "false",
    }
)
os.environ.pop("AWS_ENDPOINT_URL", None)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """moto in-process with the stack's resources; the runtime wired to them (fresh per test)."""
    from moto import mock_aws
    from reminders import runtime
    from reminders_ops.local.faithful import faithful_moto

    from tests.support.aws import create_resources

    faithful_moto()  # a batch's records run on concurrent threads: atomic conditional writes
    with mock_aws():
        env = create_resources()
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REMINDERS_RETRY_BASE_SECONDS", "2")
        monkeypatch.setenv("REMINDERS_RETRY_THROTTLE_BASE_SECONDS", "2")
        runtime.reset()
        yield env
        runtime.reset()


@pytest.fixture
def receiver() -> Iterator[Any]:
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders_ops.receiver import WebhookReceiver

    with WebhookReceiver(DEV_WEBHOOK_SECRET) as r:
        yield r
