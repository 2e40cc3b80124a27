"""The scheduling rule (MISSION §2) and the due-index keys, with fixed instants (no wall clock)."""

from __future__ import annotations

import math
import random
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reminders.domain.models import reminder_id
from reminders.domain.schedule import (
    ACCOUNT_TAG_LENGTH,
    INDEX_LAG_MARGIN_SECONDS,
    PRE_CLAIM_WAIT_MAX_SECONDS,
    SQS_MAX_DELAY_SECONDS,
    WHOLE_BUCKET,
    account_range,
    account_tag,
    bucket_of,
    bucket_start,
    delay_seconds,
    dispatch_horizon,
    due_attributes,
    index_pk,
    index_sk,
    iso,
    next_bucket,
    parse_iso,
    shard_of,
    sk_current,
    sk_due,
    sk_tag,
    untagged_position,
    utc,
    within_window,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


# -- the 900 s window ---------------------------------------------------------------------------------
def test_window_is_the_sqs_maximum_delay() -> None:
    assert SQS_MAX_DELAY_SECONDS == 900


def test_exactly_900_seconds_is_within_the_window_with_delay_900() -> None:
    assert within_window(at(900), NOW)
    assert delay_seconds(at(900), NOW) == 900


def test_899_seconds_is_within_the_window() -> None:
    assert within_window(at(899), NOW)
    assert delay_seconds(at(899), NOW) == 899


def test_901_seconds_is_scheduled() -> None:
    assert not within_window(at(901), NOW)


def test_900_and_a_fraction_is_scheduled() -> None:
    assert not within_window(at(900.001), NOW)


@pytest.mark.parametrize("overdue", [0, 0.4, 1, 59, 3600, 86400 * 30])
def test_overdue_is_within_the_window_with_delay_zero(overdue: float) -> None:
    assert within_window(at(-overdue), NOW)
    assert delay_seconds(at(-overdue), NOW) == 0


@pytest.mark.parametrize(
    ("remaining", "expected"), [(0.000001, 0), (0.5, 0), (1.2, 1), (898.01, 898), (899.5, 899)]
)
def test_fractional_seconds_round_down_and_the_message_carries_the_due_time(
    remaining: float, expected: int
) -> None:
    assert delay_seconds(at(remaining), NOW) == expected
    assert due_attributes(at(remaining)) == {"due": iso(at(remaining))}


@settings(max_examples=150, deadline=None)
@given(micros=st.integers(min_value=-(10**9), max_value=900 * 10**6))
def test_a_message_delayed_by_delay_seconds_arrives_less_than_a_second_before_it_is_due(micros: int) -> None:
    """Never early is the consumer's part (it waits out the rest before it claims:
    tests/unit/test_subsecond.py); the delay leaves it less than a second to wait, and is never late."""
    due = NOW + timedelta(microseconds=micros)
    d = delay_seconds(due, NOW)
    assert 0 <= d <= SQS_MAX_DELAY_SECONDS
    assert NOW + timedelta(seconds=d) <= max(due, NOW)  # visible no later than due
    assert (due - NOW).total_seconds() - d < PRE_CLAIM_WAIT_MAX_SECONDS or d == SQS_MAX_DELAY_SECONDS


def test_delay_is_clamped_to_900() -> None:
    assert delay_seconds(at(86400), NOW) == 900


def test_dispatch_horizon_keeps_a_margin_inside_the_window() -> None:
    assert dispatch_horizon(NOW) == at(SQS_MAX_DELAY_SECONDS - INDEX_LAG_MARGIN_SECONDS)
    assert dispatch_horizon(NOW, 100) == at(75)  # the margin is at most a quarter of a small window


# -- time formats ---------------------------------------------------------------------------------------
def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError):
        utc(datetime(2026, 11, 29, 12, 0))


def test_iso_is_utc_fixed_width_and_round_trips() -> None:
    local = datetime(2026, 11, 29, 13, 30, 0, 5, tzinfo=timezone(timedelta(hours=1, minutes=30)))
    assert iso(local) == "2026-11-29T12:00:00.000005Z"
    assert parse_iso(iso(local)) == local
    assert len(iso(NOW)) == len(iso(at(0.123456))) == len("2026-11-29T12:00:00.000000Z")


# -- buckets and index keys ---------------------------------------------------------------------------------
def test_minute_buckets() -> None:
    assert bucket_of(at(59.999)) == "202611291200"
    assert bucket_of(at(60)) == "202611291201"
    assert bucket_start("202611291201") == at(60)
    assert next_bucket("202611292359") == "202611300000"
    assert next_bucket("202612312359") == "202701010000"
    assert bucket_of(datetime(2026, 11, 29, 13, 0, tzinfo=timezone(timedelta(hours=1)))) == "202611291200"


def test_index_partition_key_is_fixed_width() -> None:
    assert index_pk("202611291200", 7) == "202611291200#007"
    assert index_pk("202611291200", 999) == "202611291200#999"
    assert len({len(index_pk("202611291200", s)) for s in range(1000)}) == 1


def test_index_sort_key_is_fixed_width_and_leads_with_the_accounts_tag() -> None:
    rid = reminder_id("acct", "k")
    sk = index_sk(NOW, rid, "acct")
    assert sk == f"{account_tag('acct')}2026-11-29T12:00:00.000000Z#{rid.removeprefix('rem_')}"
    assert len(index_sk(at(0.5), reminder_id("b", "x"), "b" * 128)) == len(sk)
    assert (sk_due(sk), sk_tag(sk)) == ("2026-11-29T12:00:00.000000Z", account_tag("acct"))
    # an entry written before the tag still reads its due time
    assert sk_due(f"2026-11-29T12:00:00.000000Z#{rid}") == "2026-11-29T12:00:00.000000Z"
    after, until = account_range("acct")
    assert after < sk <= until
    assert not after < index_sk(NOW, rid, "acct-2") <= until


def test_every_reader_takes_the_three_forms_of_the_due_index_sort_key() -> None:
    """Untagged (before the tag), the previous build's 8-character tag, this build's 16."""
    rid = reminder_id("acct", "k")
    hex_id = rid.removeprefix("rem_")
    due = "2026-11-29T12:00:00.000000Z"
    tag = account_tag("acct")
    for sk, tagged in [
        (f"{due}#{rid}", ""),
        (f"{tag[:8]}{due}#{hex_id}", tag[:8]),
        (index_sk(NOW, rid, "acct"), tag),
    ]:
        assert (sk_due(sk), sk_tag(sk), sk_current(sk)) == (due, tagged, tagged == tag)
        assert untagged_position(sk, rid) == f"{due}#{rid}"
    assert (
        sk_due(f"{tag}0999-01-01T00:00:00.000000Z#x"),
        sk_tag(f"{tag[:8]}0999-01-01T00:00:00.000000Z#x"),
    ) == (
        "0999-01-01T00:00:00.000000Z",
        tag[:8],
    )


def test_an_entry_rewritten_from_an_older_form_moves_forward_in_its_partition() -> None:
    """This build's tag begins with the previous build's (40 bits of blake2b): a backfill's rewrite
    never moves an entry behind a dispatcher's page (every year 2000-2099), and no older entry is in
    an account's range."""
    from tests.unit.test_previous_tag_form import previous_tag

    for i in range(500):
        acct = f"acct-{i}"
        rid = reminder_id(acct, "k")
        when = at(i * 3600.5)
        new = index_sk(when, rid, acct)
        previous = f"{previous_tag(acct)}{iso(when)}#{rid.removeprefix('rem_')}"
        untagged = f"{iso(when)}#{rid}"
        assert untagged < previous < new
        after, until = account_range(acct)
        assert not after < previous <= until and not after < untagged <= until


def test_every_accounts_tag_is_below_the_whole_bucket_bound() -> None:
    tags = {account_tag(f"acct-{i}") for i in range(2000)}
    assert all(len(t) == ACCOUNT_TAG_LENGTH and t + "~" < WHOLE_BUCKET for t in tags)


def test_ten_thousand_distinct_accounts_get_ten_thousand_distinct_tags() -> None:
    """A property of 80 bits (the previous build's 40 let a birthday search find a pair in seconds):
    numbered ids, the previous build's colliding pair among them, and random UUIDs."""
    rnd = random.Random(28)
    ids = [f"acct-{i}" for i in range(1_493_128, 1_498_128)] + ["acct-1675534"]
    ids += [str(uuid.UUID(int=rnd.getrandbits(128), version=4)) for _ in range(10_000 - len(ids))]
    assert len(set(ids)) == 10_000
    assert len({account_tag(a) for a in ids}) == 10_000


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.datetimes(
                min_value=datetime(2000, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)
            ),
            st.text(min_size=1, max_size=8),
        ),
        min_size=2,
        max_size=30,
    )
)
def test_one_accounts_sort_keys_order_like_due_times(items: list[tuple[datetime, str]]) -> None:
    keyed = [(due, index_sk(due, reminder_id("a", k), "a")) for due, k in items]
    by_key = sorted(keyed, key=lambda p: p[1])
    assert [d for d, _ in by_key] == sorted(d for d, _ in keyed)


def test_shard_is_stable_and_in_range() -> None:
    rid = reminder_id("acct-1", "renewal:acct-1:2026-12-20")
    assert shard_of(rid, 16) == shard_of(rid, 16)
    assert all(0 <= shard_of(reminder_id("a", str(i)), 7) < 7 for i in range(500))


@pytest.mark.parametrize("shards", [4, 16, 64])
def test_shards_are_roughly_uniform(shards: int) -> None:
    n = 1000 * shards
    counts = Counter(shard_of(reminder_id("acct", f"cart-expiry:acct:{i}"), shards) for i in range(n))
    assert set(counts) == set(range(shards))
    expected = n / shards
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    # chi-square with shards-1 degrees of freedom: mean k-1, sd sqrt(2(k-1)); 6 sd is no flake.
    assert chi2 < (shards - 1) + 6 * math.sqrt(2 * (shards - 1))
    assert max(counts.values()) < 1.15 * expected and min(counts.values()) > 0.85 * expected


def test_one_minute_of_one_account_spreads_over_every_shard() -> None:
    """A million reminders due in the same minute must not share one partition."""
    pks = {index_pk(bucket_of(NOW), shard_of(reminder_id("acct-1", f"k{i}"), 16)) for i in range(2000)}
    assert len(pks) == 16


# -- years before 1000 (issue 10, item 4) ----------------------------------------------------------
def test_every_year_from_1_to_9999_is_zero_padded_and_round_trips() -> None:
    previous = ""
    for year in range(1, 10000):
        when = datetime(year, 3, 4, 5, 6, 7, 89, tzinfo=UTC)
        text = iso(when)
        assert len(text) == 27 and text.startswith(f"{year:04d}-")
        assert parse_iso(text) == when
        assert text > previous  # lexical order is time order, across 999 -> 1000 too
        previous = text
        bucket = bucket_of(when)
        assert len(bucket) == 12 and bucket_start(bucket) == when.replace(second=0, microsecond=0)
        assert index_sk(when, "rem_x", "a") == f"{account_tag('a')}{text}#x"


# -- parse_iso without the replace and the conversion (issue 32 item 3) ---------------------------
@pytest.mark.parametrize(
    "text",
    [
        "2026-12-01T09:00:00.000000Z",
        "0999-01-02T03:04:05.000006Z",
        "2026-12-01T09:00:00Z",
        "2026-12-01T09:00:00+00:00",
        "2026-12-01T09:00:00.5+02:00",
        "2026-12-01T09:00:00-05:30",
        "2026-12-01T09:00:00",  # naive: read as local time, as astimezone reads it
        "2026-12-01",
    ],
)
def test_parse_iso_is_the_same_utc_time_when_the_offset_is_utc_other_or_absent(text: str) -> None:
    before = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    got = parse_iso(text)
    assert got == before and got.tzinfo is UTC and got.isoformat() == before.isoformat()
