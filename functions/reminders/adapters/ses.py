"""Email provider: Amazon SES v2 ``SendEmail`` with a configuration set.

SES has no idempotency key. Every attempt carries the delivery key as an email tag and in a stable
``Message-ID`` (and ``X-Reminder-Key``), so SES send events can be matched to the ledger; the
remaining duplicate window is "SES accepted, the worker died before recording" (docs/guarantees.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from ..domain.errors import ConfigurationError
from ..domain.models import Delivery, Reminder
from ..domain.ports import Rendered
from ..domain.retry import OutcomeClass, SendResult
from .destinations import valid_email
from .tracing import SendTrace, untraced

CONFIGURATION_CODES = frozenset(
    {
        "AccountSuspendedException",
        "SendingPausedException",
        "MailFromDomainNotVerifiedException",
        "NotFoundException",  # configuration set missing
        "AccessDeniedException",
    }
)
#: ``MessageRejected`` messages that mean "this account may not send as this sender / to this
#: recipient" (sandbox, unverified or unauthorised identity), not "this email is bad". SES says "Email
#: address is not verified"; moto (the local emulator) says "Did not have authority to send from email".
SENDER_NOT_ALLOWED = ("not verified", "did not have authority", "not authorized to send")
THROTTLE_CODES = frozenset(
    {"TooManyRequestsException", "LimitExceededException", "Throttling", "ThrottlingException"}
)


#: RFC 5322's line limit, not the 78-character folding default: a List-Unsubscribe URL is one long
#: word that the default policy would turn into RFC 2047 encoded words (which clients do not parse).
MIME_POLICY = policy.default.clone(max_line_length=998)


def build_mime(
    delivery: Delivery,
    reminder: Reminder,
    rendered: Rendered,
    sender: str,
    domain: str,
    extra_headers: Mapping[str, str] | None = None,
) -> bytes:
    """Byte-identical on every retry: no wall-clock Date, a Message-ID derived from the key, and
    ``extra_headers`` (List-Unsubscribe) that are a pure function of the delivery too. With an HTML
    part (an account's template, issue 30): ``multipart/alternative`` of the text and the HTML."""
    msg = EmailMessage(policy=MIME_POLICY)
    msg["From"] = sender
    msg["To"] = delivery.destination
    msg["Subject"] = rendered.subject
    msg["Date"] = format_datetime(reminder.due_at)
    msg["Message-ID"] = f"<{delivery.key}@{domain}>"
    msg["X-Reminder-Key"] = delivery.key
    for name, value in (extra_headers or {}).items():
        msg[name] = value
    msg.set_content(rendered.body)
    if rendered.html is not None:
        # Issue 30: multipart/alternative, text then HTML (clients show the last they can). The
        # boundary is derived from the key and the content, never random: the same bytes on a retry.
        msg.add_alternative(rendered.html, subtype="html")
        seed = f"{delivery.key}\n{rendered.body}\n{rendered.html}".encode()
        msg.set_boundary("=_" + hashlib.sha256(seed).hexdigest()[:40])
    return msg.as_bytes()


class SesEmailSender:
    def __init__(
        self,
        client: Any,
        *,
        from_address: str,
        configuration_set: str | None,
        headers: Callable[[Delivery, Reminder], Mapping[str, str]] | None = None,
        trace: SendTrace = untraced,
    ) -> None:
        self.client = client
        self.trace = trace  # the send's X-Ray subsegment (ids only: adapters/tracing.py)
        self.headers = headers  # List-Unsubscribe + List-Unsubscribe-Post (services/unsubscribe.py)
        self.from_address = from_address
        self.configuration_set = configuration_set
        self.domain = from_address.rsplit("@", 1)[-1] if "@" in from_address else "reminders.local"

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        if not valid_email(delivery.destination):
            return SendResult(OutcomeClass.INVALID_DESTINATION, detail="malformed email address")
        try:
            extra = self.headers(delivery, reminder) if self.headers else None
        except ConfigurationError:  # the unsubscribe signing secret is missing: ours, hold the channel
            return SendResult(OutcomeClass.CONFIGURATION, detail="unsubscribe_secret_unavailable")
        raw = build_mime(delivery, reminder, rendered, self.from_address, self.domain, extra)
        fp = hashlib.sha256(raw).hexdigest()[:32]
        kwargs: dict[str, Any] = {
            "FromEmailAddress": self.from_address,
            "Destination": {"ToAddresses": [delivery.destination]},
            "Content": {"Raw": {"Data": raw}},
            "EmailTags": [
                {"Name": "delivery_key", "Value": delivery.key},
                {"Name": "reminder_id", "Value": reminder.id},
                {"Name": "channel_id", "Value": delivery.channel_id},
            ],
        }
        if self.configuration_set:
            kwargs["ConfigurationSetName"] = self.configuration_set
        try:
            with self.trace(reminder.id, delivery.key):  # ids only: the send's X-Ray subsegment
                resp = self.client.send_email(**kwargs)
        except ClientError as exc:
            return self._classify(exc, fp)
        except ReadTimeoutError:
            return SendResult(OutcomeClass.TIMEOUT, detail="ses_read_timeout", fingerprint=fp)
        except (EndpointConnectionError, ConnectTimeoutError):
            return SendResult(OutcomeClass.CONNECTION, detail="ses_unreachable", fingerprint=fp)
        except BotoCoreError as exc:
            return SendResult(OutcomeClass.TRANSIENT, detail=type(exc).__name__, fingerprint=fp)
        status = int(resp.get("ResponseMetadata", {}).get("HTTPStatusCode", 200))
        return SendResult(
            OutcomeClass.ACCEPTED,
            status,
            receipt=resp.get("MessageId"),
            detail="ses_accepted",
            fingerprint=fp,
            metadata={"request_id": str(resp.get("ResponseMetadata", {}).get("RequestId", ""))},
        )

    @staticmethod
    def _classify(exc: ClientError, fp: str) -> SendResult:
        err = exc.response.get("Error", {})
        code = str(err.get("Code", ""))
        message = str(err.get("Message", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0) or None
        if code in CONFIGURATION_CODES or (
            code == "MessageRejected" and any(p in message.lower() for p in SENDER_NOT_ALLOWED)
        ):
            # Sandbox, unverified sender, sending paused: our configuration, never the reminder's fault.
            return SendResult(OutcomeClass.CONFIGURATION, status, detail=code, fingerprint=fp)
        if status is not None and 300 <= status < 400:
            # SES never redirects: a 3xx is something between us and SES (a proxy, a wrong endpoint
            # URL), our configuration, not the reminder's fault (found by the wire fault run).
            return SendResult(OutcomeClass.CONFIGURATION, status, detail=f"redirect_{status}", fingerprint=fp)
        if code in THROTTLE_CODES or status == 429:
            return SendResult(OutcomeClass.THROTTLED, status, detail=code, fingerprint=fp)
        if status is not None and status >= 500:
            return SendResult(OutcomeClass.TRANSIENT, status, detail=code, fingerprint=fp)
        return SendResult(OutcomeClass.PERMANENT, status, detail=code, fingerprint=fp)
