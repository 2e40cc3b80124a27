"""A delivery record the worker cannot read is refused saying why (MISSION §8: survivors of
`make mutate` in services/delivery/messages.py): the reason is what an operator reads on the failed
record before maxReceiveCount moves it to the dead-letter queue."""

from __future__ import annotations

import pytest
from reminders.domain.errors import MalformedMessageError
from reminders.services.delivery.messages import DeliveryMessage


@pytest.mark.parametrize("body", [["reminder_id"], "rem_1", None, 7])
def test_a_record_is_refused_as_not_an_object_when_its_body_is_no_json_object(body: object) -> None:
    with pytest.raises(MalformedMessageError, match=r"^body is not a JSON object$"):
        DeliveryMessage.parse(body)


@pytest.mark.parametrize("missing", ["reminder_id", "channel_id", "version"])
def test_a_record_is_refused_naming_the_field_when_a_field_is_missing(missing: str) -> None:
    body: dict[str, object] = {"reminder_id": "rem_1", "channel_id": "webhook-0", "version": 1}
    del body[missing]
    with pytest.raises(MalformedMessageError, match=rf"^missing {missing}$"):
        DeliveryMessage.parse(body)


def test_a_record_is_read_whole_when_every_field_has_its_type() -> None:
    body = {"reminder_id": "rem_1", "channel_id": "webhook-0", "version": 3}
    assert DeliveryMessage.parse(body) == DeliveryMessage("rem_1", "webhook-0", 3)
    with pytest.raises(MalformedMessageError, match="version an integer"):
        DeliveryMessage.parse({**body, "version": "3"})
