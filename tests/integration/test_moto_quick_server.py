"""Issue 14 (lateness on the embedded runtime) — the benches' moto server without its own
per-request overhead (``reminders_ops.local.faithful --quick``): it resolves a request's backend
without listing moto's package directory (moto does that on every request, under one lock), and it
still answers the services the stack uses."""

from __future__ import annotations

import os

import boto3
import pytest
from reminders_ops.local.faithful import quick_server, start_moto_server


def test_backends_are_resolved_without_listing_moto_on_every_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import backends

    quick_server()
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p: (listed.append(p), real(p))[1])
    for _ in range(3):
        names = set(backends.list_of_moto_modules())
        assert {"sqs", "dynamodb", "sesv2", "events"} <= names
    assert listed == []


def test_the_quick_server_answers_sqs_and_dynamodb() -> None:
    proc, port = start_moto_server(60.0, "--quick")
    try:
        kw = {
            "endpoint_url": f"http://127.0.0.1:{port}",
            "region_name": "us-east-1",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
        }
        sqs = boto3.client("sqs", **kw)
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="x")
        assert [m["Body"] for m in sqs.receive_message(QueueUrl=url).get("Messages", [])] == ["x"]
        ddb = boto3.client("dynamodb", **kw)
        ddb.create_table(
            TableName="tbl",  # AWS requires three characters or more
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        ddb.get_waiter("table_exists").wait(TableName="tbl", WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
        assert ddb.list_tables()["TableNames"] == ["tbl"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
