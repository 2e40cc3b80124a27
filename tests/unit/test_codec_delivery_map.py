"""Issue 32 item 3: the delivery map is built on every claim and record; its cheaper loop writes the
same map (the same keys, in the same order, the same value types) as the reference it replaced."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from reminders.adapters.codec import _DELIVERY_FIELDS, delivery_to_map, encode_history, to_dynamo
from reminders.domain.models import Attempt, ChannelType, Delivery
from reminders.domain.states import DeliveryState


def reference(d: Delivery) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for short, name in _DELIVERY_FIELDS.items():
        v = getattr(d, name)
        if v is None or v is False or (short in ("ts", "ma", "rs") and not v):
            continue
        if short == "ma" and d.state is DeliveryState.DELIVERED:
            continue
        out[short] = v.value if isinstance(v, ChannelType | DeliveryState) else v
    out["rev"] = d.rev
    out["h"] = encode_history(d.history)
    if d.dropped:
        out["hx"] = dict(d.dropped)
    return to_dynamo(out)


BASE = Delivery("webhook-0", ChannelType.WEBHOOK, "https://hooks.example.com/a", "dlv_x")
LINE = Attempt(at="2026-12-01T09:00:00.000000Z", event="attempt", outcome="timeout", delay_seconds=1.5)


@pytest.mark.parametrize(
    "d",
    [
        BASE,
        replace(
            BASE, state=DeliveryState.SENDING, lease_owner="w", lease_until="2026-12-01T09:01:00.000000Z"
        ),
        replace(
            BASE, state=DeliveryState.DELIVERED, maybe_accepted=["0badc0de"], receipt="r", history=[LINE]
        ),
        replace(
            BASE, state=DeliveryState.RETRYABLE, maybe_accepted=["0badc0de"], resend=2, throttle_streak=3
        ),
        replace(
            BASE, state=DeliveryState.DEAD_LETTER, dlq_pending=True, last_error={"class": "x", "status": None}
        ),
        replace(BASE, throttle_streak=0, resend=0, maybe_accepted=[], dropped={"throttled": 2}, rev=7),
        replace(BASE, type=ChannelType.EMAIL, feedback="bounced", receiver_receipt="p|t|e", parked_until="x"),
    ],
)
def test_the_delivery_map_is_the_reference_map_when_fields_are_empty_set_or_enums(d: Delivery) -> None:
    got, want = delivery_to_map(d), reference(d)
    assert got == want and list(got) == list(want)
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
