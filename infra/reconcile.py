"""Reconciliation of email sends against SES's own record: SES sending events (Send, Delivery)
arrive on the default event bus; a function marks the delivery delivered by its delivery-key tag, so
the retry after a crash between "SES accepted" and "ledger recorded" finds it delivered.

No event is dropped silently (issue 24 item 6: a lost bounce would keep mailing the address): an
event EventBridge cannot hand to the function (its target retries exhausted) goes to the rule
target's dead-letter queue (``SesEventsTargetDLQ``, the event itself as the body); an event the
function failed (Lambda's asynchronous retries exhausted) goes to its on-failure destination
(``SesEventsFailureQueue``, Lambda's invocation record with the event as ``requestPayload``). Both
are alarmed (Observability); ``reminders ses-events redrive`` re-feeds either to the function.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import API_TIMEOUT, FunctionFactory
from .nag import acknowledge
from .table import RemindersTable

SES_SEND_EVENTS = ["Email Sent", "Email Delivered"]
#: Feedback after acceptance: permanent bounces and complaints feed the suppression list.
SES_FEEDBACK_EVENTS = ["Email Bounced", "Email Complaint Received", "Email Rejected"]
#: EventBridge's retries of a failed hand-over (throttled or unavailable function), then the DLQ.
TARGET_RETRY_ATTEMPTS = 8
#: Lambda's retries of a failed invocation (the function raised), then the on-failure destination.
ASYNC_RETRY_ATTEMPTS = 2
#: Both give up on an event this old (the queues keep it 14 days for a redrive).
MAX_EVENT_AGE = Duration.hours(6)


class SesReconciler(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, factory: FunctionFactory, table: RemindersTable
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = factory.function(
            self,
            "SesEventsFunction",
            handler="reminders.handlers.ses_events.handler",
            timeout=API_TIMEOUT,
            description="SES send, bounce, complaint and reject events: reconcile, annotate, suppress",
        )
        self.target_dlq = _failure_queue(
            self,
            "SesEventsTargetDLQ",
            "the SES events rule target's dead-letter queue (events EventBridge could not hand to "
            "the function after its retries)",
        )
        self.failure_queue = _failure_queue(
            self,
            "SesEventsFailureQueue",
            "SesEventsFunction's on-failure destination (events the function failed after Lambda's "
            "asynchronous retries)",
        )
        factory.invoked(self.function).configure_async_invoke(
            retry_attempts=ASYNC_RETRY_ATTEMPTS,
            max_event_age=MAX_EVENT_AGE,
            on_failure=destinations.SqsDestination(self.failure_queue),
        )
        self.rule = events.Rule(
            self,
            "SesEventsRule",
            description="SES sending events of the reminders configuration set",
            event_pattern=events.EventPattern(
                source=["aws.ses"], detail_type=SES_SEND_EVENTS + SES_FEEDBACK_EVENTS
            ),
            targets=[
                targets.LambdaFunction(
                    factory.invoked(self.function),
                    retry_attempts=TARGET_RETRY_ATTEMPTS,
                    max_event_age=MAX_EVENT_AGE,
                    dead_letter_queue=self.target_dlq,
                )
            ],
        )
        table.grant_read_write(self.function)


def _failure_queue(scope: Construct, construct_id: str, what: str) -> sqs.Queue:
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(14),
    )
    acknowledge(
        queue,
        "AwsSolutions-SQS3",
        f"This queue is a dead-letter queue: {what}, alarmed on depth and re-fed by "
        "`reminders ses-events redrive`; it needs no DLQ itself.",
    )
    return queue
