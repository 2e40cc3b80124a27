"""Issue 24 item 6: a lost SES event (a bounce, a complaint) must never be dropped silently.

Two places lose an event: EventBridge failing to hand it to the function (its target retry policy
exhausted) and the function failing it (Lambda's asynchronous retries exhausted). Each gets an SQS
queue — the rule target's dead-letter queue, the function's on-failure destination — and each
queue is alarmed on depth and shown on the dashboard; ``reminders ses-events`` re-feeds both.
"""

from __future__ import annotations

import json
from typing import Any

from .conftest import Synthesized


def _props(synthesized: Synthesized, logical_id: str) -> dict[str, Any]:
    properties: dict[str, Any] = synthesized.resources[logical_id]["Properties"]
    return properties


def _arn(logical_id: str) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def _ses_rule_target(synthesized: Synthesized, logical_ids: dict[str, str]) -> dict[str, Any]:
    (target,) = [
        t
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Events::Rule"
        and r["Properties"].get("EventPattern", {}).get("source") == ["aws.ses"]
        for t in r["Properties"]["Targets"]
    ]
    assert target["Arn"] == _arn(logical_ids["SesEventsFunction"])
    return target


def test_a_lost_ses_event_lands_in_an_alarmed_queue_when_retries_are_exhausted(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    # EventBridge -> function: bounded retries, then the target's DLQ.
    target = _ses_rule_target(synthesized, logical_ids)
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 8, "MaximumEventAgeInSeconds": 6 * 3600}
    assert target["DeadLetterConfig"] == {"Arn": _arn(logical_ids["SesEventsTargetDLQ"])}
    # Only this rule may send to the target DLQ (EventBridge's service principal, its source ARN).
    (policy,) = [
        r["Properties"]
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::SQS::QueuePolicy"
        and {"Ref": logical_ids["SesEventsTargetDLQ"]} in r["Properties"]["Queues"]
    ]
    sends = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert any(
        s["Principal"] == {"Service": "events.amazonaws.com"}
        and s["Condition"]["ArnEquals"]["aws:SourceArn"] == _arn(logical_ids["SesEventsRule"])
        for s in sends
    ), sends
    # Function failures: Lambda's async retries, then the on-failure destination.
    (config,) = [
        r["Properties"]
        for r in synthesized.resources.values()
        if r["Type"] == "AWS::Lambda::EventInvokeConfig"
        and r["Properties"]["FunctionName"] == {"Ref": logical_ids["SesEventsFunction"]}
    ]
    assert config["MaximumRetryAttempts"] == 2
    assert config["MaximumEventAgeInSeconds"] == 6 * 3600
    assert config["DestinationConfig"] == {
        "OnFailure": {"Destination": _arn(logical_ids["SesEventsFailureQueue"])}
    }
    # Lambda sends the invocation record with the function's own role.
    from .test_infra_template import allowed, policy_statements

    statements = policy_statements(synthesized, logical_ids["SesEventsFunction"])
    assert allowed(statements, "sqs:SendMessage", _arn(logical_ids["SesEventsFailureQueue"]))
    for queue in ("SesEventsTargetDLQ", "SesEventsFailureQueue"):
        q = _props(synthesized, logical_ids[queue])
        assert q["SqsManagedSseEnabled"] is True and q["MessageRetentionPeriod"] == 14 * 24 * 3600
    # Both alarmed on any message, notifying the alarm topic; both on the dashboard.
    alarms = [
        r["Properties"] for r in synthesized.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"
    ]
    for queue in ("SesEventsTargetDLQ", "SesEventsFailureQueue"):
        (alarm,) = [
            a
            for a in alarms
            if a.get("Dimensions")
            == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [logical_ids[queue], "QueueName"]}}]
        ]
        assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
        assert alarm["Threshold"] == 0 and alarm["ComparisonOperator"] == "GreaterThanThreshold"
        assert alarm["AlarmActions"] == [{"Ref": logical_ids["AlarmTopic"]}]
        assert "reminders ses-events" in alarm["AlarmDescription"]
    (dashboard,) = [r for r in synthesized.resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for queue in ("SesEventsTargetDLQ", "SesEventsFailureQueue"):
        assert logical_ids[queue] in body
    # The operator CLI finds them by the stack's outputs.
    outputs = synthesized.template["Outputs"]
    assert outputs["SesEventsDLQUrl"]["Value"] == {"Ref": logical_ids["SesEventsTargetDLQ"]}
    assert outputs["SesEventsFailureQueueUrl"]["Value"] == {"Ref": logical_ids["SesEventsFailureQueue"]}
    assert outputs["SesEventsFunctionName"]["Value"] == {"Ref": logical_ids["SesEventsFunction"]}
