"""SQS event source mappings, run as Lambda runs them.

One poller per mapping long-polls the queue, gathers a batch (batch size, batching window),
invokes the function with a real SQS event and deletes exactly the records not reported in
``batchItemFailures`` (all of them when the function fails without ``ReportBatchItemFailures``
semantics, none when it raises). At most ``MaximumConcurrency`` invocations run at once, in a
thread pool; the poller receives only when a slot is free, so nothing waits invisible in memory
and the queues stay shallow. maxReceiveCount is the queue's business (moto moves on receive).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .events import sqs_event
from .lambdas import LocalFunction
from .spec import MappingSpec, QueueSpec

log = logging.getLogger("reminders_ops.local")

#: Lambda long-polls with 20 s; locally a short wait keeps Ctrl-C prompt (moto wakes on new messages).
POLL_WAIT_SECONDS = 1
SQS_RECEIVE_MAX = 10
#: In-process threads are not Lambda instances: a mapping's concurrency is capped locally.
DEFAULT_LOCAL_CONCURRENCY_CAP = 4
#: Lambda's default for a mapping without MaximumConcurrency is "as many as the account allows".
UNBOUNDED_CONCURRENCY = 1000
ERROR_BACKOFF_SECONDS = 1.0


@dataclass
class MappingStats:
    batches: int = 0
    records: int = 0
    failed_records: int = 0
    deleted: int = 0
    function_errors: int = 0
    poll_errors: int = 0
    in_flight: int = 0
    last_batch_at: float = 0.0


class SqsEventSourceMapping:
    def __init__(
        self,
        spec: MappingSpec,
        queue: QueueSpec,
        function: LocalFunction,
        sqs: Any,
        *,
        region: str,
        local_concurrency_cap: int = DEFAULT_LOCAL_CONCURRENCY_CAP,
        paused: Callable[[], bool] = lambda: False,
        on_batch: Callable[[str, dict[str, Any], Any], None] | None = None,
    ) -> None:
        self.spec = spec
        self.queue = queue
        self.function = function
        self.sqs = sqs
        self.region = region
        self.paused = paused
        self.on_batch = on_batch
        declared = spec.max_concurrency or UNBOUNDED_CONCURRENCY
        self.concurrency = max(1, min(declared, local_concurrency_cap))
        self.stats = MappingStats()
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix=f"esm-{spec.logical_id[:24]}")
        self._thread = threading.Thread(target=self._poll, name=f"poller-{spec.logical_id[:24]}", daemon=True)
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> SqsEventSourceMapping:
        if self.spec.enabled:
            self._thread.start()
        return self

    def request_stop(self) -> None:
        """Stop polling (in-flight invocations finish); ``stop`` waits for them."""
        self._stop.set()

    def stop(self, timeout: float = 15.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    # -- polling ---------------------------------------------------------------------------------
    def _poll(self) -> None:
        while not self._stop.is_set():
            if self.paused():
                self._stop.wait(1.0)
                continue
            if not self._slots.acquire(timeout=0.5):
                continue
            try:
                batch = self._gather()
            except Exception as exc:  # the emulator restarting, a transient error: poll again
                self._slots.release()
                with self._lock:
                    self.stats.poll_errors += 1
                if not self._stop.is_set():
                    log.warning("%s: receive failed: %s", self.spec.logical_id, exc)
                    self._stop.wait(ERROR_BACKOFF_SECONDS)
                continue
            if not batch:
                self._slots.release()
                continue
            with self._lock:
                self.stats.in_flight += 1
            try:
                self._pool.submit(self._invoke, batch)
            except RuntimeError:  # pool shut down while stopping: the messages come back on their own
                self._slots.release()
                return

    def _receive(self, count: int, wait: int) -> list[dict[str, Any]]:
        resp = self.sqs.receive_message(
            QueueUrl=self.queue.url,
            MaxNumberOfMessages=max(1, min(SQS_RECEIVE_MAX, count)),
            WaitTimeSeconds=wait,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return list(resp.get("Messages", []))

    def _gather(self) -> list[dict[str, Any]]:
        """One batch: the first long poll, then more until the batch is full or the window closes."""
        size = self.spec.batch_size
        batch = self._receive(size, POLL_WAIT_SECONDS)
        if not batch:
            return []
        window = self.spec.batching_window_seconds
        deadline = time.monotonic() + window
        while len(batch) < size and not self._stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            more = self._receive(size - len(batch), 1 if remaining >= 0.5 else 0)
            if not more and remaining < 0.5:
                self._stop.wait(remaining)
            seen = {m["MessageId"] for m in batch}
            batch.extend(m for m in more if m["MessageId"] not in seen)
        return batch

    # -- invocation -------------------------------------------------------------------------------
    def _invoke(self, batch: list[dict[str, Any]]) -> None:
        try:
            self._invoke_batch(batch)
        except Exception:
            log.exception("%s: batch handling failed", self.spec.logical_id)
        finally:
            with self._lock:
                self.stats.in_flight -= 1
            self._slots.release()

    def _invoke_batch(self, batch: list[dict[str, Any]]) -> None:
        event = sqs_event(batch, self.queue.arn, self.region)
        ids = [m["MessageId"] for m in batch]
        failed: set[str]
        result: Any = None
        try:
            result = self.function.invoke(event)
        except Exception as exc:
            # A function error: Lambda deletes nothing; every record returns after its visibility.
            log.warning("%s: %s failed: %s", self.spec.logical_id, self.function.name, exc)
            failed = set(ids)
            with self._lock:
                self.stats.function_errors += 1
        else:
            failed = self.failed_ids(result, ids)
        if self.on_batch is not None:
            self.on_batch(self.spec.logical_id, event, result)
        done = [m for m in batch if m["MessageId"] not in failed]
        for start in range(0, len(done), SQS_RECEIVE_MAX):
            chunk = done[start : start + SQS_RECEIVE_MAX]
            self.sqs.delete_message_batch(
                QueueUrl=self.queue.url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)],
            )
        with self._lock:
            self.stats.batches += 1
            self.stats.records += len(batch)
            self.stats.failed_records += len(failed)
            self.stats.deleted += len(done)
            self.stats.last_batch_at = time.time()

    def failed_ids(self, result: Any, ids: list[str]) -> set[str]:
        """The records Lambda keeps in the queue after a successful invocation."""
        if not self.spec.report_batch_item_failures:
            return set()
        if not isinstance(result, dict) or not result.get("batchItemFailures"):
            return set()
        known = set(ids)
        failed: set[str] = set()
        for item in result["batchItemFailures"]:
            identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
            if not identifier or identifier not in known:
                return known  # a malformed response fails the whole batch, as Lambda does
            failed.add(identifier)
        return failed
