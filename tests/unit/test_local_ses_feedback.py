"""The local SES emulation's mailbox simulator (issue 19): bounce@ gets a permanent bounce instead
of a delivery, complaint@ a delivery then a complaint; each parses as the handler's event model."""

from __future__ import annotations

from typing import Any

from reminders.handlers.ses_events import SesEvent
from reminders_ops.local.ses_events import SesEventPublisher


def _publish(to: str) -> list[tuple[dict[str, Any], float]]:
    out: list[tuple[dict[str, Any], float]] = []
    pub = SesEventPublisher(
        lambda e, delay: out.append((e, delay)),
        account_id="111111111111",
        region="us-east-1",
        destinations={"cs": ["send", "delivery", "bounce", "complaint", "reject"]},
    )
    pub.on_send(
        {
            "ConfigurationSetName": "cs",
            "FromEmailAddress": "reminders@example.com",
            "Destination": {"ToAddresses": [to]},
            "EmailTags": [{"Name": "delivery_key", "Value": "dlv_1"}],
        },
        {"MessageId": "m-1"},
    )
    return out


def test_bounce_simulator_address_gets_a_permanent_bounce_instead_of_a_delivery() -> None:
    events = _publish("bounce@simulator.amazonses.com")
    assert [e["detail-type"] for e, _ in events] == ["Email Sent", "Email Bounced"]
    parsed = SesEvent.model_validate(events[1][0])
    assert parsed.detail.bounce is not None and parsed.detail.bounce.bounceType == "Permanent"
    assert [r.emailAddress for r in parsed.detail.bounce.bouncedRecipients] == [
        "bounce@simulator.amazonses.com"
    ]


def test_complaint_simulator_address_gets_a_delivery_then_a_complaint() -> None:
    events = _publish("complaint@simulator.amazonses.com")
    assert [e["detail-type"] for e, _ in events] == [
        "Email Sent",
        "Email Delivered",
        "Email Complaint Received",
    ]
    assert events[2][1] > events[1][1]  # the complaint comes after the delivery
    parsed = SesEvent.model_validate(events[2][0])
    assert parsed.detail.complaint is not None and parsed.detail.complaint.complainedRecipients


def test_an_ordinary_address_is_sent_then_delivered() -> None:
    assert [e["detail-type"] for e, _ in _publish("someone@example.com")] == ["Email Sent", "Email Delivered"]
