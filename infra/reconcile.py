"""Reconciliation of email sends against SES's own record: SES sending events (Send, Delivery)
arrive on the default event bus; a function marks the delivery delivered by its delivery-key tag, so
the retry after a crash between "SES accepted" and "ledger recorded" finds it delivered."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from .functions import API_TIMEOUT, FunctionFactory
from .table import RemindersTable

SES_SEND_EVENTS = ["Email Sent", "Email Delivered"]
#: Feedback after acceptance: permanent bounces and complaints feed the suppression list.
SES_FEEDBACK_EVENTS = ["Email Bounced", "Email Complaint Received", "Email Rejected"]


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
        self.rule = events.Rule(
            self,
            "SesEventsRule",
            description="SES sending events of the reminders configuration set",
            event_pattern=events.EventPattern(
                source=["aws.ses"], detail_type=SES_SEND_EVENTS + SES_FEEDBACK_EVENTS
            ),
            targets=[
                targets.LambdaFunction(self.function, retry_attempts=8, max_event_age=Duration.hours(6))
            ],
        )
        table.grant_read_write(self.function)
