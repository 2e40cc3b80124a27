"""The delivery consumers: one Lambda per channel on its channel queue, with partial batch failure.

Each consumer may send a fresh message to its own queue (a long-lived delivery before its receive
budget runs out), send to its own DLQ (a dead letter carrying reason and attempts) and change the
visibility of its messages (retry delay; covered by the event source's consume grant).
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from .email import EmailChannel
from .functions import DELIVERY_MEMORY_SIZE_MB, DELIVERY_TIMEOUT, FunctionFactory
from .nag import acknowledge
from .queues import QueuePair, Queues
from .settings import Settings
from .table import RemindersTable
from .webhook import WebhookChannel

#: No batching window: a due reminder goes to a consumer as soon as SQS makes it visible (the
#: lateness target is p99 ≤ 1 s from due_at); under load the batches fill up anyway.
MAX_BATCHING_WINDOW = Duration.seconds(0)


class DeliveryWorkers(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        factory: FunctionFactory,
        settings: Settings,
        table: RemindersTable,
        queues: Queues,
        email: EmailChannel,
        webhook: WebhookChannel,
    ) -> None:
        super().__init__(scope, construct_id)
        self.email = self._consumer(
            factory, settings, table, queues.email, "EmailDeliveryFunction", "email_handler", "email"
        )
        self.webhook = self._consumer(
            factory, settings, table, queues.webhook, "WebhookDeliveryFunction", "webhook_handler", "webhook"
        )
        email.grant_send(self.email)
        # The email channel's shared rate is SES's sending quota, read once per cold start.
        self.email.add_to_role_policy(iam.PolicyStatement(actions=["ses:GetAccount"], resources=["*"]))
        role = self.email.role
        assert role is not None
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "ses:GetAccount (the account's sending quota) has no resource-level permissions: it names "
            "no resource, so '*' is the only resource it can be granted on.",
        )
        webhook.signing_secret.grant_read(self.webhook)
        # create: the first bare-URL send of an account to an origin makes its implicit endpoint,
        # its secret derived from the deployment signing key, which the first one generates (issue 24:
        # no stack-wide secret signs an account's webhooks).
        webhook.grant_endpoint_secrets(self.webhook, create=True)

    @property
    def functions(self) -> list[lambda_.Function]:
        return [self.email, self.webhook]

    def _consumer(
        self,
        factory: FunctionFactory,
        settings: Settings,
        table: RemindersTable,
        pair: QueuePair,
        construct_id: str,
        handler: str,
        channel: str,
    ) -> lambda_.Function:
        function = factory.function(
            self,
            construct_id,
            handler=f"reminders.handlers.delivery.{handler}",
            timeout=DELIVERY_TIMEOUT,
            description=f"Delivers {channel} reminders from the {channel} queue",
            extra_environment={"CHANNEL": channel},
            memory_size=DELIVERY_MEMORY_SIZE_MB,
        )
        factory.invoked(function).add_event_source(
            sources.SqsEventSource(
                pair.queue,
                batch_size=settings.delivery_batch_size,
                max_batching_window=MAX_BATCHING_WINDOW,
                report_batch_item_failures=True,
                max_concurrency=settings.delivery_max_concurrency,
            )
        )
        table.grant_read_write(function)
        pair.queue.grant_send_messages(function)
        pair.dlq.grant_send_messages(function)
        return function
