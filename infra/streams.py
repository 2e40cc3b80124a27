"""A consumer of the table's stream: its function, its event source mapping (bounded retries,
bisection, partial batch failures, a filter) and its on-failure DLQ, with the grants and nag
acknowledgements every such consumer needs. Used by Receipts (issue 19) and OpEvents (issue 16);
the resources keep the construct ids ``<name>DLQ`` / ``<name>Function`` of the scope."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import API_TIMEOUT, FunctionFactory
from .nag import acknowledge
from .table import RemindersTable

RETRY_ATTEMPTS = 10


def stream_consumer(
    scope: Construct,
    name: str,
    *,
    factory: FunctionFactory,
    table: RemindersTable,
    handler: str,
    description: str,
    what: str,
    batch_size: int,
    filters: Sequence[dict[str, Any]],
    batching_window: Duration | None = None,
) -> tuple[lambda_.Function, sqs.Queue]:
    """(function, DLQ). ``what`` names the mapping in the DLQ's nag acknowledgement."""
    dlq = sqs.Queue(
        scope,
        f"{name}DLQ",
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(14),
    )
    function = factory.function(
        scope, f"{name}Function", handler=handler, timeout=API_TIMEOUT, description=description
    )
    factory.invoked(function).add_event_source(
        sources.DynamoEventSource(
            table.table,
            starting_position=lambda_.StartingPosition.TRIM_HORIZON,
            batch_size=batch_size,
            max_batching_window=batching_window,
            bisect_batch_on_error=True,
            retry_attempts=RETRY_ATTEMPTS,
            report_batch_item_failures=True,
            on_failure=sources.SqsDlq(dlq),
            filters=[lambda_.FilterCriteria.filter(f) for f in filters],
        )
    )
    table.grant_read_write(function)
    acknowledge(
        dlq,
        "AwsSolutions-SQS3",
        f"This queue is a dead-letter queue: the on-failure destination of the {what} stream mapping "
        "(records whose retries are exhausted), alarmed on depth; it needs no DLQ itself.",
    )
    assert function.role is not None
    acknowledge(
        function.role,
        "AwsSolutions-IAM5[Resource::*]",
        "dynamodb:ListStreams has no resource-level permissions (AWS grants it on * only); the "
        "stream reads themselves are scoped to the table's stream ARN.",
    )
    return function, dlq
