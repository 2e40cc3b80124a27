"""RemindersStack: assembles one construct per capability; owns no resources itself."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from .api import Api
from .delivery import DeliveryWorkers
from .dispatcher import Dispatcher
from .edge import PublicEdge
from .email import EmailChannel
from .functions import DELIVERY_TIMEOUT, DISPATCH_WORKER_TIMEOUT, FunctionFactory, shared_environment
from .observability import Observability
from .opevents import OpEvents
from .queues import Queues
from .receipts import Receipts
from .reconcile import SesReconciler
from .settings import Settings
from .table import RemindersTable
from .webhook import WebhookChannel


class RemindersStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings
        self.table = RemindersTable(
            self,
            "Table",
            customer_key=settings.table_customer_key,
            provisioned=(settings.table_min_capacity, settings.table_max_capacity)
            if settings.table_billing == "provisioned"
            else None,
        )
        self.queues = Queues(
            self,
            "Queues",
            delivery_timeout=DELIVERY_TIMEOUT,
            dispatch_worker_timeout=DISPATCH_WORKER_TIMEOUT,
            delivery_max_receive_count=settings.delivery_max_receive_count,
            dispatch_max_receive_count=settings.dispatch_max_receive_count,
        )
        self.email = EmailChannel(self, "Email", email_from=settings.email_from)
        self.webhook = WebhookChannel(self, "Webhook")
        factory = FunctionFactory(
            self,
            "Functions",
            settings=settings,
            environment=shared_environment(settings, self.table, self.queues, self.email, self.webhook),
        )
        self.api = Api(
            self,
            "Api",
            factory=factory,
            table=self.table,
            queues=self.queues,
            settings=settings,
            webhook=self.webhook,
        )
        self.dispatcher = Dispatcher(
            self, "Dispatcher", factory=factory, settings=settings, table=self.table, queues=self.queues
        )
        self.delivery = DeliveryWorkers(
            self,
            "Delivery",
            factory=factory,
            settings=settings,
            table=self.table,
            queues=self.queues,
            email=self.email,
            webhook=self.webhook,
        )
        # The optional CloudFront + WAF edge (issue 24 item 7): a per-client rate rule.
        self.edge = (
            PublicEdge(
                self,
                "Edge",
                api_endpoint=self.api.http_api.api_endpoint,
                rate_per_5_minutes=settings.edge_rate_per_5_minutes,
            )
            if settings.public_edge
            else None
        )
        # One-click unsubscribe (issue 19): the email consumer signs links to the API's public
        # POST /unsubscribe/{token} (a custom domain when configured, else the edge when on); the
        # public function verifies them.
        self.delivery.email.add_environment(
            "UNSUBSCRIBE_BASE_URL",
            settings.unsubscribe_base_url or (self.edge.url if self.edge else self.api.url),
        )
        if settings.unsubscribe_mailto:
            self.delivery.email.add_environment("UNSUBSCRIBE_MAILTO", settings.unsubscribe_mailto)
        for fn in (self.delivery.email, self.api.public_function):
            self.email.unsubscribe_secret.grant_read(fn)
        self.reconciler = SesReconciler(self, "Reconcile", factory=factory, table=self.table)
        # Suppression-list keys (issue 19): checked before each email, written by bounces and
        # complaints (SES events) and one-click unsubscribes (API), listed and removed by the API.
        for fn in (self.delivery.email, self.api.function, self.reconciler.function):
            self.email.address_hash_secret.grant_read(fn)
        self.receipts = Receipts(self, "Receipts", factory=factory, table=self.table)
        self.webhook.signing_secret.grant_read(self.api.public_function)  # receipts verify with it (issue 19)
        self.opevents = OpEvents(self, "OpEvents", factory=factory, table=self.table, queues=self.queues)
        functions = {
            "ApiFunction": self.api.function,
            "PublicFunction": self.api.public_function,
            "DispatcherFunction": self.dispatcher.tick,
            "DispatchWorkerFunction": self.dispatcher.worker,
            "EmailDeliveryFunction": self.delivery.email,
            "WebhookDeliveryFunction": self.delivery.webhook,
            "SesEventsFunction": self.reconciler.function,
            "ReceiptsFunction": self.receipts.function,
            "OpEventsFunction": self.opevents.function,
        }
        self.observability = Observability(
            self,
            "Observability",
            settings=settings,
            queues=self.queues,
            functions=functions,
            alarmed_functions=[
                "PublicFunction",
                "DispatcherFunction",
                "DispatchWorkerFunction",
                "SesEventsFunction",
                "ReceiptsFunction",
                "OpEventsFunction",
            ],
            extra_dlqs={"Receipts": self.receipts.dlq, "OpEvents": self.opevents.dlq},
            failure_queues={
                "SesEventsTargetDLQ": (
                    self.reconciler.target_dlq,
                    "SES events EventBridge could not hand to SesEventsFunction (a bounce or complaint"
                    " not yet suppressed): re-feed them with `reminders ses-events redrive --queue target`",
                ),
                "SesEventsFailureQueue": (
                    self.reconciler.failure_queue,
                    "SES events SesEventsFunction failed after Lambda's retries (a bounce or complaint"
                    " not yet suppressed): re-feed them with `reminders ses-events redrive --queue failed`",
                ),
            },
        )
        self._outputs()

    def _outputs(self) -> None:
        CfnOutput(self, "ApiUrl", value=self.api.url, description="Base URL of the HTTP API")
        if self.edge is not None:
            CfnOutput(self, "PublicEdgeUrl", value=self.edge.url, description="Public routes behind the WAF")
        CfnOutput(self, "TableName", value=self.table.table.table_name)
        for name, pair in self.queues.all.items():
            CfnOutput(self, f"{name}QueueUrl", value=pair.queue.queue_url)
            CfnOutput(self, f"{name}DLQUrl", value=pair.dlq.queue_url)
        CfnOutput(self, "SesEventsFunctionName", value=self.reconciler.function.function_name)
        CfnOutput(self, "SesEventsDLQUrl", value=self.reconciler.target_dlq.queue_url)
        CfnOutput(self, "SesEventsFailureQueueUrl", value=self.reconciler.failure_queue.queue_url)
        CfnOutput(self, "WebhookSecretArn", value=self.webhook.signing_secret.secret_arn)
        CfnOutput(self, "EndpointKeyArn", value=self.webhook.endpoint_key.key_arn)
        CfnOutput(self, "AddressHashSecretArn", value=self.email.address_hash_secret.secret_arn)
        CfnOutput(self, "SesConfigurationSet", value=self.email.configuration_set.configuration_set_name)
        CfnOutput(self, "AlarmTopicArn", value=self.observability.topic.topic_arn)
        CfnOutput(self, "DashboardName", value=self.observability.dashboard.dashboard_name)
