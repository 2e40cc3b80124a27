"""Issue 31 item e: the subsegments of a send, a receipt and a stream record carry ids only; an
error inside one is recorded by its type, never its message (it may carry data), and raised on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from reminders.adapters.tracing import ids_only
from reminders.handlers.tracing import ids


class Sub:
    def __init__(self) -> None:
        self.annotations: dict[str, str] = {}
        self.fault = False
        self.exceptions: list[BaseException] = []

    def put_annotation(self, key: str, value: str) -> None:
        self.annotations[key] = value

    def add_fault_flag(self) -> None:
        self.fault = True


class Provider:
    """The X-Ray recorder's ``in_subsegment``: records the exception it sees leave the block."""

    def __init__(self) -> None:
        self.subs: list[Sub] = []

    @contextlib.contextmanager
    def in_subsegment(self, name: str) -> Iterator[Sub]:
        sub = Sub()
        self.subs.append(sub)
        try:
            yield sub
        except Exception as exc:
            sub.exceptions.append(exc)
            raise


class Tracer:
    def __init__(self) -> None:
        self.provider = Provider()


def test_an_error_in_a_traced_record_is_recorded_by_its_type_when_its_message_carries_data() -> None:
    tracer: Any = Tracer()
    with (
        pytest.raises(ValueError, match=r"jane\.doe@example\.com refused"),
        ids_only(tracer, "## receipt merge", reminder_id="rem_" + "a" * 32),
    ):
        raise ValueError("jane.doe@example.com refused")
    (sub,) = tracer.provider.subs
    assert sub.exceptions == [] and sub.fault
    assert sub.annotations == {"reminder_id": "rem_" + "a" * 32, "error": "ValueError"}


def test_a_record_annotates_only_values_with_the_form_of_an_id_when_its_item_holds_anything() -> None:
    good = {"reminder_id": "rem_" + "0" * 32, "delivery_key": "dlv_" + "f" * 32}
    assert ids(**good) == good
    assert ids(reminder_id="jane.doe@example.com", delivery_key=None, other="rem_" + "0" * 32) == {}


def test_an_error_message_never_leaves_in_a_segment_when_a_traced_aws_call_fails() -> None:
    """The X-Ray SDK's botocore patch records a failed call's exception with its message (SES's
    sandbox refusal names the recipient's address): the emitter sends each exception by its type."""
    import json
    import socket

    from aws_xray_sdk.core.models.segment import Segment
    from aws_xray_sdk.core.models.subsegment import Subsegment
    from reminders.adapters.tracing import IdsOnlyEmitter

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(5.0)
    try:
        segment = Segment("reminders-email", traceid="1-67a0b1c2-0123456789abcdef01234567", sampled=True)
        sub = Subsegment("SESV2", "aws", segment)
        segment.add_subsegment(sub)
        sub.add_exception(ValueError("identities failed the check: jane.doe@example.com"), [], True)
        sub.close()
        segment.close()
        IdsOnlyEmitter(f"127.0.0.1:{udp.getsockname()[1]}").send_entity(segment)
        header, _, body = udp.recv(65536).decode().partition("\n")
    finally:
        udp.close()
    assert json.loads(header)["format"] == "json"
    doc = json.loads(body)
    (exc,) = doc["subsegments"][0]["cause"]["exceptions"]
    assert exc["type"] == "ValueError" and "jane.doe" not in body
