"""The stored history line (adapters/codec.py): one "|"-separated string per attempt, short codes for
the common words, a compact timestamp, and the carried fields (policy version, fingerprint, worker,
destination tag) written as "^" when they repeat the previous line's. Its exact form is what keeps a
delivered item under one write unit; every line reads back as written, and lines stored before (maps,
long timestamps) still read."""

from __future__ import annotations

from reminders.adapters.codec import decode_history, delivery_from_map, encode_history
from reminders.domain.models import Attempt, ChannelType
from reminders.domain.states import DeliveryState

AT = "2026-12-01T09:00:00.123456Z"
AT2 = "2026-12-01T09:00:05.000000Z"

FIRST = Attempt(
    at=AT,
    event="attempt",
    outcome="throttled",
    status=429,
    decision="retry",
    delay_seconds=2.0,
    policy_version="p1",
    fingerprint="fp",
    detail="a|b",
    worker="w1",
    dest="0badc0de",
    repeat=3,
)
SECOND = Attempt(
    at=AT2,
    event="attempt",
    outcome="accepted",
    status=200,
    decision="delivered",
    delay_seconds=0.25,
    policy_version="p1",
    receipt="r-1",
    fingerprint="fp",
    worker="w2",
    dest="0badc0de",
)


def test_a_line_is_stored_compact_with_codes_and_the_fields_it_repeats_as_carets() -> None:
    assert encode_history([FIRST, SECOND]) == [
        "20261201T090000.123456Z|a|th|429|r|2|p1||fp|a/b|w1|0badc0de|3",
        "20261201T090005.000000Z|a|ac|200|dv|0.25|^|r-1|^||w2|^",
    ]


def test_lines_read_back_as_written_but_a_detail_keeps_no_separator() -> None:
    assert decode_history(encode_history([FIRST, SECOND])) == [
        Attempt(**{**_fields(FIRST), "detail": "a/b", "delay_seconds": 2.0}),
        SECOND,
    ]


def test_a_line_with_only_its_time_and_event_stores_no_empty_trailing_fields() -> None:
    line = Attempt(at=AT, event="redrive")
    assert encode_history([line]) == ["20261201T090000.123456Z|redrive"]
    assert decode_history(["20261201T090000.123456Z|redrive"]) == [line]


def test_a_carried_field_that_changes_is_written_and_then_carried_again() -> None:
    lines = [Attempt(at=AT, event="attempt", worker=w) for w in ("w1", "w1", "w2", "w2", "w1")]
    stored = encode_history(lines)
    assert [s.split("|")[10] for s in stored] == ["w1", "^", "w2", "^", "w1"]
    assert decode_history(stored) == lines


def test_a_line_whose_time_is_not_the_long_utc_form_is_stored_and_read_as_it_is() -> None:
    for at in ("2026-12-01T09:00:00Z", "", "20261201T090000.123456", "2026/12/01T09:00:00.123456Z"):
        stored = encode_history([Attempt(at=at, event="skip")])
        assert stored == [f"{at}|skip"]
        assert decode_history(stored) == [Attempt(at=at, event="skip")]


def test_an_unknown_word_is_stored_as_it_is_and_a_code_reads_back_as_its_word() -> None:
    line = Attempt(at=AT, event="watchdog", outcome="odd", decision="hold")
    assert encode_history([line]) == ["20261201T090000.123456Z|watchdog|odd||h"]
    assert decode_history(encode_history([line])) == [line]


def test_lines_stored_before_the_one_string_form_still_read() -> None:
    legacy = {"at": AT, "event": "attempt", "outcome": "timeout", "status": 504, "worker": "w1"}
    short = "20261201T090000.123456Z"  # a line cut after its time (no event field at all)
    assert decode_history([legacy, short]) == [
        Attempt(at=AT, event="attempt", outcome="timeout", status=504, worker="w1"),
        Attempt(at=AT, event=""),
    ]


def test_a_delivery_map_stored_without_a_history_reads_with_an_empty_one() -> None:
    stored = {"t": "webhook", "dst": "https://hooks.example.com/a", "k": "dlv_x", "st": "queued", "rev": 0}
    d = delivery_from_map("webhook-0", stored)
    assert d.history == [] and d.dropped == {} and d.maybe_accepted == []
    assert (d.type, d.state, d.key) == (ChannelType.WEBHOOK, DeliveryState.QUEUED, "dlv_x")


def _fields(a: Attempt) -> dict[str, object]:
    return {k: getattr(a, k) for k in a.__slots__}
