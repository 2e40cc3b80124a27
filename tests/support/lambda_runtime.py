"""Test helpers that invoke the real handlers the way Lambda would: API Gateway v2 events and an
SQS event-source-mapping poller (receive, invoke, delete what is not in batchItemFailures)."""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import urlencode

from reminders_ops.local.events import sqs_event


def FakeContext(function_name: str = "test-function") -> Any:
    """A Lambda-like context: the one ``make invoke`` and the local runtime use."""
    from reminders_ops.invoke import lambda_context

    return lambda_context(function_name, timeout_seconds=60)  # the delivery consumers' timeout


#: The tests' caller: a session of the bootstrap role (tests/support/aws.py grants it every account).
OPERATOR_ROLE = "arn:aws:iam::111111111111:role/reminders-operator"
TEST_PRINCIPAL = "arn:aws:sts::111111111111:assumed-role/reminders-operator/tests"


def http_event(
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, str] | None = None,
    raw: str | None = None,
    principal: str | None = TEST_PRINCIPAL,
) -> dict[str, Any]:
    event = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": urlencode(query or {}),
        "queryStringParameters": query or None,
        "headers": {"content-type": "application/json", "host": "localhost"},
        "requestContext": {
            "accountId": "111111111111",
            "apiId": "local",
            "domainName": "localhost",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "test",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": "29/Nov/2026:00:00:00 +0000",
            "timeEpoch": 0,
        },
        "body": raw if raw is not None else (json.dumps(body) if body is not None else None),
        "isBase64Encoded": False,
    }
    if principal is not None:  # as the HTTP API's IAM authorizer fills it in
        event["requestContext"]["authorizer"] = {"iam": {"userArn": principal, "callerId": "AROATEST:tests"}}
    return event


def call_api(
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, str] | None = None,
    raw: str | None = None,
    principal: str | None = TEST_PRINCIPAL,
) -> tuple[int, Any]:
    from reminders.handlers.api import handler

    resp = handler(http_event(method, path, body, query, raw, principal), FakeContext(function_name="api"))
    payload = resp.get("body")
    return resp["statusCode"], (json.loads(payload) if payload else None)


def receive(sqs: Any, queue_url: str, max_messages: int = 10) -> list[dict[str, Any]]:
    resp = sqs.receive_message(
        QueueUrl=queue_url,
        MaxNumberOfMessages=max_messages,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
        WaitTimeSeconds=0,
    )
    return list(resp.get("Messages", []))


def invoke_batch(handler: Any, sqs: Any, queue_url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Invoke like the SQS event source mapping: delete what is not reported as failed."""
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    result = handler(sqs_event(messages, arn), FakeContext())
    failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
    for m in messages:
        if m["MessageId"] not in failed:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
    return result


def poll_once(handler: Any, sqs: Any, queue_url: str) -> dict[str, Any] | None:
    messages = receive(sqs, queue_url)
    if not messages:
        return None
    return invoke_batch(handler, sqs, queue_url, messages)
