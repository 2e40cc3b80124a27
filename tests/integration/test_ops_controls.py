"""The runbook switches keep each other: pausing consumers does not resume producers (the controls
item is written whole, so the CLI reads, merges and writes); the API rejects creates while paused."""

from __future__ import annotations

from reminders_ops.cli.controls import set_local_consumers, set_producers
from reminders_ops.stackrefs import StackTarget

from tests.support.lambda_runtime import call_api


def test_switches_merge_and_producers_pause_rejects_creates(aws: dict[str, str]) -> None:
    target = StackTarget()
    assert set_producers(target, True, table="reminders") == {"producers_paused": True}
    merged = set_local_consumers(target, True, ["WebhookDelivery"], table="reminders")
    assert merged == {"producers_paused": True, "consumers_paused": ["WebhookDelivery"]}
    status, body = call_api(
        "POST",
        "/reminders",
        {
            "key": "k",
            "account_id": "a",
            "kind": "k",
            "due_at": "2030-01-01T00:00:00+00:00",
            "channels": [{"type": "email", "to": "x@example.com"}],
            "template": {"id": "t", "version": 1},
        },
    )
    assert status == 503 and body["error"] == "producers_paused"
    assert set_local_consumers(target, False, ["WebhookDelivery"], table="reminders") == {
        "producers_paused": True
    }
    assert set_producers(target, False, table="reminders") == {"producers_paused": False}
