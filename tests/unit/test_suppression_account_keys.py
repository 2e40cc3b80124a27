"""Issue 24 item 9: suppression-list address hashes are keyed per account (a key derived by HKDF from
the deployment's key, the account id as its info), so one address has unrelated hashes in two
tenants' lists: no tenant, and nobody holding the table, can link one account's entries to
another's. Entries written under the deployment-wide key (``k_``) or unkeyed (``a_``) keep
suppressing and are re-keyed the first time they match ("look up both, then re-key")."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from reminders.adapters.suppression import DynamoSuppressionList
from reminders.domain.address_hash import AddressHasher, keyed_hash
from reminders.domain.models import ChannelType
from reminders.domain.suppression import ALL_KINDS, SuppressionEntry, SuppressionReason, address_hash
from reminders.domain.unsubscribe import make_token
from reminders.services.intents import ChannelSpec
from reminders.services.unsubscribe import Unsubscribe

from tests.unit.fakes import T0, World

KEY = b"per-deployment-address-hash-key-0123456789"
EMAIL = "user@example.com"
MAIL = (ChannelSpec(ChannelType.EMAIL, EMAIL),)
UNSUBSCRIBE_KEY = b"unsubscribe-test-key-0123456789ab"


@pytest.fixture
def w() -> World:
    world = World()
    world.suppressions.hasher = AddressHasher(lambda: KEY)
    return world


def _bounce(w: World, account: str, key: str) -> None:
    r = w.create(key, channels=MAIL, account_id=account)
    w.poll("email")
    d = w.delivery(r.id, "email-0")
    w.reconciler.provider_feedback(
        r.id, "email-0", d.key, "bounced", "ses-1", recipients=[EMAIL], suppress=True, source=f"ses:{key}"
    )


def _entry(hashed: str, account: str = "acct-1", scope: str = ALL_KINDS) -> SuppressionEntry:
    return SuppressionEntry(
        account, hashed, SuppressionReason.BOUNCE, "ses:bounce:old", "2026-11-29T12:00:00Z", scope
    )


def test_one_address_hashes_differently_in_two_accounts(w: World) -> None:
    _bounce(w, "acct-1", "renewal:acct-1:k1")
    _bounce(w, "acct-2", "renewal:acct-2:k1")
    (one,) = w.suppressions.list("acct-1")
    (two,) = w.suppressions.list("acct-2")
    assert one.address_hash != two.address_hash
    # neither is the deployment-wide form an operator (or a leaked table) could compare across tenants
    assert keyed_hash(EMAIL, KEY) not in (one.address_hash, two.address_hash)
    # and each still suppresses in its own account
    for account in ("acct-1", "acct-2"):
        r = w.create(f"renewal:{account}:k2", channels=MAIL, account_id=account)
        assert [x.outcome for x in w.poll("email")] == ["suppressed"]
        assert w.delivery(r.id, "email-0").dead_letter_reason == "suppressed"


@pytest.mark.parametrize("old", ["deployment-keyed", "unkeyed"])
def test_suppression_entry_keyed_by_old_hash_is_found_and_rekeyed(w: World, old: str) -> None:
    hashed = keyed_hash(EMAIL, KEY) if old == "deployment-keyed" else address_hash(EMAIL)
    assert w.suppressions.add(_entry(hashed))
    r = w.create("k1", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(r.id, "email-0").dead_letter_reason == "suppressed"
    (entry,) = w.suppressions.list("acct-1")
    assert entry.address_hash not in (keyed_hash(EMAIL, KEY), address_hash(EMAIL))
    assert entry.address_hash == w.suppressions.hash_of("acct-1", EMAIL)
    assert (entry.reason, entry.source, entry.at) == (
        SuppressionReason.BOUNCE,
        "ses:bounce:old",
        "2026-11-29T12:00:00Z",
    )
    # another account's entry under the old key is not moved into acct-1 (nor the reverse)
    assert w.suppressions.find("acct-2", EMAIL, "renewal") is None


def test_unsubscribe_tokens_carry_the_accounts_hash_and_a_token_with_the_old_hash_still_suppresses(
    w: World,
) -> None:
    unsub = Unsubscribe(
        suppressions=w.suppressions,
        secret=lambda: UNSUBSCRIBE_KEY,
        clock=w.clock,
        telemetry=w.telemetry,
        base_url="https://x",
    )
    r = w.create("k1", channels=MAIL)
    reminder = w.store.get(r.id)
    assert reminder is not None
    assert unsub.unsubscribe(unsub.token(reminder, reminder.deliveries["email-0"]))
    (entry,) = w.suppressions.list("acct-1")
    assert entry.address_hash != keyed_hash(EMAIL, KEY)
    assert w.suppressions.find("acct-1", EMAIL, "renewal") is not None
    # a link mailed before the change names the deployment-wide hash: it still suppresses, and the
    # entry is re-keyed for its account at the next check
    old = make_token(
        UNSUBSCRIBE_KEY,
        account_id="acct-2",
        kind="renewal",
        address_hash=keyed_hash(EMAIL, KEY),
        delivery_key="dlv_1",
        due_at=T0,
    )
    unsub.unsubscribe(old)
    assert w.suppressions.find("acct-2", EMAIL, "renewal") is not None
    (moved,) = w.suppressions.list("acct-2")
    assert moved.address_hash not in (keyed_hash(EMAIL, KEY), entry.address_hash)


def test_dynamodb_reads_the_account_and_the_old_keys_in_one_batch_and_rekeys_the_old() -> None:
    from reminders_ops.bench.sim.embedded import create_stack_resources

    with mock_aws():
        table = create_stack_resources()["TABLE_NAME"]
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        entries = DynamoSuppressionList(ddb, table, hasher=AddressHasher(lambda: KEY))
        assert entries.add(_entry(keyed_hash(EMAIL, KEY), scope="renewal"))
        assert entries.add(_entry(keyed_hash(EMAIL, KEY), account="acct-2"))
        found = entries.find("acct-1", EMAIL, "renewal")
        assert found is not None and found.scope == "renewal"
        keys = sorted((i["pk"]["S"], i["sk"]["S"]) for i in ddb.scan(TableName=table)["Items"])
        new = found.address_hash
        assert new != keyed_hash(EMAIL, KEY)
        # acct-1's entry moved to its own key; acct-2's entry is untouched until acct-2 checks
        assert keys == [("SUP#acct-1", f"{new}#renewal"), ("SUP#acct-2", f"{keyed_hash(EMAIL, KEY)}#*")]
        other = entries.find("acct-2", EMAIL, ALL_KINDS)
        assert other is not None and other.address_hash not in (new, keyed_hash(EMAIL, KEY))


def test_the_account_keys_are_hkdf_sha256_of_the_deployment_key() -> None:
    """RFC 5869 test case 1 (the derivation is the standard one), and the key depends on the account."""
    from reminders.domain.address_hash import account_key, hkdf_sha256

    okm = hkdf_sha256(
        bytes.fromhex("0b" * 22),
        salt=bytes.fromhex("000102030405060708090a0b0c"),
        info=bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"),
        length=42,
    )
    assert okm.hex() == (
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
    )
    keys = {account_key(KEY, a) for a in ("acct-1", "acct-2", "acct-10", "acct-1\x1f")}
    assert len(keys) == 4 and KEY not in keys and all(len(k) == 32 for k in keys)
