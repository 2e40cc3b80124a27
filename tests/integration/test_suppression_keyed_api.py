"""Issue 19 on moto through the runtime: with the stack's address-hash secret in Secrets Manager the
suppression list is keyed (``k_…``), the API lists and removes keyed entries, and the CLI's
``remove --address`` removes the keyed entry and one written the old (unkeyed) way."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from reminders import runtime
from reminders.domain.address_hash import account_keyed_hash, keyed_hash
from reminders.domain.suppression import SuppressionEntry, SuppressionReason, address_hash

from tests.support.lambda_runtime import call_api

ADDRESS = "someone@example.com"
KEY = "address-hash-key-from-secrets-manager-0123"


@pytest.fixture
def keyed(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    arn = boto3.client("secretsmanager").create_secret(Name="address-hash", SecretString=KEY)["ARN"]
    monkeypatch.setenv("ADDRESS_HASH_SECRET_ARN", arn)
    runtime.reset()
    return aws


def _entry(hashed: str, scope: str = "*") -> SuppressionEntry:
    return SuppressionEntry(
        "acct-7", hashed, SuppressionReason.COMPLAINT, "ses:complaint:f", "2026-11-29T08:00:00Z", scope
    )


def test_keyed_entries_are_listed_and_removed_through_the_api(keyed: dict[str, str]) -> None:
    entries = runtime.suppressions()
    hashed = entries.hash_of("acct-7", ADDRESS)
    assert hashed == account_keyed_hash(ADDRESS, KEY.encode(), "acct-7")
    assert entries.add(_entry(hashed))
    status, body = call_api("GET", "/suppressions", query={"account_id": "acct-7"})
    assert status == 200 and [e["address_hash"] for e in body["entries"]] == [hashed]
    status, body = call_api("DELETE", f"/suppressions/{hashed}", query={"account_id": "acct-7"})
    assert status == 200, body
    assert entries.list("acct-7") == []


def test_cli_remove_by_address_removes_the_keyed_and_the_old_entry(
    keyed: dict[str, str], capsys: Any
) -> None:
    from reminders_ops.cli import main

    entries = runtime.suppressions()
    entries.add(_entry(entries.hash_of("acct-7", ADDRESS)))
    entries.add(_entry(address_hash(ADDRESS), scope="renewal"))  # written before the keyed form
    entries.add(_entry(keyed_hash(ADDRESS, KEY.encode()), scope="trial"))  # before the per-account key
    argv = [
        "suppression",
        "remove",
        "--account",
        "acct-7",
        "--address",
        ADDRESS,
        "--table",
        keyed["TABLE_NAME"],
    ]
    assert main(argv) == 0
    assert entries.list("acct-7") == []
    assert ADDRESS not in capsys.readouterr().out
