"""Receiver receipts (MISSION §5): ``POST /inbound/receiver`` (the API function verifies the Standard
Webhooks signature, then writes the receipt with one conditional put by event id — the durable
first step, before the 202) → the table's stream, filtered to new ``RCPT#`` items → ReceiptsFunction
(the order-insensitive merge), with its own on-failure DLQ and alarms.

Why the stream and not API Gateway → SQS: the signature must be verified (and a replay refused)
*before* anything is written, which a service integration cannot do; and a put followed by a send
has a gap (the put landed, the send did not). The stream record is written by DynamoDB atomically
with the item, so every stored receipt is processed.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import API_TIMEOUT, FunctionFactory
from .nag import acknowledge
from .table import RemindersTable

RECEIPT_PREFIX = "RCPT#"
RETRY_ATTEMPTS = 10
BATCH_SIZE = 25


class Receipts(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, factory: FunctionFactory, table: RemindersTable
    ) -> None:
        super().__init__(scope, construct_id)
        self.dlq = sqs.Queue(
            self,
            "ReceiptsDLQ",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.function = factory.function(
            self,
            "ReceiptsFunction",
            handler="reminders.handlers.receipts.handler",
            timeout=API_TIMEOUT,
            description="Merges receivers' signed receipts into their deliveries (table stream)",
        )
        self.function.add_event_source(
            sources.DynamoEventSource(
                table.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=RETRY_ATTEMPTS,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.dlq),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "eventName": lambda_.FilterRule.is_equal("INSERT"),
                            "dynamodb": {
                                "Keys": {"pk": {"S": lambda_.FilterRule.begins_with(RECEIPT_PREFIX)}}
                            },
                        }
                    )
                ],
            )
        )
        table.grant_read_write(self.function)
        acknowledge(
            self.dlq,
            "AwsSolutions-SQS3",
            "This queue is a dead-letter queue: the on-failure destination of the receipts stream "
            "mapping (records whose retries are exhausted), alarmed on depth; it needs no DLQ itself.",
        )
        assert self.function.role is not None
        acknowledge(
            self.function.role,
            "AwsSolutions-IAM5[Resource::*]",
            "dynamodb:ListStreams has no resource-level permissions (AWS grants it on * only); the "
            "stream reads themselves are scoped to the table's stream ARN.",
        )
