"""Issue 9 — ways one reminder was sent twice or lost in the record, each reproduced and now a test.

Every case is named after what it proves. The wire-level cases talk to real local sockets (a server
that stalls or drops after reading the request, a receiver that trickles its answer); the rest run
the real services in the in-memory world on a virtual clock (tests/unit/fakes.py).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from reminders.adapters.clock import SystemClock
from reminders.domain.errors import ConflictError
from reminders.domain.models import ChannelType
from reminders.domain.retry import OutcomeClass, RetryPolicy
from reminders.domain.states import DeliveryState
from reminders.domain.timing import DEFAULT_TIMING, SQS_MAX_VISIBILITY_SECONDS
from reminders.services.deliver import DeliveryMessage, MessageContext
from reminders.services.intents import ChannelSpec
from reminders.services.reconcile import Reconciler

from tests.unit.fakes import EMAIL, World

EMAIL_ONLY = (ChannelSpec(ChannelType.EMAIL, EMAIL),)


# -- a TCP peer that reads a whole HTTP request and then misbehaves ----------------------------------
class BadPeer:
    """127.0.0.1 server: reads each request (headers + body), then ``mode``: "drop" closes without an
    answer, "stall" holds the connection open, "trickle" answers one byte at a time."""

    def __init__(self, mode: str, trickle_gap_seconds: float = 0.3) -> None:
        self.mode = mode
        self.gap = trickle_gap_seconds
        self.requests = 0
        self._stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> BadPeer:
        t = threading.Thread(target=self._serve, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                body += chunk
            self.requests += 1
            if self.mode == "drop":
                return
            if self.mode == "stall":
                self._stop.wait(10)
                return
            answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
            for i in range(len(answer)):
                if self._stop.wait(self.gap):
                    return
                try:
                    conn.sendall(answer[i : i + 1])
                except OSError:
                    return


@pytest.fixture
def runtime_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from reminders import runtime

    runtime.reset()
    yield
    runtime.reset()


# 1 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["drop", "stall"])
def test_ses_send_to_a_server_that_reads_then_drops_or_stalls_is_one_request(
    mode: str, monkeypatch: pytest.MonkeyPatch, runtime_env: None
) -> None:
    """botocore's defaults sent this one email 3 times (60 s read timeout each)."""
    from reminders import runtime

    monkeypatch.setenv("REMINDERS_RETRY_PROVIDER_TIMEOUT_SECONDS", "3")  # read timeout 1 s
    with BadPeer(mode) as peer:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SESV2", f"http://127.0.0.1:{peer.port}")
        client = runtime._client("sesv2")
        with pytest.raises(Exception) as info:
            client.send_email(
                FromEmailAddress="a@example.com",
                Destination={"ToAddresses": ["b@example.com"]},
                Content={"Raw": {"Data": b"Subject: x\r\n\r\nbody"}},
            )
        time.sleep(0.3)  # a retry, if any, would have connected by now
    assert peer.requests == 1, f"one attempt must be one request ({type(info.value).__name__})"


def test_every_client_has_an_explicit_retry_and_timeout_configuration(
    monkeypatch: pytest.MonkeyPatch, runtime_env: None
) -> None:
    from reminders import runtime
    from reminders.adapters.clients import describe

    for service in ("sesv2", "sqs", "secretsmanager", "ssm"):
        d = describe(runtime._client(service))
        assert d["retry_mode"] == "standard"
        assert d["read_timeout"] <= DEFAULT_TIMING.attempt_deadline_seconds
        assert d["connect_timeout"] <= 2
        expected = 1 if service == "sesv2" else 3
        assert d["max_attempts"] == expected, d


def test_each_function_logs_its_clients_settings_once_at_cold_start(
    monkeypatch: pytest.MonkeyPatch, runtime_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    from reminders import runtime
    from reminders.handlers import coldstart

    caplog.set_level("INFO")
    coldstart.reset()
    # INFO whatever level an earlier test in this worker left on the service's logger (Powertools
    # configures a service's logger once; under xdist another test's WARNING run came first).
    saved = runtime.logger().log_level
    runtime.logger().setLevel("INFO")

    @coldstart.reported
    def handler(event: Any, context: Any) -> None:
        runtime._client("sesv2")

    try:
        handler({}, None)
        handler({}, None)
    finally:
        runtime.logger().setLevel(saved)
    logged = [r for r in caplog.records if getattr(r, "action", None) == "client_settings"]
    assert len(logged) == 1
    ses = [c for c in logged[0].clients if c["service"] == "sesv2"]  # type: ignore[attr-defined]
    assert ses and all(c["max_attempts"] == 1 and c["retry_mode"] == "standard" for c in ses)
    coldstart.reset()


# 2 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("outcome", ["500", "timeout_after", "connection_closed"])
def test_an_ambiguous_email_outcome_waits_for_the_ses_send_event(outcome: str) -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0, channels=EMAIL_ONLY)
    key = w.delivery(r.id, "email-0").key
    w.sender.script(key, [outcome])
    (res,) = w.poll("email")
    assert not res.ack
    assert res.visibility_seconds >= w.policy.unconfirmed_send_wait_seconds
    d = w.delivery(r.id, "email-0")
    assert d.state is DeliveryState.RETRYABLE


def test_a_connection_refused_email_is_not_ambiguous_and_retries_by_backoff() -> None:
    w = World(shards=1, policy=RetryPolicy(base_seconds=2))
    r = w.create("k", due_in=0, channels=EMAIL_ONLY)
    w.sender.script(w.delivery(r.id, "email-0").key, ["connection"])
    (res,) = w.poll("email")
    assert not res.ack and res.visibility_seconds < w.policy.unconfirmed_send_wait_seconds


def test_ses_closed_connection_after_the_request_left_is_classified_ambiguous() -> None:
    from botocore.exceptions import ConnectionClosedError
    from reminders.adapters.ses import SesEmailSender
    from reminders.services.render import render

    class Closing:
        def send_email(self, **_: Any) -> Any:
            raise ConnectionClosedError(endpoint_url="https://email.us-east-1.amazonaws.com")

    w = World(shards=1)
    r = w.create("k", due_in=0, channels=EMAIL_ONLY)
    d = r.deliveries["email-0"]
    result = SesEmailSender(Closing(), from_address="a@example.com", configuration_set=None).send(
        d, r, render(r, d)
    )
    assert result.ambiguous


# 3 -------------------------------------------------------------------------------------------------
def _email_world() -> tuple[World, Reconciler, Any, str]:
    w = World(shards=1)
    r = w.create("k", due_in=0, channels=EMAIL_ONLY)
    key = w.delivery(r.id, "email-0").key
    return w, Reconciler(store=w.store, clock=w.clock, telemetry=w.telemetry), r, key


def test_ses_send_event_after_a_reschedule_proves_the_send_and_stops_a_second_one() -> None:
    w, rec, r, key = _email_world()
    w.sender.script(key, ["timeout_after"])  # SES accepted; we saw a timeout
    w.poll("email")
    # Since issue 18 a reschedule after an ambiguous attempt is refused (409); the row moved to
    # ``queued`` as a reschedule used to leave it (what an earlier reschedule leaves behind).
    with pytest.raises(ConflictError, match="ambiguous"):
        w.reminders.reschedule(r.id, w.clock.now() + timedelta(seconds=60))
    d = w.delivery(r.id, "email-0")
    w.store.save_delivery(r.id, replace(d, state=DeliveryState.QUEUED, next_attempt_at=None), d.rev)
    assert w.delivery(r.id, "email-0").state is DeliveryState.QUEUED
    assert rec.provider_accepted(r.id, "email-0", key, "ses-1", destination=EMAIL) == "reconciled"
    w.clock.advance(3600)
    w.poll("email")
    w.poll("email")
    assert w.sender.sends(key) == 1 and w.sender.accepted[key] == 1
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_ses_send_event_while_a_rate_limited_claim_was_given_back_proves_the_send() -> None:
    w, rec, r, key = _email_world()
    w.sender.script(key, ["timeout_after"])
    w.poll("email")
    # The retry yielded its claim to the rate limiter: the delivery is `queued` again.
    d = w.delivery(r.id, "email-0")
    w.store.save_delivery(r.id, replace(d, state=DeliveryState.QUEUED), d.rev)
    assert rec.provider_accepted(r.id, "email-0", key, "ses-1", destination=EMAIL) == "reconciled"
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_ses_send_event_for_a_dead_letter_means_its_redrive_does_not_resend() -> None:
    w, rec, r, key = _email_world()
    w.sender.script(key, ["timeout_after", "400"])
    w.poll("email")
    w.clock.advance(3600)
    w.poll("email")
    assert w.delivery(r.id, "email-0").state is DeliveryState.DEAD_LETTER
    rec.provider_accepted(r.id, "email-0", key, "ses-1", destination=EMAIL)
    # An operator redrives the DLQ message back to the source queue.
    (m,) = w.sqs.receive("email-dlq")
    w.sqs.send("email", m.body, attributes=dict(m.attributes))
    w.sqs.delete("email-dlq", m.receipt_handle)
    w.poll("email")
    assert w.sender.sends(key) == 2  # the timeout and the 400; no third send after the redrive
    assert w.sender.accepted[key] == 1
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_a_redrive_of_a_delivery_whose_history_shows_an_acceptance_does_not_resend() -> None:
    w, _, r, key = _email_world()
    w.sender.script(key, ["ok"])
    w.poll("email")
    # A dead letter that still carries the provider's acceptance (written by an earlier version).
    d = w.delivery(r.id, "email-0")
    dead = replace(d, state=DeliveryState.DEAD_LETTER, dead_letter_reason="attempts_exhausted")
    w.store.save_delivery(r.id, dead, d.rev)
    w.sqs.send(
        "email",
        json.dumps({"reminder_id": r.id, "channel_id": "email-0", "version": r.version}),
        attributes={"dl_cycle": "0", "reason": "attempts_exhausted"},
    )
    w.poll("email")
    assert w.sender.sends(key) == 1
    assert w.delivery(r.id, "email-0").state is DeliveryState.DELIVERED


def test_evidence_is_scoped_to_the_destination_it_was_sent_to() -> None:
    w, rec, r, key = _email_world()
    w.sender.script(key, ["timeout_after"])
    w.poll("email")
    out = rec.provider_accepted(r.id, "email-0", key, "ses-1", destination="old-address@example.com")
    assert out.startswith("noted")
    assert w.delivery(r.id, "email-0").state is DeliveryState.RETRYABLE


# 4 -------------------------------------------------------------------------------------------------
def test_a_first_attempt_409_is_conflict_unconfirmed_not_delivered() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["409"])  # a receiver using 409 for a business error
    (res,) = w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "conflict_unconfirmed"
    assert res.outcome == "dead_lettered"


def test_a_409_after_an_ambiguous_attempt_confirms_the_earlier_send() -> None:
    w = World(shards=1, policy=RetryPolicy(base_seconds=2))
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["timeout_after", "409"])
    w.poll()
    w.clock.advance(3600)
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.history[-1].outcome == "reconciled_conflict"


def test_a_409_after_a_lease_takeover_confirms_the_earlier_send() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["crash_after", "409"])
    (m,) = w.receive()
    with pytest.raises(Exception, match="died"):
        w.process(m)
    w.clock.advance(w.policy.lease_seconds + VISIBILITY_SLACK)
    w.poll()
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and d.history[-1].outcome == "reconciled_conflict"


VISIBILITY_SLACK = 200


# 5 -------------------------------------------------------------------------------------------------
def test_a_trickling_receiver_is_cut_at_the_attempt_deadline() -> None:
    """Per-read timeouts let a receiver sending a byte every 0.3 s hold a 1 s send for ~14 s."""
    from reminders.adapters.destinations import DestinationPolicy
    from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
    from reminders.adapters.webhook import WebhookSender
    from reminders.services.render import render

    w = World(shards=1)
    with BadPeer("trickle", trickle_gap_seconds=0.3) as peer:
        r = w.create(
            "k", due_in=0, channels=(ChannelSpec(ChannelType.WEBHOOK, f"http://127.0.0.1:{peer.port}/h"),)
        )
        d = r.deliveries["webhook-0"]
        sender = WebhookSender(
            policy=DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"}),
            secret=lambda: DEV_WEBHOOK_SECRET,
            clock=w.clock,
            timeout_seconds=1.0,
        )
        started = time.monotonic()
        result = sender.send(d, r, render(r, d))
        elapsed = time.monotonic() - started
    assert result.outcome is OutcomeClass.TIMEOUT and result.ambiguous
    assert elapsed < 3.0, f"the attempt lasted {elapsed:.1f} s against a 1 s deadline"


def test_no_record_starts_whose_send_and_record_do_not_fit_the_remaining_time() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    (m,) = w.receive()
    ctx = MessageContext(
        m.message_id,
        m.receipt_handle,
        m.receive_count,
        dict(m.attributes),
        remaining_seconds=lambda: DEFAULT_TIMING.record_budget_seconds - 1,
    )
    res = w.worker().process(DeliveryMessage.parse(json.loads(m.body)), ctx)
    assert not res.ack and res.visibility_seconds == 0 and res.outcome == "no_time_left"
    assert w.sender.calls == []
    assert w.delivery(r.id).state is DeliveryState.QUEUED  # never claimed


def test_the_rest_of_a_batch_is_handed_back_at_once_when_time_runs_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reminders.handlers import delivery as handler

    calls: list[tuple[str, int]] = []
    processed: list[str] = []

    class FakeQueues:
        def change_visibility(self, channel: str, handle: str, seconds: int) -> None:
            calls.append((handle, seconds))

    class FakeDeliverer:
        clock = SystemClock()  # the handler reads how far behind the batch is on the deliverer's clock

        def process(self, msg: DeliveryMessage, ctx: MessageContext) -> Any:
            from reminders.services.deliver import RecordResult

            if ctx.remaining_seconds() < DEFAULT_TIMING.record_budget_seconds:
                return RecordResult(False, 0, "no_time_left")
            processed.append(ctx.message_id)
            return RecordResult(True, 0, "delivered")

    monkeypatch.setattr(handler.runtime, "deliverer", lambda: FakeDeliverer())
    monkeypatch.setattr(handler.runtime, "queues", lambda: FakeQueues())
    from reminders_ops.invoke import lambda_context
    from reminders_ops.local.events import sqs_event

    clock = {"left": 60.0}

    class Ctx:
        def get_remaining_time_in_millis(self) -> int:
            clock["left"] -= 10.0  # each look costs ten seconds of a slow batch
            return int(clock["left"] * 1000)

    body = json.dumps({"reminder_id": "rem_x", "channel_id": "webhook-0", "version": 1})
    messages = [
        {"MessageId": f"m{i}", "ReceiptHandle": f"h{i}", "Body": body, "Attributes": {}} for i in range(5)
    ]
    event = sqs_event(messages, "arn:aws:sqs:us-east-1:111111111111:q")
    ctx = lambda_context("WebhookDelivery")
    ctx.get_remaining_time_in_millis = Ctx().get_remaining_time_in_millis  # type: ignore[method-assign]
    out = handler.webhook_handler(event, ctx)
    failed = {f["itemIdentifier"] for f in out["batchItemFailures"]}
    assert processed and failed and failed.isdisjoint(processed)
    assert all(seconds == 0 for _, seconds in calls) and len(calls) == len(failed)


def test_lease_provider_timeout_function_timeout_and_visibility_come_from_one_formula() -> None:
    t = DEFAULT_TIMING
    assert t.problems() == []
    assert t.lease_seconds > t.send_budget_seconds > t.attempt_deadline_seconds
    assert t.visibility_timeout_seconds > t.lease_seconds
    assert t.function_timeout_seconds >= t.record_budget_seconds
    p = RetryPolicy()
    assert p.lease_seconds == t.lease_seconds and p.provider_timeout_seconds == t.attempt_deadline_seconds
    bad = replace(t, lease_seconds=t.attempt_deadline_seconds + 1)
    assert bad.problems()


# 6 -------------------------------------------------------------------------------------------------
def test_a_stale_workers_acceptance_is_recorded_and_a_redrive_does_not_resend() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    (m,) = w.receive()
    w.sender.script(key, ["ok", "400"])  # the stale worker's send is accepted (its answer is slow)

    def stall(*_: Any) -> None:
        # While worker A's send is in flight its lease expires; worker B takes over and dead-letters.
        w.sender.on_send = None
        w.clock.advance(w.policy.lease_seconds + 1)
        w.sqs.send("webhook", m.body)
        (m2,) = [x for x in w.receive() if x.message_id != m.message_id]
        w.settle("webhook", m2, w.process(m2, "w2"))

    w.sender.on_send = stall
    w.process(m, "w1")
    d = w.delivery(r.id)
    accepted = [a for a in d.history if a.outcome == "accepted"]
    assert accepted, "worker A's 2xx must be in the history"
    assert d.state is DeliveryState.DELIVERED
    assert w.sender.accepted[key] == 1


# 7 -------------------------------------------------------------------------------------------------
def _lose_answer_once(w: World, state: DeliveryState) -> list[bool]:
    """The next save of a delivery into ``state`` lands, but its answer is lost and botocore's retry
    fails its own condition: the caller sees a conflict."""
    real = w.store.save_delivery
    lost: list[bool] = []

    def save(reminder_id: str, delivery: Any, expected_rev: int, **kw: Any) -> bool:
        ok = real(reminder_id, delivery, expected_rev, **kw)
        if ok and delivery.state is state and not lost:
            lost.append(True)
            delivery.rev = expected_rev
            return False
        return ok

    w.store.save_delivery = save  # type: ignore[method-assign]
    return lost


def test_a_dead_letter_whose_write_answer_was_lost_still_reaches_the_dlq() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["400"])
    lost = _lose_answer_once(w, DeliveryState.DEAD_LETTER)
    (res,) = w.poll()
    assert lost and res.outcome == "dead_lettered"
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and not d.dlq_pending
    assert len(w.sqs.queues["webhook-dlq"].messages) == 1


def test_a_retry_whose_write_answer_was_lost_keeps_its_message() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"])
    lost = _lose_answer_once(w, DeliveryState.RETRYABLE)
    (res,) = w.poll()
    assert lost and not res.ack and res.outcome == "retry_scheduled"
    assert len(w.queued()) == 1  # the message comes back at the retry time: not deleted


def test_a_claim_whose_answer_was_lost_is_recognised_as_our_own() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    real = w.store.claim

    def claim(*args: Any, **kw: Any) -> Any:
        out = real(*args, **kw)
        return type(out)(False, out.reminder) if out.claimed else out  # applied; the retry lost

    w.store.claim = claim  # type: ignore[method-assign]
    (res,) = w.poll()
    assert res.outcome == "delivered" and w.sender.sends(w.delivery(r.id).key) == 1


# 8 -------------------------------------------------------------------------------------------------
def test_visibility_is_capped_at_12h_minus_the_time_since_the_invocation_started() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["429_retry_after_12h"])
    (m,) = w.receive()
    ctx = MessageContext(
        m.message_id,
        m.receipt_handle,
        m.receive_count,
        dict(m.attributes),
        seconds_since_invoked=lambda: 600.0,
    )
    res = w.worker().process(DeliveryMessage.parse(json.loads(m.body)), ctx)
    assert not res.ack
    assert res.visibility_seconds <= SQS_MAX_VISIBILITY_SECONDS - 600 - 60
