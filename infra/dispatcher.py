"""The cron dispatcher: an EventBridge tick fans out one message per index shard to the dispatch
queue; dispatch workers drain one shard each, in parallel (one per shard at most)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from .functions import DISPATCH_WORKER_TIMEOUT, DISPATCHER_TIMEOUT, FunctionFactory
from .queues import Queues
from .settings import Settings
from .table import RemindersTable

TICK_SCHEDULE = events.Schedule.rate(Duration.minutes(1))


class Dispatcher(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        factory: FunctionFactory,
        settings: Settings,
        table: RemindersTable,
        queues: Queues,
    ) -> None:
        super().__init__(scope, construct_id)
        self.tick = factory.function(
            self,
            "DispatcherFunction",
            handler="reminders.handlers.dispatcher.tick_handler",
            timeout=DISPATCHER_TIMEOUT,
            description="Every minute: one dispatch message per due-index shard (and the watchdog)",
        )
        # A failed tick is not retried: the next tick, a minute later, selects everything still
        # eligible (the dispatcher never looks only at the last interval).
        factory.invoked(self.tick).configure_async_invoke(retry_attempts=0)
        self.worker = factory.function(
            self,
            "DispatchWorkerFunction",
            handler="reminders.handlers.dispatcher.shard_handler",
            timeout=DISPATCH_WORKER_TIMEOUT,
            description="Drains one due-index shard: enqueues due deliveries with their exact delay",
        )
        self.rule = events.Rule(
            self,
            "TickRule",
            description="Runs the reminders dispatcher every minute",
            schedule=TICK_SCHEDULE,
            targets=[targets.LambdaFunction(factory.invoked(self.tick))],
        )
        factory.invoked(self.worker).add_event_source(
            sources.SqsEventSource(
                queues.dispatch.queue,
                batch_size=1,
                report_batch_item_failures=True,
                max_concurrency=settings.dispatch_max_concurrency,
            )
        )
        for function in (self.tick, self.worker):
            table.grant_read_write(function)
        queues.dispatch.queue.grant_send_messages(self.tick)
        for queue in (queues.email.queue, queues.webhook.queue, queues.dispatch.queue):
            queue.grant_send_messages(self.worker)

    @property
    def functions(self) -> list[lambda_.Function]:
        return [self.tick, self.worker]
