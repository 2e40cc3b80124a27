"""The table's stream on in-process moto, read by the local runtime's stream mapping (the one
``reminders local`` runs) with a mapping's filters, invoking a handler as Lambda does."""

from __future__ import annotations

from typing import Any

import boto3
from reminders_ops.local.streams import DynamoStreamMapping, StreamMappingSpec


def table_stream(
    table_name: str,
    function: Any,
    *,
    view: str,
    filters: tuple[dict[str, Any], ...],
    logical_id: str,
    batch_size: int = 100,
) -> DynamoStreamMapping:
    """Turn the table's stream on (``view``) and map it to ``function`` (``.name``, ``.invoke``)."""
    ddb = boto3.client("dynamodb")
    ddb.update_table(
        TableName=table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": view}
    )
    spec = StreamMappingSpec(
        logical_id, function.name, table_name, batch_size, filters=filters, report_batch_item_failures=True
    )
    # botocore routes DescribeStream to an account-based endpoint moto in-process does not match.
    streams = boto3.client("dynamodbstreams", endpoint_url="https://streams.dynamodb.us-east-1.amazonaws.com")
    m = DynamoStreamMapping(spec, function, ddb, streams, boto3.client("sqs"))
    m.stream_arn = ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    return m
