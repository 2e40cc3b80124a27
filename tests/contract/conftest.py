"""Fixtures of the contract suite: every test runs once per backend (moto, dynalite, in-memory;
the DynamoDB ones chosen by ``REMINDERS_TEST_DYNAMODB``, see tests/conftest.py); every test gets
fresh tables."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.conftest import DYNAMODB_BACKENDS, skip_if_moto_only
from tests.contract.backends import (
    LocalStackQueueBackend,
    MemoryQueueBackend,
    MotoQueueBackend,
    QueueBackend,
)

STORE_BACKENDS = (*DYNAMODB_BACKENDS, "memory")
#: LocalStack's SQS joins when ``REMINDERS_TEST_LOCALSTACK_SQS`` names its endpoint (``make verify``
#: starts it: tests/localstack/run.sh).
LOCALSTACK_SQS = os.environ.get("REMINDERS_TEST_LOCALSTACK_SQS", "")
QUEUE_BACKENDS = ("sqs-moto", "memory", *(("sqs-localstack",) if LOCALSTACK_SQS else ()))


def dynamodb_resource(request: pytest.FixtureRequest, backend: str) -> Any:
    """The boto3 DynamoDB resource of ``backend``; a ``moto_only`` case is skipped on dynalite."""
    if backend == "dynamodb-moto":
        return request.getfixturevalue("_moto_dynamodb")
    if backend != "dynamodb-dynalite":
        raise ValueError(backend)
    skip_if_moto_only(request)
    return boto3.resource(
        "dynamodb", region_name="us-east-1", endpoint_url=request.getfixturevalue("_dynalite")
    )


@pytest.fixture(scope="module")
def _moto_dynamodb() -> Iterator[Any]:
    """One in-process moto for the module; each test gets a fresh table (cheaper than a new mock)."""
    from moto import mock_aws

    with mock_aws():
        yield boto3.resource("dynamodb", region_name="us-east-1")


_TABLES = itertools.count()


def low_level_client(ddb: Any) -> Any:
    """A plain DynamoDB client at the resource's endpoint (a resource's own client re-serialises)."""
    return boto3.client("dynamodb", region_name="us-east-1", endpoint_url=ddb.meta.client.meta.endpoint_url)


def create_table(ddb: Any) -> Any:
    """The reminders table exactly as tests/support/aws.py (and the stack) define it."""
    name = f"reminders-{next(_TABLES)}"
    ddb.meta.client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "gpk", "gsk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "due",
                "KeySchema": [
                    {"AttributeName": "gpk", "KeyType": "HASH"},
                    {"AttributeName": "gsk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["rid", "v", "chs", "w"]},
            }
        ],
    )
    ddb.meta.client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300}
    )
    return ddb.Table(name)


@pytest.fixture(params=STORE_BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A ReminderStore: DynamoReminderStore on moto or dynalite, or MemoryReminderStore."""
    if request.param == "memory":
        from reminders.adapters.clock import SystemClock
        from reminders.adapters.memory import MemoryReminderStore

        yield MemoryReminderStore(clock=SystemClock())
        return
    from reminders.adapters.dynamodb import DynamoReminderStore

    ddb = dynamodb_resource(request, request.param)
    table = create_table(ddb)
    client = low_level_client(ddb)  # as runtime.store()
    yield DynamoReminderStore(client, table_name=table.name)
    table.delete()


@pytest.fixture(params=QUEUE_BACKENDS)
def queues(request: pytest.FixtureRequest) -> Iterator[QueueBackend]:
    if request.param == "memory":
        yield MemoryQueueBackend()
        return
    if request.param == "sqs-localstack":
        backend = LocalStackQueueBackend(LOCALSTACK_SQS)
        yield backend
        backend.drop()
        return
    from moto import mock_aws

    with mock_aws():
        yield MotoQueueBackend()
