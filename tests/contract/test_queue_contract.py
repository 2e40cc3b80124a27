"""The queue contract: every SQS behaviour the product relies on, checked against moto's SQS and
the in-memory SQS alike. moto runs in real time, so delays and visibility stay at 1-2 s and the
cases are few; the in-memory backend advances its virtual clock instead.

Not covered on purpose (moto and real SQS differ, the product does not rely on it): deleting or
changing visibility with an *older* receipt handle of a re-received message (real SQS ignores a
stale delete; moto honours it), and the receive count a message shows once in its DLQ."""

from __future__ import annotations

import json

import pytest
from reminders.domain.ports import OutMessage

from tests.contract.backends import QueueBackend

TICK = 0.05  # moto compares visibility in whole milliseconds (strictly after): step past it


def _only_the_sentinel_comes_back(queues: QueueBackend, q: str) -> None:
    """A poll, not a fixed sleep past the queue's 1 s visibility (an emulator's timer may tick once a
    second): a sentinel received now comes back once its visibility ends; a message that was not
    deleted would have come back with it or before it."""
    queues.send(q, "sentinel")
    assert [m.body for m in queues.receive(q)] == ["sentinel"]
    assert [m.body for m in queues.receive_due(q, 1)] == ["sentinel"]


def test_delay_seconds_hides_a_message_until_due(queues: QueueBackend) -> None:
    q = queues.create("q")
    queues.send(q, "later", delay=1)
    queues.send(q, "now")
    first = queues.receive(q)
    assert [m.body for m in first] == ["now"]
    got = queues.receive_due(q, 1)
    assert [m.body for m in got] == ["later"] and got[0].receive_count == 1


def test_visibility_timeout_returns_the_message_with_a_new_receipt_and_count(queues: QueueBackend) -> None:
    q = queues.create("q", visibility_timeout=1)
    queues.send(q, "m")
    (r1,) = queues.receive(q)
    assert r1.receive_count == 1
    assert queues.receive(q) == []  # in flight: invisible
    (r2,) = queues.receive_due(q, 1)
    assert r2.message_id == r1.message_id
    assert r2.receive_count == 2
    assert r2.receipt != r1.receipt
    queues.delete(q, r2.receipt)
    _only_the_sentinel_comes_back(queues, q)  # deleted with the latest receipt: gone for good


def test_change_visibility_zero_and_longer(queues: QueueBackend) -> None:
    q = queues.create("q", visibility_timeout=60)
    queues.send(q, "m")
    (r1,) = queues.receive(q)
    queues.change_visibility(q, r1.receipt, 0)  # give it back at once
    queues.advance(TICK)
    (r2,) = queues.receive(q)
    assert r2.receive_count == 2 and r2.receipt != r1.receipt
    queues.change_visibility(q, r2.receipt, 1)  # shorter than the queue default
    assert queues.receive(q) == []
    (r3,) = queues.receive_due(q, 1)
    assert r3.receive_count == 3


def test_change_visibility_validates_its_range(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    q = queues.create("q")
    queues.send(q, "m")
    (r,) = queues.receive(q)
    with pytest.raises(Exception):  # noqa: B017 - ClientError on moto, ValueError in memory
        queues.change_visibility(q, r.receipt, 43_201)


def test_delay_above_900_seconds_is_refused(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    q = queues.create("q")
    with pytest.raises(Exception):  # noqa: B017
        queues.send(q, "m", delay=901)


def test_max_receive_count_moves_to_the_dlq_on_the_receive_that_exceeds_it(queues: QueueBackend) -> None:
    dlq = queues.create("q-dlq")
    q = queues.create("q", visibility_timeout=60, dlq=dlq, max_receive_count=2)
    queues.send(q, '{"n":1}', attributes={"reason": "poison_message", "attempts": "3"})
    for expected in (1, 2):
        (r,) = queues.receive(q)
        assert r.receive_count == expected
        queues.change_visibility(q, r.receipt, 0)
        queues.advance(TICK)
    assert queues.receive(q) == []  # the third receive moves it instead of returning it
    (moved,) = queues.receive(dlq)
    assert moved.body == '{"n":1}'
    assert moved.attributes == {"reason": "poison_message", "attempts": "3"}
    queues.advance(TICK)
    assert queues.receive(q) == []


def test_message_attributes_and_body_are_preserved(queues: QueueBackend) -> None:
    q = queues.create("q")
    attrs = {"reason": "permanent_failure", "dl_cycle": "0", "delivery_key": "dlv_" + "a" * 32}
    body = json.dumps({"reminder_id": "rem_" + "b" * 32, "channel_id": "webhook-0", "version": 3})
    queues.send(q, body, attributes=attrs)
    (m,) = queues.receive(q)
    assert m.body == body and m.attributes == attrs


def test_batch_send_with_per_entry_delays_and_receive_limit(queues: QueueBackend) -> None:
    q = queues.create("q")
    queues.send_batch(q, [(f"m{i}", 1 if i == 0 else 0) for i in range(10)])
    with pytest.raises(Exception):  # noqa: B017 - at most 10 entries per batch
        queues.send_batch(q, [(f"x{i}", 0) for i in range(11)])
    seen: set[str] = set()
    got = queues.receive(q, max_messages=10)
    assert 1 <= len(got) <= 9
    while got:
        seen.update(m.body for m in got)
        queues.delete_batch(q, [m.receipt for m in got])
        got = queues.receive(q, max_messages=10)
    assert seen == {f"m{i}" for i in range(1, 10)}  # the delayed one is not visible yet
    assert [m.body for m in queues.receive_due(q, 1)] == ["m0"]


def test_queues_port_sends_delays_dead_letters_and_dispatches(queues: QueueBackend) -> None:
    """The product's Queues port over each backend (SqsQueues on moto, MemoryQueues)."""
    for name in ("webhook-dlq", "dispatch"):
        queues.create(name)
    queues.create("webhook", dlq="webhook-dlq", max_receive_count=20)
    port = queues.port({"webhook": "webhook"}, {"webhook": "webhook-dlq"}, "dispatch")
    port.send("webhook", [OutMessage(f"rem_{i}", "webhook-0", 1, 1 if i == 0 else 0) for i in range(12)])
    port.dead_letter(
        "webhook", OutMessage("rem_x", "webhook-0", 2, attributes={"reason": "permanent_failure", "n": "1"})
    )
    port.send_dispatch(list(range(12)))
    bodies: list[dict[str, object]] = []
    for _ in range(3):
        got = queues.receive("webhook")
        bodies += [json.loads(m.body) for m in got]
        queues.delete_batch("webhook", [m.receipt for m in got]) if got else None
    assert len(bodies) == 11 and {b["channel_id"] for b in bodies} == {"webhook-0"}
    (dl,) = queues.receive("webhook-dlq")
    assert json.loads(dl.body) == {"reminder_id": "rem_x", "channel_id": "webhook-0", "version": 2}
    assert dl.attributes == {"reason": "permanent_failure", "n": "1"}
    shards: set[int] = set()
    for _ in range(3):
        shards |= {json.loads(m.body)["shard"] for m in queues.receive("dispatch")}
    assert shards == set(range(12))
    assert [json.loads(m.body)["reminder_id"] for m in queues.receive_due("webhook", 1)] == ["rem_0"]


def test_visible_messages_come_in_send_order_best_effort(queues: QueueBackend) -> None:
    """SQS standard queues keep best-effort send order among visible messages: a message whose
    visibility ended (a retry) is not sent to the back behind everything that arrived after it."""
    q = queues.create("q", visibility_timeout=60)
    for i in range(5):
        queues.send(q, f"m{i}")
    (first,) = queues.receive(q, max_messages=1)
    assert first.body == "m0"
    queues.change_visibility(q, first.receipt, 0)
    queues.advance(TICK)
    got = [m.body for m in queues.receive(q, max_messages=10)]
    assert got == ["m0", "m1", "m2", "m3", "m4"]


# --- AWS's limits (issue 27 item 3): what SQS refuses, every backend refuses -------------------------


def _moto_differs(queues: QueueBackend, why: str) -> None:
    if queues.name == "sqs-moto":
        pytest.skip(f"moto differs from SQS here: {why}")


#: LocalStack 4.14.0's SQS checks no range of these (seen in ``make verify``): it accepts what SQS refuses.
_LOCALSTACK_NO_RANGES = (
    "LocalStack 4.14.0 accepts it (no DelaySeconds, visibility, 12 h or attribute-count check)"
)


def _localstack_differs(queues: QueueBackend, why: str = _LOCALSTACK_NO_RANGES) -> None:
    if queues.name == "sqs-localstack":
        pytest.skip(f"LocalStack differs from SQS here: {why}")


def test_change_visibility_is_refused_when_it_ends_beyond_12_hours_from_the_receive(
    queues: QueueBackend,
) -> None:
    _localstack_differs(queues)
    q = queues.create("q")
    queues.send(q, "m")
    (r,) = queues.receive(q)
    queues.change_visibility(q, r.receipt, 43_199)  # ends within 12 h of the receive: allowed
    queues.advance(TICK)
    with pytest.raises(Exception):  # noqa: B017 - InvalidParameterValue on SQS
        queues.change_visibility(q, r.receipt, 43_200)  # would end past 12 h from the receive


def test_twelve_hour_cap_counts_from_the_receive_not_the_send(queues: QueueBackend) -> None:
    _moto_differs(queues, "moto counts the 12 h from the send (refusing what SQS allows), in real time")
    if queues.name == "sqs-localstack":
        pytest.skip("two hours of real time (LocalStack has no virtual clock)")
    q = queues.create("q")
    queues.send(q, "m")
    queues.advance(2 * 3600)  # waits two hours before anyone receives it
    (r,) = queues.receive(q)
    queues.change_visibility(q, r.receipt, 43_200)  # SQS: 12 h from this receive, allowed
    queues.advance(3600)
    with pytest.raises(Exception):  # noqa: B017
        queues.change_visibility(q, r.receipt, 39_601)


def test_receive_visibility_above_12_hours_is_refused(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    q = queues.create("q")
    queues.send(q, "m")
    with pytest.raises(Exception):  # noqa: B017
        queues.receive(q, visibility_timeout=43_201)


def test_more_than_ten_message_attributes_are_refused(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    _moto_differs(queues, "moto is laxer: it accepts any number of message attributes (SQS: at most 10)")
    q = queues.create("q")
    queues.send(q, "ten", attributes={f"a{i}": "x" for i in range(10)})
    with pytest.raises(Exception):  # noqa: B017
        queues.send(q, "eleven", attributes={f"a{i}": "x" for i in range(11)})
    assert [m.body for m in queues.receive(q)] == ["ten"]


def test_send_batch_fails_the_bad_entry_alone_when_one_delay_is_out_of_range(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    q = queues.create("q")
    failed = queues.send_batch(q, [(f"m{i}", 901 if i == 4 else 0) for i in range(10)])
    assert failed == ["4"]
    got: set[str] = set()
    for _ in range(3):
        got |= {m.body for m in queues.receive(q)}
    assert got == {f"m{i}" for i in range(10) if i != 4}


def test_delete_batch_fails_the_bad_receipt_alone_when_one_is_malformed(queues: QueueBackend) -> None:
    q = queues.create("q", visibility_timeout=1)
    queues.send_batch(q, [("a", 0), ("b", 0)])
    got = queues.receive(q)
    assert len(got) == 2
    failed = queues.delete_batch(q, [got[0].receipt, "not-a-receipt-handle", got[1].receipt])
    assert failed == ["1"]
    _only_the_sentinel_comes_back(queues, q)  # both good entries were deleted


def test_change_visibility_batch_fails_the_bad_entry_alone(queues: QueueBackend) -> None:
    _localstack_differs(queues)
    q = queues.create("q", visibility_timeout=60)
    queues.send_batch(q, [("a", 0), ("b", 0)])
    a, b = queues.receive(q)
    failed = queues.change_visibility_batch(
        q, [(a.receipt, 0), (b.receipt, 43_201), ("not-a-receipt-handle", 0)]
    )
    assert failed == ["1", "2"]
    queues.advance(TICK)
    assert [m.body for m in queues.receive(q)] == [a.body]  # the good entry took effect, b stays hidden


def test_port_send_retries_the_failed_entry_once_then_raises_when_one_of_ten_is_refused(
    queues: QueueBackend,
) -> None:
    """The retry-then-raise path of SqsQueues (and its twin): the nine good messages are sent
    exactly once, the bad one is retried once and then reported."""
    _localstack_differs(queues)
    from reminders.adapters.sqs import SqsSendError

    for name in ("webhook-dlq", "dispatch", "webhook"):
        queues.create(name)
    port = queues.port({"webhook": "webhook"}, {"webhook": "webhook-dlq"}, "dispatch")
    calls_before = queues.send_batch_calls()
    with pytest.raises(SqsSendError, match="1 messages"):
        port.send(
            "webhook", [OutMessage(f"rem_{i}", "webhook-0", 1, 901 if i == 7 else 0) for i in range(10)]
        )
    assert queues.send_batch_calls() - calls_before == 2  # the batch, then the failed entry alone
    got: list[str] = []
    for _ in range(3):
        got += [json.loads(m.body)["reminder_id"] for m in queues.receive("webhook")]
    assert sorted(got) == sorted(f"rem_{i}" for i in range(10) if i != 7)
