"""SES event publishing, which moto does not do: each email the emulator's SES v2 accepts with a
configuration set whose event destination is EventBridge becomes the events SES would publish to
the default bus ("Email Sent", then "Email Delivered"), with the email's tags — a moment later, as
SES publishes them. The mailbox simulator's bounce@ and complaint@simulator.amazonses.com get a
permanent "Email Bounced" (instead of the delivery) and a delivery then "Email Complaint Received".

moto keeps neither the tags nor the configuration set of a raw email, so the runtime wraps moto's
``SendEmail`` handler in this process (only while the runtime runs) to see the request.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

SEND_DELAY_SECONDS = 1.0
DELIVERY_DELAY_SECONDS = 2.0
#: SES event type (in MatchingEventTypes) -> (eventType in the detail, EventBridge detail-type)
EVENT_TYPES = {
    "send": ("Send", "Email Sent"),
    "delivery": ("Delivery", "Email Delivered"),
    "bounce": ("Bounce", "Email Bounced"),
    "complaint": ("Complaint", "Email Complaint Received"),
}
#: SES mailbox simulator addresses and what SES reports for them after the send (issue 19): a
#: permanent bounce instead of a delivery; a delivery and then a complaint.
SIMULATOR = {
    "bounce@simulator.amazonses.com": ("bounce",),
    "complaint@simulator.amazonses.com": ("delivery", "complaint"),
}
BOUNCE_DELAY_SECONDS = 2.0
COMPLAINT_DELAY_SECONDS = 3.0


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def ses_event(
    event_type: str,
    *,
    account_id: str,
    region: str,
    configuration_set: str,
    message_id: str,
    source: str,
    destinations: list[str],
    tags: Mapping[str, str],
    sent_at: datetime,
) -> dict[str, Any]:
    """An SES event as EventBridge delivers it (source ``aws.ses``)."""
    detail_type_name, detail_type = EVENT_TYPES[event_type]
    now = datetime.now(UTC)
    mail_tags = {
        "ses:configuration-set": [configuration_set],
        "ses:source-ip": ["127.0.0.1"],
        "ses:from-domain": [source.rsplit("@", 1)[-1]],
        "ses:caller-identity": ["local"],
        **{k: [v] for k, v in tags.items()},
    }
    detail: dict[str, Any] = {
        "eventType": detail_type_name,
        "mail": {
            "timestamp": _iso(sent_at),
            "source": source,
            "sendingAccountId": account_id,
            "messageId": message_id,
            "destination": destinations,
            "headersTruncated": False,
            "tags": mail_tags,
        },
    }
    if event_type == "send":
        detail["send"] = {}
    elif event_type == "bounce":
        detail["bounce"] = {
            "feedbackId": f"local-{uuid.uuid4()}",
            "bounceType": "Permanent",
            "bounceSubType": "General",
            "bouncedRecipients": [
                {
                    "emailAddress": d,
                    "action": "failed",
                    "status": "5.1.1",
                    "diagnosticCode": "smtp; 550 5.1.1",
                }
                for d in destinations
            ],
            "timestamp": _iso(now),
            "reportingMTA": "dns; local.smtp-out.amazonses.com",
        }
    elif event_type == "complaint":
        detail["complaint"] = {
            "feedbackId": f"local-{uuid.uuid4()}",
            "complainedRecipients": [{"emailAddress": d} for d in destinations],
            "complaintFeedbackType": "abuse",
            "timestamp": _iso(now),
        }
    else:
        detail["delivery"] = {
            "timestamp": _iso(now),
            "processingTimeMillis": int((now - sent_at).total_seconds() * 1000),
            "recipients": destinations,
            "smtpResponse": "250 2.6.0 Message received (local emulator)",
            "reportingMTA": "local.smtp-out.amazonses.com",
        }
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": detail_type,
        "source": "aws.ses",
        "account": account_id,
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:ses:{region}:{account_id}:configuration-set/{configuration_set}"],
        "detail": detail,
    }


class SesEventPublisher:
    """While installed, turns every SES v2 ``SendEmail`` the emulator accepts into bus events."""

    def __init__(
        self,
        put: Callable[[dict[str, Any], float], None],
        *,
        account_id: str,
        region: str,
        destinations: Mapping[str, list[str]],  # configuration set name -> SES event types to EventBridge
    ) -> None:
        self.put = put
        self.account_id = account_id
        self.region = region
        self.destinations = destinations
        self.published = 0
        self._original: Any = None
        self._lock = threading.Lock()

    def install(self) -> SesEventPublisher:
        from moto.sesv2.responses import SESV2Response

        original = SESV2Response.send_email
        publisher = self

        def send_email(response: Any) -> str:
            result: str = original(response)
            with contextlib.suppress(Exception):  # the emulation must never break the emulator
                publisher.on_send(json.loads(response.body), json.loads(result))
            return result

        self._original = original
        setattr(SESV2Response, "send_email", send_email)  # noqa: B010 (patching a method on purpose)
        return self

    def uninstall(self) -> None:
        if self._original is not None:
            from moto.sesv2.responses import SESV2Response

            setattr(SESV2Response, "send_email", self._original)  # noqa: B010
            self._original = None

    def on_send(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        config_set = request.get("ConfigurationSetName")
        types = self.destinations.get(config_set or "", [])
        if not types:
            return
        dest = request.get("Destination") or {}
        recipients = [
            *dest.get("ToAddresses", []),
            *dest.get("CcAddresses", []),
            *dest.get("BccAddresses", []),
        ]
        tags = {t["Name"]: t["Value"] for t in request.get("EmailTags", [])}
        sent_at = datetime.now(UTC)
        after: tuple[str, ...] = ("delivery",)
        for r in recipients:
            after = SIMULATOR.get(r.strip().lower(), after)
        delays = {
            "send": SEND_DELAY_SECONDS,
            "delivery": DELIVERY_DELAY_SECONDS,
            "bounce": BOUNCE_DELAY_SECONDS,
            "complaint": COMPLAINT_DELAY_SECONDS,
        }
        for event_type, delay in ((t, delays[t]) for t in ("send", *after)):
            if event_type not in types:
                continue
            event = ses_event(
                event_type,
                account_id=self.account_id,
                region=self.region,
                configuration_set=str(config_set),
                message_id=str(response["MessageId"]),
                source=str(request.get("FromEmailAddress", "")),
                destinations=recipients,
                tags=tags,
                sent_at=sent_at,
            )
            self.put(event, delay)
            with self._lock:
                self.published += 1


def eventbridge_destinations(provisioned: Any) -> dict[str, list[str]]:
    """Configuration set name -> the SES event types it publishes to EventBridge (lower case)."""
    out: dict[str, list[str]] = {}
    for lid, cs in provisioned.inventory.configuration_sets.items():
        name = provisioned.physical[lid]
        for d in cs.event_destinations:
            if d.get("Enabled", True) and "EventBridgeDestination" in d:
                out.setdefault(name, []).extend(str(t).lower() for t in d.get("MatchingEventTypes", []))
    return out
