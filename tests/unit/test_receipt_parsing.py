"""A receiver's receipt body is read whole or refused naming the field (MISSION §8: survivors of
`make mutate` in services/receipts.py; a 400 names its field, nothing written)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from reminders.domain.receipts import ReceiptRejectedError, ReceiptStatus
from reminders.services.receipts import parse_receipt

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
WEBHOOK_ID, REMINDER_ID = "dlv_" + "a" * 32, "rem_" + "b" * 32


def _body(**changes: Any) -> dict[str, Any]:
    body = {
        "webhook_id": WEBHOOK_ID,
        "reminder_id": REMINDER_ID,
        "event_id": "evt-1",
        "status": "processed",
        "event_time": "2026-11-29T11:59:00Z",
    }
    return {**body, **changes}


def _refused(body: object) -> ReceiptRejectedError:
    with pytest.raises(ReceiptRejectedError) as refused:
        parse_receipt(body, NOW)
    return refused.value


def test_a_receipt_is_refused_naming_the_unknown_field_when_the_body_carries_one() -> None:
    refused = _refused(_body(zz_extra=1, amount=3))
    assert (str(refused), refused.field) == ("amount: unknown field", "amount")


@pytest.mark.parametrize("when", ["1999-12-31T23:59:59Z", "2026-11-29T12:05:01Z"])
def test_a_receipt_is_refused_naming_event_time_when_it_is_outside_its_range(when: str) -> None:
    refused = _refused(_body(event_time=when))
    assert (str(refused), refused.field) == ("event_time: outside 2000-01-01 .. now + 5 min", "event_time")


@pytest.mark.parametrize("when", ["2000-01-01T00:00:00Z", "2026-11-29T12:05:00Z"])
def test_a_receipt_is_read_when_its_event_time_is_at_either_end_of_its_range(when: str) -> None:
    webhook_id, reminder_id, receipt = parse_receipt(_body(event_time=when), NOW)
    assert (webhook_id, reminder_id, receipt.status) == (WEBHOOK_ID, REMINDER_ID, ReceiptStatus.PROCESSED)
    assert receipt.event_time.startswith(when[:19])


#: An event time of 40 characters (the most a receipt's may have) and one of 41.
LONGEST = "2026-11-29T11:59:00." + "0" * 14 + "+00:00"
TOO_LONG = "2026-11-29T11:59:00." + "0" * 15 + "+00:00"


@pytest.mark.parametrize("when", ["2026-11-29T11:59:00", "yesterday", TOO_LONG])
def test_a_receipt_is_refused_naming_event_time_when_it_is_no_bounded_time_with_an_offset(when: str) -> None:
    refused = _refused(_body(event_time=when))
    assert (str(refused), refused.field) == ("event_time: an ISO-8601 time with offset", "event_time")
    assert len(LONGEST) == 40 and parse_receipt(_body(event_time=LONGEST), NOW)[2].event_time.startswith(
        "2026"
    )
