"""Issue 14 — the records of one batch are sent concurrently, each claimed, sent and recorded on its
own, and the partial batch response names exactly the records that must come back.

Real handlers (``webhook_handler``), moto SQS/DynamoDB in-process, a real local HTTP receiver on
127.0.0.1 that holds every request for a while and counts how many are in flight at once: with the
records one after another it can never see more than one, so these tests cannot pass sequentially.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from reminders.handlers import delivery
from reminders.handlers.delivery import webhook_handler

from tests.support.lambda_runtime import call_api, invoke_batch, receive

HOLD_SECONDS = 0.6


class CountingReceiver:
    """Answers every POST after ``hold`` seconds: 503 when the path contains ``/fail``, else 200;
    counts requests per webhook-id and the largest number in flight at once."""

    def __init__(self, hold: float = HOLD_SECONDS) -> None:
        self.hold = hold
        self.in_flight = 0
        self.max_in_flight = 0
        self.posts: Counter[str] = Counter()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                with outer._lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    outer.posts[self.headers.get("webhook-id") or ""] += 1
                try:
                    time.sleep(outer.hold)
                    status = 503 if "/fail" in self.path else 200
                    self.send_response(status)
                    self.send_header("content-length", "0")
                    self.end_headers()
                finally:
                    with outer._lock:
                        outer.in_flight -= 1

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> CountingReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def counting() -> Iterator[CountingReceiver]:
    with CountingReceiver() as r:
        yield r


def _create(url: str, key: str, due: datetime | None = None) -> dict[str, Any]:
    body = {
        "key": key,
        "account_id": "acct-1",
        "kind": "renewal",
        "due_at": (due or datetime.now(UTC) - timedelta(seconds=1)).isoformat(),
        "channels": [{"type": "webhook", "url": url}],
        "template": {"id": "renewal", "version": 1},
        "data": {"n": key},
    }
    status, payload = call_api("POST", "/reminders", body)
    assert status == 201, payload
    return payload


def _state(rid: str) -> dict[str, Any]:
    _, got = call_api("GET", f"/reminders/{rid}")
    return dict(got["deliveries"][0])


def test_ten_records_of_a_batch_are_sent_concurrently_against_moto(
    aws: dict[str, str], counting: CountingReceiver
) -> None:
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    counting.hold = 2.0  # a slow receiver: each answer takes 2 s
    ids = [_create(f"{counting.url}/ok/{i}", f"k{i}")["id"] for i in range(10)]
    msgs = receive(sqs, url)
    assert len(msgs) == 10
    result = invoke_batch(webhook_handler, sqs, url, msgs)
    assert result["batchItemFailures"] == []
    # One after another it is 1; all ten reach the receiver within its 2 s hold unless this shared
    # machine is very busy (claims on moto then take long), hence "most of them".
    assert counting.max_in_flight >= 5
    assert all(_state(rid)["state"] == "delivered" for rid in ids)
    assert sorted(counting.posts.values()) == [1] * 10  # each key sent once


def test_partial_batch_failure_reports_exactly_the_records_that_must_come_back(
    aws: dict[str, str], counting: CountingReceiver
) -> None:
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    ids = {}
    for i in range(10):
        path = "fail" if i % 3 == 0 else "ok"
        ids[_create(f"{counting.url}/{path}/{i}", f"p{i}")["id"]] = path
    msgs = receive(sqs, url)
    assert len(msgs) == 10
    by_message = {m["MessageId"]: json.loads(m["Body"])["reminder_id"] for m in msgs}
    result = invoke_batch(webhook_handler, sqs, url, msgs)
    failed = [f["itemIdentifier"] for f in result["batchItemFailures"]]
    assert counting.max_in_flight > 1
    assert {by_message[m] for m in failed} == {rid for rid, p in ids.items() if p == "fail"}
    assert failed == [m["MessageId"] for m in msgs if m["MessageId"] in failed]  # in the batch's order
    for rid, path in ids.items():
        d = _state(rid)
        assert d["state"] == ("retryable" if path == "fail" else "delivered"), (rid, d)
    # the acknowledged ones are gone, the failed ones stay (back after their retry visibility)
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    left = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    assert sum(int(left[n]) for n in names) == len(failed)


def test_one_record_at_a_time_when_the_concurrency_is_one(
    aws: dict[str, str], counting: CountingReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counter above can tell: with DELIVERY_RECORD_CONCURRENCY=1 it never sees two at once."""
    monkeypatch.setenv("DELIVERY_RECORD_CONCURRENCY", "1")
    counting.hold = 0.05
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    for i in range(4):
        _create(f"{counting.url}/ok/{i}", f"s{i}")
    msgs = receive(sqs, url)
    assert invoke_batch(webhook_handler, sqs, url, msgs)["batchItemFailures"] == []
    assert counting.max_in_flight == 1 and delivery.record_concurrency() == 1


def test_one_instance_has_one_worker_id_and_unique_increasing_leases_across_threads(
    aws: dict[str, str], counting: CountingReceiver
) -> None:
    from reminders import runtime
    from reminders.services.skew import StoreFloorClock

    counting.hold = 0.05
    sqs = boto3.client("sqs")
    url = aws["WEBHOOK_QUEUE_URL"]
    ids = [_create(f"{counting.url}/ok/{i}", f"w{i}")["id"] for i in range(10)]
    invoke_batch(webhook_handler, sqs, url, receive(sqs, url))
    store = runtime.store()
    rows = [store.get(rid) for rid in ids]
    workers = {a.worker for r in rows if r for a in r.deliveries["webhook-0"].history if a.worker}
    assert workers == {runtime.worker_id()}
    deliverer = runtime.deliverer()
    assert isinstance(deliverer.clock, StoreFloorClock)  # corrected by the store's (issue 25 item 7)
    now = datetime.now(UTC)
    leases: list[datetime] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(200):
            lease = deliverer._new_lease(now)
            with lock:
                leases.append(lease)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(leases)) == len(leases) == 1600  # unique across threads
    assert deliverer._new_lease(now) > max(leases)  # and still increasing
