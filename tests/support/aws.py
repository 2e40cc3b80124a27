"""Resources of the stack in moto, and the environment the template gives each function."""

from __future__ import annotations

import json
from typing import Any

import boto3
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET

QUEUES = ("email", "webhook", "dispatch")


def create_resources(max_receive_count: int = 20, visibility_timeout: int = 180) -> dict[str, str]:
    ddb = boto3.client("dynamodb")
    ddb.create_table(
        TableName="reminders",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "gpk", "gsk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "due",
                "KeySchema": [
                    {"AttributeName": "gpk", "KeyType": "HASH"},
                    {"AttributeName": "gsk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["rid", "v", "chs", "w"]},
            }
        ],
    )
    sqs = boto3.client("sqs")
    env: dict[str, str] = {"TABLE_NAME": "reminders"}
    for name in QUEUES:
        dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        q = sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(visibility_timeout),
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)}
                ),
            },
        )["QueueUrl"]
        env[f"{name.upper()}_QUEUE_URL"] = q
        env[f"{name.upper()}_DLQ_URL"] = dlq
    ses = boto3.client("sesv2")
    ses.create_email_identity(EmailIdentity="reminders@example.com")
    ses.create_configuration_set(ConfigurationSetName="reminders")
    secret = boto3.client("secretsmanager").create_secret(
        Name="webhook-signing", SecretString=DEV_WEBHOOK_SECRET
    )
    env.update(
        {
            "DUE_SHARDS": "4",
            "MAX_RECEIVE_COUNT": str(max_receive_count),
            "WEBHOOK_SECRET_ARN": secret["ARN"],
            "SES_CONFIGURATION_SET": "reminders",
            "EMAIL_FROM": "reminders@example.com",
            "ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8",
            "POWERTOOLS_SERVICE_NAME": "reminders",
            "POWERTOOLS_METRICS_NAMESPACE": "Reminders",
        }
    )
    return env


def table() -> Any:
    return boto3.resource("dynamodb").Table("reminders")


def sent_emails() -> list[Any]:
    from moto.backends import get_backend

    backend = get_backend("ses")["111111111111"]["us-east-1"]  # sesv2 sends land in the ses backend
    return list(backend.sent_messages)
