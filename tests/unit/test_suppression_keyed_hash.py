"""Issue 19: suppression-list keys are keyed hashes of the address (HMAC-SHA256 under a per-deployment
secret), not a bare SHA-256 that a dictionary of addresses reverses. Entries written the old way
keep suppressing during the transition, and are re-keyed the first time they match."""

from __future__ import annotations

import hashlib

import boto3
import pytest
from moto import mock_aws
from reminders.adapters.suppression import DynamoSuppressionList, MemorySuppressionList
from reminders.domain.address_hash import AddressHasher, account_keyed_hash
from reminders.domain.models import ChannelType
from reminders.domain.suppression import ALL_KINDS, SuppressionEntry, SuppressionReason, address_hash
from reminders.domain.unsubscribe import make_token
from reminders.services.intents import ChannelSpec
from reminders.services.unsubscribe import Unsubscribe

from tests.unit.fakes import T0, World

KEY = b"per-deployment-address-hash-key-0123456789"
EMAIL = "user@example.com"
MAIL = (ChannelSpec(ChannelType.EMAIL, EMAIL),)


@pytest.fixture
def w() -> World:
    world = World()
    world.suppressions.hasher = AddressHasher(lambda: KEY)
    return world


def _legacy_entry(account: str = "acct-1", scope: str = ALL_KINDS) -> SuppressionEntry:
    return SuppressionEntry(
        account,
        address_hash(EMAIL),
        SuppressionReason.BOUNCE,
        "ses:bounce:old",
        "2026-11-29T12:00:00Z",
        scope,
    )


def test_address_hashes_are_keyed_so_a_dictionary_of_addresses_does_not_reverse_them() -> None:
    hashed = AddressHasher(lambda: KEY).hash("acct-1", "  USER@Example.com ")
    assert (
        hashed == account_keyed_hash(EMAIL, KEY, "acct-1") and hashed.startswith("t_") and len(hashed) == 34
    )
    dictionary = {address_hash(a): a for a in (EMAIL, "other@example.com")}
    plain = {"a_" + hashlib.sha256(a.encode()).hexdigest()[:32] for a in (EMAIL,)}
    assert hashed not in dictionary and hashed not in plain
    assert account_keyed_hash(EMAIL, b"another-deployment-key-0123456789", "acct-1") != hashed


def test_a_bounce_writes_a_keyed_entry_that_suppresses_the_next_reminder(w: World) -> None:
    r = w.create("k1", channels=MAIL)
    w.poll("email")
    d = w.delivery(r.id, "email-0")
    w.reconciler.provider_feedback(
        r.id, "email-0", d.key, "bounced", "ses-1", recipients=[EMAIL], suppress=True, source="ses:bounce:f1"
    )
    (entry,) = w.suppressions.list("acct-1")
    assert entry.address_hash == account_keyed_hash(EMAIL, KEY, "acct-1") != address_hash(EMAIL)
    r2 = w.create("k2", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(r2.id, "email-0").dead_letter_reason == "suppressed"


def test_an_entry_written_the_old_way_still_suppresses_and_is_rekeyed_when_it_matches(w: World) -> None:
    assert w.suppressions.add(_legacy_entry())
    r = w.create("k1", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(r.id, "email-0").dead_letter_reason == "suppressed"
    (entry,) = w.suppressions.list("acct-1")  # re-keyed: the unsalted hash is gone from the table
    assert entry.address_hash == account_keyed_hash(EMAIL, KEY, "acct-1")
    assert (entry.reason, entry.source, entry.at) == (
        SuppressionReason.BOUNCE,
        "ses:bounce:old",
        "2026-11-29T12:00:00Z",
    )


def test_unsubscribe_tokens_carry_the_keyed_hash_and_an_old_token_still_suppresses(w: World) -> None:
    secret = b"unsubscribe-test-key-0123456789ab"
    unsub = Unsubscribe(
        suppressions=w.suppressions,
        secret=lambda: secret,
        clock=w.clock,
        telemetry=w.telemetry,
        base_url="https://x",
    )
    r = w.create("k1", channels=MAIL)
    reminder = w.store.get(r.id)
    assert reminder is not None
    token = unsub.token(reminder, reminder.deliveries["email-0"])
    assert unsub.unsubscribe(token)
    (entry,) = w.suppressions.list("acct-1")
    assert entry.address_hash == account_keyed_hash(EMAIL, KEY, "acct-1")
    # A link mailed before the change (60 days valid) names the old hash: it still suppresses.
    old = make_token(
        secret,
        account_id="acct-2",
        kind="renewal",
        address_hash=address_hash(EMAIL),
        delivery_key="dlv_1",
        due_at=T0,
    )
    unsub.unsubscribe(old)
    assert w.suppressions.find("acct-2", EMAIL, "renewal") is not None


def test_without_a_key_hashes_stay_the_unkeyed_form_of_before() -> None:
    entries = MemorySuppressionList()
    assert entries.hash_of("acct-1", EMAIL) == address_hash(EMAIL)


def test_dynamodb_list_reads_old_and_new_keys_in_one_batch_and_rekeys_the_old() -> None:
    from reminders_ops.bench.sim.embedded import create_stack_resources

    with mock_aws():
        table = create_stack_resources()["TABLE_NAME"]  # the stack's table, as the runtime has it
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        entries = DynamoSuppressionList(ddb, table, hasher=AddressHasher(lambda: KEY))
        assert entries.add(_legacy_entry(scope="renewal"))
        found = entries.find("acct-1", EMAIL, "renewal")
        assert found is not None and found.scope == "renewal"
        keys = [i["sk"]["S"] for i in ddb.scan(TableName=table)["Items"]]
        assert keys == [f"{account_keyed_hash(EMAIL, KEY, 'acct-1')}#renewal"]
        assert entries.find("acct-1", EMAIL, "other-kind") is None
        assert entries.find("acct-1", EMAIL, "renewal") is not None
