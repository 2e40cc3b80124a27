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

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from .functions import FunctionFactory
from .streams import stream_consumer
from .table import RemindersTable

RECEIPT_PREFIX = "RCPT#"
BATCH_SIZE = 25


class Receipts(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, factory: FunctionFactory, table: RemindersTable
    ) -> None:
        super().__init__(scope, construct_id)
        self.function, self.dlq = stream_consumer(
            self,
            "Receipts",
            factory=factory,
            table=table,
            handler="reminders.handlers.receipts.handler",
            description="Merges receivers' signed receipts into their deliveries (table stream)",
            what="receipts",
            batch_size=BATCH_SIZE,
            filters=[
                {
                    "eventName": lambda_.FilterRule.is_equal("INSERT"),
                    "dynamodb": {"Keys": {"pk": {"S": lambda_.FilterRule.begins_with(RECEIPT_PREFIX)}}},
                }
            ],
        )
