"""The emulator is as faithful as AWS where the promise depends on it.

- Conditional writes are atomic (MISSION §8, "two consumers claim one delivery"): moto evaluates a
  condition and applies the write with no lock between them, so ten threads racing one
  conditional ``UpdateItem`` could see two winners — the double claim behind a delivery recorded
  ``conflict_unconfirmed`` and then ``accepted`` once a batch's records ran on concurrent threads.
  Checked on moto's server (the local runtime, the SAM tests, the benches, the wire run);
  in-process ``mock_aws`` gets the same lock (the ``aws`` fixture), where the race was not seen in
  300 rounds (the caller's thread runs the action, so few switches land inside one).
- A long poll answers a message that becomes visible while it waits (a reminder handed to SQS
  with its delay): moto's wait woke only for new messages and returned empty.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config

ROUNDS = 100  # without the lock, 3 rounds in 100 had two winners (measured)
RACERS = 10


def _race(make_client: Any) -> list[int]:
    """Winners per round of RACERS threads claiming one fresh item with one conditional update."""
    setup = make_client()
    setup.create_table(
        TableName="race",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    setup.get_waiter("table_exists").wait(TableName="race", WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
    padding = {f"f{i}": {"S": "x" * 50} for i in range(40)}  # an item of a delivery's size
    clients = [make_client() for _ in range(RACERS)]
    winners: list[int] = []
    for r in range(ROUNDS):
        setup.put_item(TableName="race", Item={"pk": {"S": f"k{r}"}, "lease": {"S": "-"}, **padding})
        won: list[int] = []
        start = threading.Barrier(RACERS)

        def claim(i: int, r: int = r, won: list[int] = won, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                clients[i].update_item(
                    TableName="race",
                    Key={"pk": {"S": f"k{r}"}},
                    UpdateExpression="SET lease = :me",
                    ConditionExpression="lease = :free",
                    ExpressionAttributeValues={":me": {"S": str(i)}, ":free": {"S": "-"}},
                )
                won.append(i)
            except clients[i].exceptions.ConditionalCheckFailedException:
                pass

        threads = [threading.Thread(target=claim, args=(i,)) for i in range(RACERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners.append(len(won))
    return winners


@pytest.fixture
def emulator() -> Iterator[Any]:
    from reminders_ops.local.emulator import Emulator

    saved = dict(os.environ)  # start() points this process's clients at the server
    server = Emulator(account_id="123456789012", region="us-east-1").start()
    try:
        yield server
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)


def _client(emulator: Any, service: str) -> Any:
    config = Config(max_pool_connections=RACERS, retries={"max_attempts": 1, "mode": "standard"})
    return boto3.client(service, endpoint_url=emulator.endpoint, region_name="us-east-1", config=config)


def test_racing_conditional_claims_on_moto_server_have_one_winner(emulator: Any) -> None:
    assert _race(lambda: _client(emulator, "dynamodb")) == [1] * ROUNDS


def test_long_poll_answers_a_delayed_message_that_turns_visible_while_it_waits(emulator: Any) -> None:
    sqs = _client(emulator, "sqs")
    url = sqs.create_queue(QueueName="delayed")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="due", DelaySeconds=1)
    time.sleep(0.5)  # the poll starts before the message is visible and ends after it is
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in got] == ["due"]
