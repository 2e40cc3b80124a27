"""Issue 10 (cases 1-3) — ways a reminder was lost, stranded or crashed the consumer, now tests.

1. a DNS hiccup at send time dead-lettered the reminder (``invalid_destination``);
2. a delivery's history grew without bound in one item (~900 lines an hour under ``429
   Retry-After: 1``) until DynamoDB refused every write: nothing, not even ``expired``, was recorded;
3. a receiver's ``Retry-After: ²`` crashed the consumer (``isdigit()`` is true, ``int()`` raises).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import boto3
import pytest
from reminders.adapters.clock import SystemClock
from reminders.adapters.codec import delivery_to_map, reminder_from_item
from reminders.adapters.destinations import DestinationPolicy
from reminders.adapters.dynamodb import DynamoReminderStore
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders.adapters.webhook import WebhookSender
from reminders.domain.health import HealthPolicy
from reminders.domain.models import ChannelType
from reminders.domain.retry import OutcomeClass, RetryPolicy
from reminders.domain.states import DeliveryState
from reminders.services.intents import ChannelSpec
from reminders.services.render import render
from reminders_ops.bench.sim.model import item_size, write_units
from reminders_ops.local.receiver import Behaviour, WebhookReceiver

from tests.unit.fakes import World

DATA = Path(__file__).parent / "data"
#: DynamoDB's "400 KB" item limit, read conservatively as 400,000 bytes (moto's reading; AWS's
#: documentation says 400 KB, which some read as 409,600).
DYNAMODB_ITEM_LIMIT_BYTES = 400_000


# 1 -------------------------------------------------------------------------------------------------
def _eai_again(host: str, port: int) -> list[str]:
    raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")


def test_a_dns_hiccup_at_send_time_retries_it_does_not_dead_letter() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0, channels=(ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/x"),))
    d = r.deliveries["webhook-0"]
    sender = WebhookSender(
        policy=DestinationPolicy(resolver=_eai_again), secret=lambda: DEV_WEBHOOK_SECRET, clock=w.clock
    )
    result = sender.send(d, r, render(r, d))
    assert result.outcome is OutcomeClass.CONNECTION and result.detail == "dns_unresolved"


def test_an_ssrf_refusal_at_send_time_is_still_permanent() -> None:
    w = World(shards=1)
    r = w.create("k", due_in=0, channels=(ChannelSpec(ChannelType.WEBHOOK, "https://hooks.example.com/x"),))
    d = r.deliveries["webhook-0"]
    sender = WebhookSender(
        policy=DestinationPolicy(resolver=lambda h, p: ["169.254.169.254"]),
        secret=lambda: DEV_WEBHOOK_SECRET,
        clock=w.clock,
    )
    assert sender.send(d, r, render(r, d)).outcome is OutcomeClass.INVALID_DESTINATION


# 2 -------------------------------------------------------------------------------------------------
def test_two_hours_of_429_retry_after_1_keep_the_item_small_and_end_expired() -> None:
    policy = RetryPolicy(retry_after_jitter_seconds=0.0, max_age_seconds=2 * 3600.0)
    w = World(shards=1, policy=policy)
    r = w.create("k", due_in=0)
    key = w.delivery(r.id).key
    w.sender.script(key, ["429_retry_after_1"] * 10_000)
    largest = 0
    for _ in range(10_000):
        if w.delivery(r.id).state.terminal:
            break
        w.poll()
        largest = max(largest, item_size(w.store.items[r.id]))
        w.clock.advance(1.0)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DEAD_LETTER and d.dead_letter_reason == "expired"
    assert w.sender.sends(key) > 7000  # ~one 429 a second for two hours
    assert largest < 2048, f"the item grew to {largest} B"
    assert d.throttles == w.sender.sends(key)
    folded = sum(max(1, a.repeat) for a in d.history if a.outcome == "throttled")
    assert folded + d.dropped.get("throttled", 0) == d.throttles  # every 429 is still counted


def test_a_long_history_keeps_its_first_and_last_lines_and_counts_the_rest() -> None:
    from reminders.domain.models import HISTORY_HEAD, HISTORY_TAIL

    w = World(
        shards=1,
        policy=RetryPolicy(base_seconds=1, max_attempts=40, cap_seconds=2),
        health_policy=HealthPolicy(probe_base_seconds=1, probe_cap_seconds=2),  # held: probes every 2 s
    )
    r = w.create("k", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"] * 30 + ["ok"])
    for _ in range(200):
        if w.delivery(r.id).state.terminal:
            break
        w.poll()
        w.clock.advance(5)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED
    assert len(d.history) == HISTORY_HEAD + HISTORY_TAIL
    assert d.history[0].outcome == "transient" and d.history[-1].outcome == "accepted"
    # 30 failures and the acceptance; the endpoint's hold (issue 16) may add a parked line ("defer")
    defers = sum(1 for a in d.history if a.event == "defer") + d.dropped.get("defer", 0)
    assert set(d.dropped) <= {"transient", "defer"}
    assert sum(d.dropped.values()) == 31 + defers - HISTORY_HEAD - HISTORY_TAIL


def test_a_delivered_item_with_six_attempts_fits_one_write_unit() -> None:
    w = World(shards=1, policy=RetryPolicy(base_seconds=1))
    r = w.create("renewal-reminder:acct-123456:2026-12-20:webhook", due_in=0)
    w.sender.script(w.delivery(r.id).key, ["500"] * 5 + ["ok"])
    for _ in range(20):
        w.poll()
        w.clock.advance(7200)
    d = w.delivery(r.id)
    assert d.state is DeliveryState.DELIVERED and len([a for a in d.history if a.event == "attempt"]) == 6
    size = item_size(w.store.items[r.id])
    assert size < 1024 and write_units(size) == 1, size


def test_the_item_size_rule_follows_dynamodbs_arithmetic() -> None:
    """AWS's documented rules: names and values count; strings by UTF-8 length; numbers by
    significant digits (1 byte per 2, plus 1); maps and lists 3 bytes plus 1 per element."""
    from decimal import Decimal

    assert item_size({"ab": "héllo"}) == 2 + 6
    assert item_size({"n": Decimal("12345")}) == 1 + (3 + 1)
    assert item_size({"m": {"k": "v"}}) == 1 + 3 + (1 + 1 + 1)
    assert item_size({"l": ["a", "bc"]}) == 1 + 3 + (1 + 1) + (2 + 1)
    assert item_size({"b": True}) == 1 + 1


def test_the_item_size_rule_agrees_with_the_emulators_limit(aws: dict[str, str]) -> None:
    """An item of our design limit (400,000 bytes by our arithmetic) is stored; one past AWS's own
    limit (400 KB = 409,600 bytes, names included) is refused — on moto (which refuses above 405,000,
    its own figure) and on dynalite (AWS's figure) alike: no backend's own limit is assumed."""
    table = boto3.resource("dynamodb").Table("reminders")
    base = {"pk": "R#size", "sk": "R", "blob": ""}
    overhead = item_size(base)
    aws_limit = 409_600
    at_design_limit = dict(base, blob="x" * (DYNAMODB_ITEM_LIMIT_BYTES - overhead))
    over = dict(base, blob="x" * (aws_limit - overhead + 16))
    assert item_size(at_design_limit) == DYNAMODB_ITEM_LIMIT_BYTES < aws_limit < item_size(over)
    table.put_item(Item=at_design_limit)
    with pytest.raises(Exception, match=r"(?i)size"):
        table.put_item(Item=over)


def test_an_item_written_before_the_compact_history_still_reads_and_updates(aws: dict[str, str]) -> None:
    item = json.loads((DATA / "item_written_2026-11-30.json").read_text())
    table = boto3.resource("dynamodb").Table("reminders")
    table.put_item(Item=item)
    store = DynamoReminderStore(table)
    r = store.get(item["rid"])
    assert r is not None
    d = r.deliveries["webhook-0"]
    assert d.state is DeliveryState.RETRYABLE and d.history[0].outcome == "transient"
    assert d.history[0].policy_version == "2026-11-29.1"
    updated = d.__class__(**{**{f: getattr(d, f) for f in d.__slots__}, "state": DeliveryState.DELIVERED})
    assert store.save_delivery(r.id, updated, d.rev)
    again = store.get(r.id)
    assert again is not None
    assert again.deliveries["webhook-0"].state is DeliveryState.DELIVERED
    assert again.deliveries["webhook-0"].history == d.history  # the old lines, now in the new form
    assert isinstance(delivery_to_map(again.deliveries["webhook-0"])["h"][0], str)
    assert reminder_from_item(item).deliveries["webhook-0"].history == d.history


# 3 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "retry_after",
    [
        "²",
        "¹²³",
        "9" * 400,
        "1e9",
        "0x10",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "soon",
        "-5",
    ],
)
def test_any_retry_after_a_receiver_sends_maps_to_an_outcome(retry_after: str) -> None:
    w = World(shards=1)
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        receiver.script("*", [Behaviour(429, retry_after=retry_after)])
        r = w.create("k", due_in=0, channels=(ChannelSpec(ChannelType.WEBHOOK, receiver.url),))
        d = r.deliveries["webhook-0"]
        sender = WebhookSender(
            policy=DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"}),
            secret=lambda: DEV_WEBHOOK_SECRET,
            clock=SystemClock(),  # the receiver checks the signature's timestamp against its clock
        )
        result = sender.send(d, r, render(r, d))
    assert result.outcome is OutcomeClass.THROTTLED
    assert result.retry_after_seconds is None or 0 <= result.retry_after_seconds <= 7 * 24 * 3600


def test_a_consumer_given_an_odd_retry_after_records_a_throttle_and_comes_back(
    aws: dict[str, str], receiver: Any
) -> None:
    from reminders import runtime
    from reminders.services.intents import NewReminder

    receiver.script("*", [Behaviour(429, retry_after="²")])
    from datetime import UTC, datetime

    svc = runtime.reminders_service()
    r, _ = svc.create(
        NewReminder(
            account_id="acct-1",
            key="odd-retry-after",
            kind="renewal",
            due_at=datetime.now(UTC),
            channels=(ChannelSpec(ChannelType.WEBHOOK, receiver.url),),
            template_id="renewal",
            template_version=1,
            data={},
        )
    )
    from reminders.services.deliver import DeliveryMessage, MessageContext

    res = runtime.deliverer().process(DeliveryMessage(r.id, "webhook-0", r.version), MessageContext("m", "h"))
    assert not res.ack and res.outcome == "retry_scheduled"
    d = runtime.store().get(r.id)
    assert d is not None and d.deliveries["webhook-0"].history[-1].outcome == "throttled"
