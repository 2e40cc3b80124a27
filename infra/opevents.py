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
from constructs import Construct

from .functions import FunctionFactory
from .queues import Queues
from .streams import stream_consumer
from .table import RemindersTable

REMINDER_PREFIX = "R#"
HEALTH_PREFIX = "E#"
HEALTH_SK = "H"
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
        # Reads registrations and reminders; writes event reminders and endpoint uses (the table).
        self.function, self.dlq = stream_consumer(
            self,
            "OpEvents",
            factory=factory,
            table=table,
            handler="reminders.handlers.opevents.handler",
            description="Operational events to each account's event endpoint (table stream, old vs new)",
            what="operational events",
            batch_size=BATCH_SIZE,
            batching_window=Duration.seconds(BATCHING_WINDOW_SECONDS),
            filters=[
                {
                    "eventName": lambda_.FilterRule.is_equal("MODIFY"),  # a create is never an outcome
                    "dynamodb": {
                        "Keys": {
                            "pk": {"S": lambda_.FilterRule.begins_with(REMINDER_PREFIX)},
                            "sk": {"S": lambda_.FilterRule.is_equal("R")},
                        }
                    },
                },
                {
                    "eventName": lambda_.FilterRule.or_("INSERT", "MODIFY"),
                    "dynamodb": {
                        "Keys": {
                            "pk": {"S": lambda_.FilterRule.begins_with(HEALTH_PREFIX)},
                            "sk": {"S": lambda_.FilterRule.is_equal(HEALTH_SK)},
                        }
                    },
                },
            ],
        )
        # The event reminder is handed to the webhook queue at once (due now), as any create does.
        queues.webhook.queue.grant_send_messages(self.function)
