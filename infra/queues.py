"""The SQS queues: one per channel plus the dispatch queue, each with its own DLQ.

Every queue is a standard queue with SQS-managed encryption, SSL enforced and 14 days' retention.
Visibility timeouts are derived from the consuming function's timeout (AWS guidance: at least 6x),
and each DLQ allows redrive only from its own source queue, so "redrive to source" in the console
routes a message back where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_sqs as sqs
from constructs import Construct
from reminders.domain.timing import VISIBILITY_TIMEOUT_FACTOR

RETENTION = Duration.days(14)


def visibility_timeout_for(consumer_timeout: Duration) -> Duration:
    return Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * int(consumer_timeout.to_seconds()))


@dataclass(frozen=True, slots=True)
class QueuePair:
    queue: sqs.Queue
    dlq: sqs.Queue
    max_receive_count: int


class Queues(Construct):
    """``EmailQueue``/``EmailDLQ``, ``WebhookQueue``/``WebhookDLQ``, ``DispatchQueue``/``DispatchDLQ``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        delivery_timeout: Duration,
        dispatch_worker_timeout: Duration,
        delivery_max_receive_count: int,
        dispatch_max_receive_count: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.email = self._pair("Email", delivery_timeout, delivery_max_receive_count)
        self.webhook = self._pair("Webhook", delivery_timeout, delivery_max_receive_count)
        self.dispatch = self._pair("Dispatch", dispatch_worker_timeout, dispatch_max_receive_count)

    @property
    def all(self) -> dict[str, QueuePair]:
        return {"Email": self.email, "Webhook": self.webhook, "Dispatch": self.dispatch}

    def _pair(self, name: str, consumer_timeout: Duration, max_receive_count: int) -> QueuePair:
        stack = Stack.of(self)
        # Named queues: the DLQ's redrive allow policy must name its source queue's ARN, and the
        # source's redrive policy names the DLQ's ARN; a literal name breaks that reference cycle.
        queue_name = f"{stack.stack_name}-{name}Queue"
        source_arn = stack.format_arn(service="sqs", resource=queue_name)
        dlq = sqs.Queue(
            self,
            f"{name}DLQ",
            queue_name=f"{stack.stack_name}-{name}DLQ",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=RETENTION,
            redrive_allow_policy=sqs.RedriveAllowPolicy(
                redrive_permission=sqs.RedrivePermission.BY_QUEUE,
                source_queues=[sqs.Queue.from_queue_arn(self, f"{name}QueueByArn", source_arn)],
            ),
        )
        queue = sqs.Queue(
            self,
            f"{name}Queue",
            queue_name=queue_name,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=RETENTION,
            visibility_timeout=visibility_timeout_for(consumer_timeout),
            dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count),
        )
        return QueuePair(queue=queue, dlq=dlq, max_receive_count=max_receive_count)
