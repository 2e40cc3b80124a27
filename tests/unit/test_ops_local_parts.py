"""Pieces of the local runtime that must behave like AWS: schedule expressions, API Gateway route
matching and responses, and which records an SQS event source mapping keeps after an invocation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from reminders_ops.local.esm import SqsEventSourceMapping
from reminders_ops.local.events import sqs_event
from reminders_ops.local.http_api import RouteTable, to_http
from reminders_ops.local.schedule import Schedule, UnsupportedScheduleError
from reminders_ops.local.spec import MappingSpec, RouteSpec

NOON = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)  # a Sunday


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("rate(1 minute)", datetime(2026, 11, 29, 12, 1, 30, tzinfo=UTC)),
        ("rate(2 hours)", datetime(2026, 11, 29, 14, 0, 30, tzinfo=UTC)),
        ("cron(0/15 * * * ? *)", datetime(2026, 11, 29, 12, 15, tzinfo=UTC)),
        ("cron(0 9 ? * MON-FRI *)", datetime(2026, 11, 30, 9, 0, tzinfo=UTC)),
        ("cron(30 12 1 JAN ? *)", datetime(2027, 1, 1, 12, 30, tzinfo=UTC)),
        ("cron(5 12 ? * 1 *)", datetime(2026, 11, 29, 12, 5, tzinfo=UTC)),  # AWS: 1 = Sunday
        ("cron(5 11 ? * SUN *)", datetime(2026, 12, 6, 11, 5, tzinfo=UTC)),
    ],
)
def test_schedule_expressions_fire_when_eventbridge_would(expression: str, expected: datetime) -> None:
    assert Schedule.parse(expression).next_after(NOON) == expected


def test_rate_override_and_unsupported_expressions() -> None:
    assert Schedule.parse("rate(1 minute)", rate_override_seconds=3).period_seconds == 3
    for bad in ("rate(0 minutes)", "cron(0 12 L * ? *)", "at(2026-01-01T00:00:00)", "cron(* * *)"):
        with pytest.raises(UnsupportedScheduleError):
            Schedule.parse(bad)


def test_routes_match_like_api_gateway() -> None:
    table = RouteTable(
        [
            RouteSpec("GET /reminders/{id}", "Get"),
            RouteSpec("GET /reminders", "List"),
            RouteSpec("ANY /files/{proxy+}", "Files"),
            RouteSpec("GET /reminders/special", "Special"),
        ]
    )
    assert table.match("GET", "/reminders/rem_1") == (
        RouteSpec("GET /reminders/{id}", "Get"),
        {"id": "rem_1"},
    )
    assert table.match("GET", "/reminders/special")[0].function_id == "Special"
    assert table.match("GET", "/reminders")[0].function_id == "List"
    assert table.match("DELETE", "/files/a/b") == (
        RouteSpec("ANY /files/{proxy+}", "Files"),
        {"proxy": "a/b"},
    )
    assert table.match("POST", "/reminders") is None
    with_default = RouteTable([RouteSpec("$default", "All")])
    assert with_default.match("PUT", "/anything")[0].function_id == "All"


def test_payload_v2_responses_map_to_http() -> None:
    status, headers, body = to_http(
        {
            "statusCode": 201,
            "headers": {"content-type": "application/json"},
            "body": '{"a":1}',
            "cookies": ["c=1"],
        }
    )
    assert status == 201 and body == b'{"a":1}' and ("set-cookie", "c=1") in headers
    assert to_http({"statusCode": 200, "body": "aGk=", "isBase64Encoded": True})[2] == b"hi"
    assert to_http({"plain": "object"})[:1] == (200,)  # API Gateway infers 200 + JSON


@pytest.fixture
def runner() -> Any:
    def make(report: bool) -> SqsEventSourceMapping:
        m = SqsEventSourceMapping.__new__(SqsEventSourceMapping)
        m.spec = MappingSpec("M", "F", "arn:aws:sqs:us-east-1:1:q", report_batch_item_failures=report)
        return m

    return make


def test_only_reported_records_stay_in_the_queue(runner: Any) -> None:
    ids = ["a", "b", "c"]
    m = runner(True)
    assert m.failed_ids({"batchItemFailures": []}, ids) == set()
    assert m.failed_ids({"batchItemFailures": [{"itemIdentifier": "b"}]}, ids) == {"b"}
    # A malformed report fails the whole batch, as Lambda does.
    assert m.failed_ids({"batchItemFailures": [{"itemIdentifier": "zzz"}]}, ids) == set(ids)
    assert m.failed_ids({"batchItemFailures": [{"itemIdentifier": ""}]}, ids) == set(ids)
    # Without ReportBatchItemFailures a successful invocation deletes everything.
    assert runner(False).failed_ids({"batchItemFailures": [{"itemIdentifier": "b"}]}, ids) == set()


def test_sqs_event_carries_what_lambda_puts_in_a_record() -> None:
    event = sqs_event(
        [
            {
                "MessageId": "m1",
                "ReceiptHandle": "rh",
                "Body": "{}",
                "MD5OfBody": "x",
                "Attributes": {"ApproximateReceiveCount": "3", "SentTimestamp": "1"},
                "MessageAttributes": {"reason": {"DataType": "String", "StringValue": "permanent_failure"}},
            }
        ],
        "arn:aws:sqs:us-east-1:1:q",
    )
    r = event["Records"][0]
    assert r["messageId"] == "m1" and r["receiptHandle"] == "rh" and r["eventSourceARN"].endswith(":q")
    assert r["attributes"]["ApproximateReceiveCount"] == "3" and r["eventSource"] == "aws:sqs"
    assert r["messageAttributes"]["reason"]["stringValue"] == "permanent_failure"


def test_event_patterns_match_like_eventbridge() -> None:
    from reminders_ops.local.eventbus import UnsupportedPatternError, matches, validate_pattern
    from reminders_ops.local.ses_events import ses_event

    sent = ses_event(
        "send",
        account_id="1",
        region="us-east-1",
        configuration_set="cs",
        message_id="m-1",
        source="from@example.com",
        destinations=["to@example.com"],
        tags={"delivery_key": "dlv_1", "reminder_id": "rem_1", "channel_id": "email-0"},
        sent_at=NOON,
    )
    assert sent["detail"]["mail"]["tags"]["delivery_key"] == ["dlv_1"]
    rule = {"source": ["aws.ses"], "detail-type": ["Email Sent", "Email Delivered"]}
    validate_pattern(rule)
    assert matches(rule, sent)
    assert not matches({**rule, "detail-type": ["Email Bounced"]}, sent)
    assert matches(
        {"detail": {"eventType": [{"prefix": "Se"}], "mail": {"tags": {"delivery_key": ["dlv_1"]}}}}, sent
    )
    assert matches({"detail": {"bounce": [{"exists": False}]}}, sent)
    assert not matches({"source": [{"anything-but": ["aws.ses"]}]}, sent)
    with pytest.raises(UnsupportedPatternError):
        validate_pattern({"detail": {"n": [{"numeric": [">", 1]}]}})
