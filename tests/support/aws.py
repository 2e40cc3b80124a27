"""Resources of the stack in moto, and the environment the template gives each function."""

from __future__ import annotations

from typing import Any

import boto3
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET


def create_resources(max_receive_count: int = 20, visibility_timeout: int = 180) -> dict[str, str]:
    """The benchmarks' table and queues, plus SES and the signing secret in Secrets Manager."""
    from reminders_ops.bench.sim.embedded import create_stack_resources

    env = create_stack_resources(
        max_receive_count, visibility_timeout, dispatch_visibility_timeout=visibility_timeout
    )
    env.pop("WEBHOOK_SIGNING_SECRET")  # tests sign with the secret from Secrets Manager, as in AWS
    ses = boto3.client("sesv2")
    ses.create_email_identity(EmailIdentity="reminders@example.com")
    ses.create_configuration_set(ConfigurationSetName="reminders")
    secret = boto3.client("secretsmanager").create_secret(
        Name="webhook-signing", SecretString=DEV_WEBHOOK_SECRET
    )
    # The endpoints' customer-managed key (moto's KMS: GenerateDataKey and Decrypt are real calls).
    key = boto3.client("kms").create_key(Description="reminders endpoint secrets")["KeyMetadata"]["Arn"]
    env.update(
        {
            "ENDPOINT_KEY_ID": key,
            "BOOTSTRAP_PRINCIPAL": "arn:aws:iam::111111111111:role/reminders-operator",
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
