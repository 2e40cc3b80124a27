"""The SQS event source mapping's semantics (reminders_ops.local.esm, what ``reminders local`` runs
as Lambda) over a real SQS API: moto in `make test`, LocalStack's own SQS in ``make verify``.

What the product relies on: records a function reports in ``batchItemFailures`` stay in the queue
and come back after their visibility with a higher receive count, the others are deleted; a function
error deletes nothing; a record received more than maxReceiveCount times moves to the DLQ. Real
time: the queues' visibility is 1 s, and every wait is a poll for the awaited state."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from reminders_ops.local.esm import SqsEventSourceMapping
from reminders_ops.local.spec import MappingSpec, QueueSpec

from tests.contract.backends import LocalStackQueueBackend, MotoQueueBackend
from tests.contract.conftest import LOCALSTACK_SQS

SQS_SERVICES = ("sqs-moto", *(("sqs-localstack",) if LOCALSTACK_SQS else ()))


@pytest.fixture(params=SQS_SERVICES)
def sqs(request: pytest.FixtureRequest) -> Iterator[MotoQueueBackend]:
    if request.param == "sqs-localstack":
        backend = LocalStackQueueBackend(LOCALSTACK_SQS)
        yield backend
        backend.drop()
        return
    from moto import mock_aws

    with mock_aws():
        yield MotoQueueBackend()


class Function:
    """A function the mapping invokes: ``answer(record)`` says per record "ok", "fail" or "raise"."""

    name = "fn"

    def __init__(self, answer: Callable[[dict[str, Any]], str]) -> None:
        self.answer = answer
        self.seen: list[tuple[str, int]] = []  # (body, ApproximateReceiveCount) per record invoked
        self.lock = threading.Lock()

    def invoke(self, event: dict[str, Any]) -> Any:
        records = event["Records"]
        answers = [self.answer(r) for r in records]
        with self.lock:
            self.seen += [(r["body"], int(r["attributes"]["ApproximateReceiveCount"])) for r in records]
        if "raise" in answers:
            raise RuntimeError("function error")
        return {
            "batchItemFailures": [
                {"itemIdentifier": r["messageId"]}
                for r, a in zip(records, answers, strict=True)
                if a == "fail"
            ]
        }

    def times(self, body: str) -> list[int]:
        with self.lock:
            return [n for b, n in self.seen if b == body]


def _mapping(sqs: MotoQueueBackend, queue: str, function: Function) -> SqsEventSourceMapping:
    url = sqs.urls[queue]
    arn = sqs.client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    spec = MappingSpec("Map", function.name, arn, batch_size=10, report_batch_item_failures=True)
    return SqsEventSourceMapping(
        spec, QueueSpec("Q", queue, arn, url), function, sqs.client, region="us-east-1"
    )  # type: ignore[arg-type]


def _until(done: Callable[[], bool], bound: float = 30.0) -> None:
    """Poll for a state (the bound only ends a broken run: nothing is asserted about time)."""
    end = time.monotonic() + bound
    while not done():
        assert time.monotonic() < end, "the awaited state never came"
        time.sleep(0.05)


def _left(sqs: MotoQueueBackend, queue: str) -> int:
    attrs = sqs.client.get_queue_attributes(
        QueueUrl=sqs.urls[queue],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def test_mapping_keeps_only_the_reported_failures_which_come_back_with_a_higher_receive_count(
    sqs: MotoQueueBackend,
) -> None:
    q = sqs.create("q", visibility_timeout=1)
    fn = Function(
        lambda r: "fail" if r["body"] == "b" and r["attributes"]["ApproximateReceiveCount"] == "1" else "ok"
    )
    sqs.send_batch(q, [("a", 0), ("b", 0), ("c", 0)])
    m = _mapping(sqs, q, fn).start()
    try:
        _until(lambda: len(fn.times("b")) == 2 and _left(sqs, q) == 0)
    finally:
        m.stop()
    assert fn.times("a") == [1] and fn.times("c") == [1]  # deleted after their one success
    assert fn.times("b") == [1, 2]  # kept, back after its visibility, then deleted


def test_mapping_deletes_nothing_of_a_batch_whose_function_raises(sqs: MotoQueueBackend) -> None:
    q = sqs.create("q", visibility_timeout=1)
    fn = Function(lambda r: "raise" if r["attributes"]["ApproximateReceiveCount"] == "1" else "ok")
    sqs.send_batch(q, [("a", 0), ("b", 0)])
    m = _mapping(sqs, q, fn).start()
    try:
        _until(lambda: len(fn.times("a")) == 2 and len(fn.times("b")) == 2 and _left(sqs, q) == 0)
    finally:
        m.stop()
    assert fn.times("a") == [1, 2] and fn.times("b") == [1, 2]


def test_mapping_moves_a_record_to_the_dlq_after_max_receive_count_receives(sqs: MotoQueueBackend) -> None:
    dlq = sqs.create("q-dlq")
    q = sqs.create("q", visibility_timeout=1, dlq=dlq, max_receive_count=2)
    fn = Function(lambda r: "fail")
    sqs.send(q, "poison")
    m = _mapping(sqs, q, fn).start()
    try:
        _until(lambda: _left(sqs, dlq) == 1)
    finally:
        m.stop()
    assert fn.times("poison") == [1, 2]  # the third receive moved it instead of invoking
    assert [x.body for x in sqs.receive(dlq)] == ["poison"]
    assert _left(sqs, q) == 0
