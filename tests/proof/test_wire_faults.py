"""Faults at the wire (functions/reminders_ops/proof/faultproxy.py) under the project's real botocore
clients (adapters/clients.make_client) and the webhook adapter: what each client sees for each fault
kind, and the cases where our classification of that sight was wrong."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from reminders.adapters.clients import make_client
from reminders.adapters.ses import SesEmailSender
from reminders.domain.retry import OutcomeClass
from reminders.services.render import render
from reminders_ops.proof.faultproxy import KINDS, FaultProxy, error_response

from tests.integration.test_ses_adapter import FROM, make


@pytest.fixture(scope="module")
def moto_server() -> Iterator[int]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    saved = dict(os.environ)
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server.get_host_and_port()[1]
    ses = boto3.client("ses", endpoint_url=f"http://127.0.0.1:{port}")
    ses.verify_email_identity(EmailAddress=FROM)
    try:
        yield port
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)


def _ses_through(proxy: FaultProxy) -> SesEmailSender:
    os.environ["AWS_ENDPOINT_URL"] = proxy.url
    try:
        client = make_client("sesv2", send_read_timeout_seconds=1.0)
    finally:
        del os.environ["AWS_ENDPOINT_URL"]
    return SesEmailSender(client, from_address=FROM, configuration_set=None)


def _send(sender: SesEmailSender) -> Any:
    d, r = make()
    return sender.send(d, r, render(r, d))


def test_ses_redirect_holds_the_channel_instead_of_dead_lettering(moto_server: int) -> None:
    """A 3xx from the SES endpoint is something between us and SES (a proxy, a wrong endpoint): our
    configuration, never the reminder's fault. Before the fix botocore's ClientError "307" was
    classified permanent and the email dead-lettered."""
    with FaultProxy(moto_server, rates={"redirect": 1.0}, seed=1) as proxy:
        result = _send(_ses_through(proxy))
    assert result.outcome is OutcomeClass.CONFIGURATION, result


@pytest.mark.parametrize("kind", ["drop_after_apply", "reset_after", "stall", "error_after_apply"])
def test_ses_answer_lost_after_acceptance_is_ambiguous(moto_server: int, kind: str) -> None:
    """SES accepted (the proxy forwarded it) but the answer never arrived whole: the outcome must be
    one that waits for the send event before a re-send (``ambiguous``), never permanent."""
    with FaultProxy(moto_server, rates={kind: 1.0}, seed=1, stall_seconds=1.5) as proxy:
        result = _send(_ses_through(proxy))
        applied = [e for e in proxy.stats.exchanges if e.fault == kind]
    assert applied, "the fault was not injected"
    assert result.ambiguous, result


@pytest.mark.parametrize("kind", ["throttle", "http_500", "http_503"])
def test_dynamodb_errors_in_the_json_shape_are_retried_by_botocore(moto_server: int, kind: str) -> None:
    """x-amz-json-1.0 ``__type`` errors are what botocore's standard mode retries: three attempts."""
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{moto_server}"
    try:
        ddb = make_client("dynamodb")
        ddb.create_table(
            TableName=f"t-{kind}",
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        ddb.get_waiter("table_exists").wait(
            TableName=f"t-{kind}", WaiterConfig={"Delay": 0.1, "MaxAttempts": 300}
        )
    finally:
        del os.environ["AWS_ENDPOINT_URL"]
    with FaultProxy(moto_server, rates={kind: 1.0}, seed=1) as proxy:
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        try:
            client = make_client("dynamodb")
        finally:
            del os.environ["AWS_ENDPOINT_URL"]
        with pytest.raises(Exception) as info:
            client.put_item(TableName=f"t-{kind}", Item={"pk": {"S": "x"}})
        attempts = len(proxy.stats.exchanges)
    expected = {"throttle": "ThrottlingException", "http_500": "InternalServerError"}
    code = info.value.response["Error"]["Code"]  # type: ignore[attr-defined]
    assert code == expected.get(kind, "ServiceUnavailable")
    assert attempts == 3  # AWS_IDEMPOTENT_MAX_ATTEMPTS


def test_every_fault_kind_has_an_error_shape_or_a_transport_action() -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    for service in ("dynamodb", "sqs", "sesv2", "webhook"):
        for kind in ("http_500", "http_503", "throttle", "redirect"):
            status, headers, _ = error_response(service, kind, now)
            assert 300 <= status < 600
            if service in ("dynamodb", "sqs") and kind != "redirect":
                assert headers["content-type"] == "application/x-amz-json-1.0"
            if service == "sesv2" and kind != "redirect":
                assert "x-amzn-errortype" in headers
    assert error_response("webhook", "retry_after_nonascii", now)[1]["retry-after"] == "\u0661\u0662"
    assert len(KINDS) == len(set(KINDS)) == 13


#: Every wire kind more frequent than in ``make verify``; each is also forced once first.
HOT_AWS = {k: 0.004 for k in KINDS if not k.startswith("retry_after")}
HOT_WEBHOOK = {k: 0.02 for k in KINDS}


def test_short_wire_run_injects_every_wire_fault_and_holds_the_invariant() -> None:
    """The real handlers and botocore clients through both proxies with every wire fault frequent:
    0 lost, 0 duplicate accepted webhook sends, every dead letter explained, and it fails when a
    wire fault kind was never injected (on the AWS side, on the webhook side, or the resolver)."""
    from reminders_ops.proof import wirerun

    report = wirerun.run(
        3,
        30,
        aws_rates=HOT_AWS,
        webhook_rates=HOT_WEBHOOK,
        resolver_rate=0.1,
        due_spread_seconds=15.0,
        force_every_kind=True,
    )
    text = report.format()
    assert report.ok, text
    assert report.lost == 0 and report.duplicate_accepted == 0, text
    aws_seen = {k.split(".", 1)[1] for k in report.costs if not k.startswith("webhook.")}
    hook_seen = {k.split(".", 1)[1] for k in report.costs if k.startswith("webhook.")}
    assert not set(HOT_AWS) - aws_seen, f"AWS side never injected: {set(HOT_AWS) - aws_seen}\n{text}"
    assert not set(KINDS) - hook_seen, f"webhook side never injected: {set(KINDS) - hook_seen}\n{text}"
    assert report.resolver_failures > 0, text
    assert report.max_item_bytes < wirerun.DYNAMODB_ITEM_LIMIT_BYTES
