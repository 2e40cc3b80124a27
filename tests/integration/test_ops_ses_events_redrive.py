"""``reminders ses-events redrive`` (issue 24 item 6) on moto: a permanent bounce held in the SES
events rule's DLQ (the event as the body) or in the function's on-failure destination (Lambda's
invocation record) is re-fed to the real handler, which suppresses the address; a message is
deleted only after its invocation succeeded, and redrive stops at the first one that fails again."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from reminders.domain.suppression import address_hash
from reminders.handlers.delivery import email_handler
from reminders.handlers.ses_events import handler as ses_events_handler
from reminders_ops.cli.dlq import peek
from reminders_ops.cli.ses_events import redrive, summary

from tests.integration.test_ses_feedback import BOUNCE, _create, _event
from tests.support.lambda_runtime import FakeContext, invoke_batch, receive


def _bounce_event(aws: dict[str, str]) -> dict[str, Any]:
    sqs = boto3.client("sqs")
    created = _create("renewal:acct-9:redrive", BOUNCE)
    invoke_batch(email_handler, sqs, aws["EMAIL_QUEUE_URL"], receive(sqs, aws["EMAIL_QUEUE_URL"]))
    bounce = {
        "bounce": {
            "bounceType": "Permanent",
            "bounceSubType": "General",
            "bouncedRecipients": [{"emailAddress": BOUNCE}],
            "timestamp": "2026-11-29T08:00:01Z",
            "feedbackId": "feedback-redrive",
        }
    }
    return _event("Email Bounced", "Bounce", created["deliveries"][0], created["id"], bounce)


def _held(event: dict[str, Any], shape: str) -> tuple[str, dict[str, Any]]:
    """(body, message attributes) as the rule target's DLQ or Lambda's on-failure destination write it."""
    if shape == "target":
        attributes = {
            "ERROR_CODE": {"DataType": "String", "StringValue": "Lambda.TooManyRequestsException"},
            "ERROR_MESSAGE": {"DataType": "String", "StringValue": "Rate Exceeded."},
        }
        return json.dumps(event), attributes
    record = {
        "version": "1.0",
        "timestamp": "2026-11-29T14:00:02.000Z",
        "requestContext": {
            "requestId": "c3e2f6a0-0000-0000-0000-000000000001",
            "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:SesEvents:$LATEST",
            "condition": "RetriesExhausted",
            "approximateInvokeCount": 3,
        },
        "requestPayload": event,
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "responsePayload": {
            "errorMessage": "throttled",
            "errorType": "ProvisionedThroughputExceededException",
        },
    }
    return json.dumps(record), {}


def _suppressed(aws: dict[str, str]) -> bool:
    got = boto3.client("dynamodb").get_item(
        TableName=aws["TABLE_NAME"], Key={"pk": {"S": "SUP#acct-9"}, "sk": {"S": address_hash(BOUNCE) + "#*"}}
    )
    return "Item" in got


def _in_process(event: dict[str, Any]) -> str | None:
    try:
        ses_events_handler(event, FakeContext())
    except Exception as exc:  # what Lambda reports as the function error
        return type(exc).__name__
    return None


@pytest.mark.parametrize("shape", ["target", "failed"])
def test_redrive_refeeds_a_held_bounce_and_the_address_is_suppressed(aws: dict[str, str], shape: str) -> None:
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName=f"ses-events-{shape}")["QueueUrl"]
    body, attributes = _held(_bounce_event(aws), shape)
    sqs.send_message(QueueUrl=queue, MessageBody=body, MessageAttributes=attributes)
    (listed,) = [summary(m) for m in peek(sqs, queue)]
    assert listed["detail_type"] == "Email Bounced" and listed["ses_message_id"] == "ses-message-1"
    assert BOUNCE not in json.dumps(listed)  # the operator's view carries no address
    assert not _suppressed(aws)

    report = redrive(sqs, queue, _in_process)

    assert len(report.refed) == 1 and report.failed is None and report.stopped == "queue_empty"
    assert _suppressed(aws)
    assert peek(sqs, queue) == []


def test_redrive_stops_when_the_function_fails_again_and_keeps_the_event(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName="ses-events-failed")["QueueUrl"]
    event = _bounce_event(aws)
    for _ in range(3):
        body, _ = _held(event, "failed")
        sqs.send_message(QueueUrl=queue, MessageBody=body)
    calls: list[dict[str, Any]] = []

    def still_failing(e: dict[str, Any]) -> str | None:
        calls.append(e)
        return "ProvisionedThroughputExceededException"

    report = redrive(sqs, queue, still_failing, max_messages=10)

    assert report.stopped == "failed_again" and report.refed == [] and len(calls) == 1
    assert report.failed is not None and report.failed["error"] == "ProvisionedThroughputExceededException"
    assert len(peek(sqs, queue)) == 3  # nothing deleted, all visible again
    assert not _suppressed(aws)


def test_lambda_invoker_reports_the_functions_error_and_none_on_success() -> None:
    """Against AWS the redrive invokes the deployed function synchronously: its FunctionError (the
    error type it raised) stops the redrive; a clean answer lets the message go."""
    import io

    from botocore.response import StreamingBody
    from botocore.stub import Stubber
    from reminders_ops.cli.ses_events import lambda_invoker

    client = boto3.client("lambda", region_name="us-east-1")
    event = {"source": "aws.ses", "detail-type": "Email Bounced", "detail": {}}
    error = b'{"errorType": "ProvisionedThroughputExceededException", "errorMessage": "throttled"}'
    with Stubber(client) as stub:
        for payload, function_error in ((error, "Unhandled"), (b'{"outcome": "suppressed"}', None)):
            response: dict[str, Any] = {
                "StatusCode": 200,
                "Payload": StreamingBody(io.BytesIO(payload), len(payload)),
            }
            if function_error:
                response["FunctionError"] = function_error
            stub.add_response(
                "invoke",
                response,
                {
                    "FunctionName": "SesEvents",
                    "InvocationType": "RequestResponse",
                    "Payload": json.dumps(event).encode(),
                },
            )
        invoke = lambda_invoker(client, "SesEvents")
        assert invoke(event) == "ProvisionedThroughputExceededException"
        assert invoke(event) is None
