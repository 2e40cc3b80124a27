"""Operational events (issue 16): the table's stream (NEW_AND_OLD_IMAGES), filtered to reminder items
and endpoint health items → OpEventsFunction, which diffs the old and new image of each and creates
one event reminder per delivery outcome or endpoint transition for accounts with an event endpoint.
Own on-failure DLQ and alarms.

Why the stream: the record is written by DynamoDB atomically with the outcome, so a consumer that
crashes between recording an outcome and telling the account loses nothing (the stream is the
outbox), and the event reminder's stable key makes the stream's at-least-once delivery harmless.
Lambda's reads of a table stream are not billed; records the filter drops are not invocations.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import API_TIMEOUT, FunctionFactory
from .nag import acknowledge
from .queues import Queues
from .table import RemindersTable

REMINDER_PREFIX = "R#"
HEALTH_PREFIX = "E#"
HEALTH_SK = "H"
RETRY_ATTEMPTS = 10
BATCH_SIZE = 100
#: Up to this long to fill a batch: fewer invocations per delivered reminder (events are not urgent
#: to the second; the event reminder is due when the outcome happened).
BATCHING_WINDOW_SECONDS = 1


class OpEvents(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        factory: FunctionFactory,
        table: RemindersTable,
        queues: Queues,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dlq = sqs.Queue(
            self,
            "OpEventsDLQ",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.function = factory.function(
            self,
            "OpEventsFunction",
            handler="reminders.handlers.opevents.handler",
            timeout=API_TIMEOUT,
            description="Operational events to each account's event endpoint (table stream, old vs new)",
        )
        self.function.add_event_source(
            sources.DynamoEventSource(
                table.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                max_batching_window=Duration.seconds(BATCHING_WINDOW_SECONDS),
                bisect_batch_on_error=True,
                retry_attempts=RETRY_ATTEMPTS,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.dlq),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "eventName": lambda_.FilterRule.is_equal(
                                "MODIFY"
                            ),  # a create is never an outcome
                            "dynamodb": {
                                "Keys": {
                                    "pk": {"S": lambda_.FilterRule.begins_with(REMINDER_PREFIX)},
                                    "sk": {"S": lambda_.FilterRule.is_equal("R")},
                                }
                            },
                        }
                    ),
                    lambda_.FilterCriteria.filter(
                        {
                            "eventName": lambda_.FilterRule.or_("INSERT", "MODIFY"),
                            "dynamodb": {
                                "Keys": {
                                    "pk": {"S": lambda_.FilterRule.begins_with(HEALTH_PREFIX)},
                                    "sk": {"S": lambda_.FilterRule.is_equal(HEALTH_SK)},
                                }
                            },
                        }
                    ),
                ],
            )
        )
        # Reads registrations, endpoints and reminders; writes event reminders and endpoint uses.
        table.grant_read_write(self.function)
        # The event reminder is handed to the webhook queue at once (due now), as any create does.
        queues.webhook.queue.grant_send_messages(self.function)
        acknowledge(
            self.dlq,
            "AwsSolutions-SQS3",
            "This queue is a dead-letter queue: the on-failure destination of the operational events "
            "stream mapping (records whose retries are exhausted), alarmed on depth; it needs no DLQ.",
        )
        assert self.function.role is not None
        acknowledge(
            self.function.role,
            "AwsSolutions-IAM5[Resource::*]",
            "dynamodb:ListStreams has no resource-level permissions (AWS grants it on * only); the "
            "stream reads themselves are scoped to the table's stream ARN.",
        )
