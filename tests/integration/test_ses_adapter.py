"""The SES v2 email adapter on moto (and a botocore Stubber for the error codes moto cannot produce):
configuration set and key tag, a stable Message-ID, byte-identical MIME across retries, malformed
addresses refused before any call, our own configuration problems held, never dead-lettered."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from email import message_from_bytes, policy
from typing import Any

import boto3
import pytest
from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError
from botocore.stub import Stubber
from moto import mock_aws
from reminders.adapters.ses import SesEmailSender, build_mime
from reminders.domain.models import ChannelType, Delivery, Reminder, delivery_key, reminder_id
from reminders.domain.retry import OutcomeClass
from reminders.services.render import render

FROM = "reminders@example.com"
DUE = dt.datetime(2026, 12, 20, 9, 0, tzinfo=dt.UTC)


def make(
    to: str = "user@example.com", key: str = "renewal:acct-2:2026-12-20:email"
) -> tuple[Delivery, Reminder]:
    d = Delivery(
        channel_id="email-0",
        type=ChannelType.EMAIL,
        destination=to,
        key=delivery_key("acct-2", key, "email-0"),
    )
    r = Reminder(
        id=reminder_id("acct-2", key),
        account_id="acct-2",
        key=key,
        kind="renewal",
        due_at=DUE,
        template_id="renewal",
        template_version=3,
        data={"plan": "pro", "renewal_date": "2026-12-20"},
        version=1,
        created_at=DUE,
        fingerprint="fp",
        deliveries={"email-0": d},
    )
    return d, r


def _backend() -> Any:
    from moto.backends import get_backend

    return get_backend("ses")["111111111111"]["us-east-1"]  # sesv2 sends land in the ses backend


@pytest.fixture(scope="module")
def moto_ses() -> Iterator[Any]:
    """One moto SES for the module (starting moto costs more than these tests)."""
    with mock_aws():
        client = boto3.client("sesv2", region_name="us-east-1")
        client.create_email_identity(EmailIdentity=FROM)
        client.create_configuration_set(ConfigurationSetName="reminders")
        yield client


_SINCE: list[int] = [0]


@pytest.fixture
def ses(moto_ses: Any) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """The moto SES v2 client with a verified sender and a configuration set; every SendEmail's params."""
    calls: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        calls.append(dict(params))

    _SINCE[0] = len(_backend().sent_messages)
    moto_ses.meta.events.register("provide-client-params.sesv2.SendEmail", capture)
    yield moto_ses, calls
    moto_ses.meta.events.unregister("provide-client-params.sesv2.SendEmail", capture)


def sent_raw() -> list[bytes]:
    """What moto's SES accepted during this test."""
    sent = _backend().sent_messages[_SINCE[0] :]
    return [m.raw_data.encode() if isinstance(m.raw_data, str) else m.raw_data for m in sent]


def send(sender: SesEmailSender, to: str = "user@example.com") -> Any:
    d, r = make(to)
    return sender.send(d, r, render(r, d))


def test_send_with_configuration_set_and_the_key_as_a_tag(ses: Any) -> None:
    client, calls = ses
    result = send(SesEmailSender(client, from_address=FROM, configuration_set="reminders"))
    assert result.outcome is OutcomeClass.ACCEPTED and result.receipt and result.status == 200
    assert result.metadata["request_id"]
    (params,) = calls
    d, _ = make()
    assert params["ConfigurationSetName"] == "reminders"
    tags = {t["Name"]: t["Value"] for t in params["EmailTags"]}
    assert tags["delivery_key"] == d.key
    assert params["Destination"] == {"ToAddresses": ["user@example.com"]}
    assert len(sent_raw()) == 1


def test_without_a_configuration_set_none_is_sent(ses: Any) -> None:
    client, calls = ses
    send(SesEmailSender(client, from_address=FROM, configuration_set=None))
    assert "ConfigurationSetName" not in calls[0]


@pytest.mark.parametrize(
    "to", ["not-an-address", "a@b", "user@@example.com", "user@exa mple.com", "x" * 250 + "@e.com"]
)
def test_a_malformed_address_is_invalid_destination_without_any_call(ses: Any, to: str) -> None:
    client, calls = ses
    result = send(SesEmailSender(client, from_address=FROM, configuration_set="reminders"), to)
    assert result.outcome is OutcomeClass.INVALID_DESTINATION
    assert calls == [] and sent_raw() == []


def test_an_unverified_sender_is_our_configuration_not_the_reminders_fault(ses: Any) -> None:
    """moto answers MessageRejected "Did not have authority to send from email ..." (real SES: "Email
    address is not verified"); either way the channel is held, never dead-lettered."""
    client, calls = ses
    result = send(SesEmailSender(client, from_address="nobody@unverified.example", configuration_set=None))
    assert len(calls) == 1
    assert result.outcome is OutcomeClass.CONFIGURATION
    assert result.detail == "MessageRejected" and result.status == 400
    assert sent_raw() == []


def test_retries_send_byte_identical_mime_with_a_stable_message_id(ses: Any) -> None:
    client, calls = ses
    sender = SesEmailSender(client, from_address=FROM, configuration_set="reminders")
    first, second = send(sender), send(sender)
    assert first.outcome is second.outcome is OutcomeClass.ACCEPTED
    raws = [c["Content"]["Raw"]["Data"] for c in calls]
    assert raws[0] == raws[1]
    assert first.fingerprint == second.fingerprint
    d, _ = make()
    msg = message_from_bytes(raws[0], policy=policy.default)
    assert msg["Message-ID"] == f"<{d.key}@example.com>"
    assert msg["Message-ID"].startswith("<dlv_")
    assert msg["X-Reminder-Key"] == d.key
    assert msg["From"] == FROM and msg["To"] == "user@example.com"
    assert msg["Date"] == "Sun, 20 Dec 2026 09:00:00 +0000"  # the due time, never the wall clock
    assert "plan: pro" in msg.get_content()
    stored = sent_raw()
    assert len(stored) == 2 and stored[0] == stored[1]


def test_build_mime_is_a_pure_function() -> None:
    d, r = make()
    a = build_mime(d, r, render(r, d), FROM, "example.com")
    b = build_mime(d, r, render(r, d), FROM, "example.com")
    assert a == b


# -- error codes moto cannot produce -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "status", "message", "outcome"),
    [
        ("TooManyRequestsException", 429, "Maximum sending rate exceeded.", OutcomeClass.THROTTLED),
        ("LimitExceededException", 400, "Daily quota", OutcomeClass.THROTTLED),
        ("SendingPausedException", 400, "Sending is paused for this account", OutcomeClass.CONFIGURATION),
        ("AccountSuspendedException", 400, "suspended", OutcomeClass.CONFIGURATION),
        ("MailFromDomainNotVerifiedException", 400, "MAIL FROM", OutcomeClass.CONFIGURATION),
        ("NotFoundException", 404, "Configuration set does not exist", OutcomeClass.CONFIGURATION),
        (
            "MessageRejected",
            400,
            "Email address is not verified. The following identities failed",
            OutcomeClass.CONFIGURATION,
        ),
        ("MessageRejected", 400, "Message contains a virus", OutcomeClass.PERMANENT),
        ("BadRequestException", 400, "Illegal address", OutcomeClass.PERMANENT),
        ("InternalFailure", 500, "internal", OutcomeClass.TRANSIENT),
        ("ServiceUnavailable", 503, "unavailable", OutcomeClass.TRANSIENT),
    ],
)
def test_client_errors_are_classified(code: str, status: int, message: str, outcome: OutcomeClass) -> None:
    client = boto3.client("sesv2", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_client_error(
        "send_email", service_error_code=code, service_message=message, http_status_code=status
    )
    with stub:
        result = send(SesEmailSender(client, from_address=FROM, configuration_set="reminders"))
    assert result.outcome is outcome
    assert result.detail == code and result.fingerprint


class _Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def send_email(self, **_: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "outcome"),
    [
        (ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com"), OutcomeClass.TIMEOUT),
        (ConnectTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com"), OutcomeClass.CONNECTION),
        (
            EndpointConnectionError(endpoint_url="https://email.us-east-1.amazonaws.com"),
            OutcomeClass.CONNECTION,
        ),
    ],
)
def test_transport_errors_are_classified(exc: Exception, outcome: OutcomeClass) -> None:
    result = send(SesEmailSender(_Raising(exc), from_address=FROM, configuration_set=None))
    assert result.outcome is outcome


def test_retries_carry_byte_identical_one_click_list_unsubscribe_headers(ses: Any) -> None:
    """Issue 19: every email carries RFC 8058 List-Unsubscribe (https + mailto) and
    List-Unsubscribe-Post; the token derives from the delivery and its due time, never from now, so
    two attempts an hour apart send the same bytes, unfolded (no RFC 2047 encoded words)."""
    from reminders.adapters.clock import FixedClock
    from reminders.domain.ports import NullTelemetry
    from reminders.services.unsubscribe import Unsubscribe

    client, calls = ses
    clock = FixedClock(DUE)
    unsub = Unsubscribe(
        suppressions=None,
        secret=lambda: b"k" * 32,
        clock=clock,
        telemetry=NullTelemetry(),
        base_url="https://api.example.com/",
        mailto="unsubscribe@example.com",
    )
    sender = SesEmailSender(client, from_address=FROM, configuration_set="reminders", headers=unsub.headers)
    first = send(sender)
    clock.advance(3600)
    second = send(sender)
    assert first.outcome is second.outcome is OutcomeClass.ACCEPTED
    raws = [c["Content"]["Raw"]["Data"] for c in calls]
    assert raws[0] == raws[1] and first.fingerprint == second.fingerprint
    msg = message_from_bytes(raws[0], policy=policy.default)
    d, r = make()
    token = unsub.token(r, d)
    assert msg["List-Unsubscribe"] == (
        f"<https://api.example.com/unsubscribe/{token}>, <mailto:unsubscribe@example.com?subject=unsubscribe>"
    )
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert b"=?utf-8?" not in raws[0] and d.destination.encode() not in token.encode()
