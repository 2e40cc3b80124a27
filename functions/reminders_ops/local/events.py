"""Lambda events as AWS builds them: SQS batches, EventBridge scheduled events, API Gateway v2
proxy requests — and the Lambda context object with a real deadline."""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

LOCAL_REGION = "us-east-1"


@dataclass
class LambdaContext:
    """The context the Lambda runtime passes: ``get_remaining_time_in_millis`` counts down from the
    function's configured timeout."""

    function_name: str
    timeout_seconds: float
    memory_limit_in_mb: int = 256
    account_id: str = "111111111111"
    region: str = LOCAL_REGION
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{self.account_id}:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{self.aws_request_id.replace('-', '')}"

    def get_remaining_time_in_millis(self) -> int:
        elapsed = time.monotonic() - self.started
        return max(0, int((self.timeout_seconds - elapsed) * 1000))


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str = LOCAL_REGION) -> dict[str, Any]:
    """The event of an SQS event source mapping for messages from ``ReceiveMessage``."""
    records = []
    for m in messages:
        attrs = m.get("Attributes") or {}
        message_attributes = {}
        for name, v in (m.get("MessageAttributes") or {}).items():
            value: dict[str, Any] = {
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": v["DataType"],
            }
            if "StringValue" in v:
                value["stringValue"] = v["StringValue"]
            if "BinaryValue" in v:
                value["binaryValue"] = base64.b64encode(v["BinaryValue"]).decode()
            message_attributes[name] = value
        record_attrs = {
            "ApproximateReceiveCount": attrs.get("ApproximateReceiveCount", "1"),
            "SentTimestamp": attrs.get("SentTimestamp", "0"),
            "SenderId": attrs.get("SenderId", "AIDAEXAMPLE"),
            "ApproximateFirstReceiveTimestamp": attrs.get("ApproximateFirstReceiveTimestamp", "0"),
        }
        for optional in ("DeadLetterQueueSourceArn", "AWSTraceHeader", "MessageGroupId", "SequenceNumber"):
            if optional in attrs:
                record_attrs[optional] = attrs[optional]
        records.append(
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": record_attrs,
                "messageAttributes": message_attributes,
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
        )
    return {"Records": records}


def scheduled_event(rule_arn: str, account_id: str, region: str = LOCAL_REGION) -> dict[str, Any]:
    """The event EventBridge sends to a scheduled rule's target (no Input configured)."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account_id,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [rule_arn],
        "detail": {},
    }


def http_api_event(
    *,
    method: str,
    raw_path: str,
    raw_query: str,
    headers: dict[str, str],
    body: bytes,
    route_key: str,
    path_parameters: dict[str, str] | None,
    source_ip: str,
    account_id: str,
    api_id: str = "local",
    stage: str = "$default",
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload format 2.0) proxy event."""
    from urllib.parse import parse_qsl

    lowered: dict[str, str] = {}
    cookies: list[str] = []
    for k, v in headers.items():
        key = k.lower()
        if key == "cookie":
            cookies.extend(c.strip() for c in v.split(";") if c.strip())
            continue
        lowered[key] = f"{lowered[key]},{v}" if key in lowered else v
    query: dict[str, str] = {}
    for k, v in parse_qsl(raw_query, keep_blank_values=True):
        query[k] = f"{query[k]},{v}" if k in query else v
    text: str | None
    is_b64 = False
    if not body:
        text = None
    else:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text, is_b64 = base64.b64encode(body).decode(), True
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
        "headers": lowered,
        "requestContext": {
            "accountId": account_id,
            "apiId": api_id,
            "domainName": lowered.get("host", "localhost"),
            "domainPrefix": lowered.get("host", "localhost").split(".")[0],
            "http": {
                "method": method,
                "path": raw_path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": lowered.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": route_key,
            "stage": stage,
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": is_b64,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if path_parameters:
        event["pathParameters"] = path_parameters
    if text is not None:
        event["body"] = text
    return event
