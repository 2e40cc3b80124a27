"""Review rev28e (hostile) of 7144747, which read the account's retryable, held and recent dead-letter
entries from the attention index for the preview. Its findings (a redriven channel and a
configuration-held one under an old dead letter, terminal dead letters filling the row page) were
strict xfails; that read was replaced (the preview now reads the due index as far as a park's lease,
and a delivery's write moves a watch entry back to its next instant: domain/watch.py), and the
same situations are kept here as what must hold, each with the watch entry far ahead *before* the
write, as a park leaves it. (Its deferral-before-any-attempt case is in test_support_preview.py.)"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from reminders.domain.models import ChannelType, Reminder
from reminders.domain.retry import RetryPolicy
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import WEBHOOK_URL, World
from tests.unit.test_support_preview import _park_entry_far_ahead, _run, create, preview

OTHER_URL = "https://other.example/hooks"
HOUR = 3600.0


def _two_channels(w: World, key: str) -> Reminder:
    return create(
        w,
        key,
        channels=(ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.WEBHOOK, OTHER_URL)),
    )


def _preview(w: World, max_age: float, minutes: int = 30, **kw: Any) -> dict[str, Any]:
    return preview(w, minutes, max_age_seconds=max_age, **kw)


def _attempted(w: World, key: str, minutes: int = 30) -> list[str]:
    """What the consumer then does: the minutes in which ``key`` is sent within the horizon."""
    start = w.clock.now()
    _run(w, start + timedelta(minutes=minutes))
    return [c.at.isoformat()[:16] for c in w.sender.calls if c.key == key and c.at >= start]


# -- 1. a channel still in flight under the reminder's old dead letter --------
def test_preview_promises_a_redriven_channels_retry_when_the_other_channel_is_an_old_dead_letter() -> None:
    w = World(shards=1, policy=RetryPolicy(max_age_seconds=HOUR))
    r = _two_channels(w, "redriven")
    k0, k1 = r.deliveries["webhook-0"].key, r.deliveries["webhook-1"].key
    w.sender.script(k0, ["400"])
    w.sender.script(k1, ["400"])
    while w.poll():
        pass
    assert {d.state.value for d in w.get(r.id).deliveries.values()} == {"dead_letter"}
    w.clock.advance(2 * HOUR)  # the operator redrives yesterday's dead letter of webhook-1 only
    w.run_shards()
    for m in w.sqs.receive("webhook-dlq", 10):
        if json.loads(m.body)["channel_id"] == "webhook-1":
            w.sqs.send("webhook", m.body, attributes=dict(m.attributes))
        w.sqs.delete("webhook-dlq", m.receipt_handle)
    _park_entry_far_ahead(w, r)
    w.sender.script(k1, ["429_retry_after"])  # the redriven cycle's first attempt: retry in ~30 s
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    assert w.delivery(r.id, "webhook-1").cycle == 1
    w.clock.advance(5)
    out = _preview(w, HOUR)
    # The cause: read with a bound that reaches the reminder's due time, the same state is promised.
    wide = _preview(w, 3 * HOUR)
    assert {(a["reminder_id"], a["channel_id"]) for a in wide["attempts"]} == {(r.id, "webhook-1")}
    assert len(_attempted(w, k1)) == 1  # the consumer does attempt it, in the horizon
    assert {(a["reminder_id"], a["channel_id"]) for a in out["attempts"]} == {(r.id, "webhook-1")}


def test_preview_promises_a_configuration_held_channel_when_the_other_channel_is_an_old_dead_letter() -> None:
    w = World(shards=1, policy=RetryPolicy(max_age_seconds=HOUR))
    r = _two_channels(w, "config-held")
    k0, k1 = r.deliveries["webhook-0"].key, r.deliveries["webhook-1"].key
    w.sender.script(k0, ["400"])
    w.sender.script(k1, ["config"] * 3)
    while w.poll():
        pass
    w.clock.advance(2 * HOUR)  # past the maximum age: the held channel is still looked at every 5 min
    w.run_shards()
    _park_entry_far_ahead(w, r)
    while w.poll():
        pass
    d1 = w.delivery(r.id, "webhook-1")
    assert d1.state.value == "retryable" and (d1.last_error or {}).get("class") == "configuration"
    w.clock.advance(5)
    out = _preview(w, HOUR)
    assert len(_attempted(w, k1, minutes=10)) >= 1  # the consumer attempts it (no maximum age)
    assert (r.id, "webhook-1") in {(a["reminder_id"], a["channel_id"]) for a in out["attempts"]}


# -- 2. cost: terminal dead letters do not fill the row page ---------------------------------------
def test_preview_is_whole_and_lists_nothing_when_the_account_has_more_dead_letters_than_its_page() -> None:
    w = World(shards=1)
    for i in range(3):
        r = create(w, f"dead-{i}")
        w.sender.script(r.deliveries["webhook-0"].key, ["400"])
    while w.poll():
        pass
    w.clock.advance(20 * 60)
    w.run_shards()
    out = _preview(w, RetryPolicy().max_age_seconds, max_rows=2)
    assert out["attempts"] == [] and out["may_attempt"] == [] and out["not_attempted"] == []
    assert out["truncated"] is False  # nothing was missed: every channel is terminal
