"""Issue 28 item 1: an account's preview answers "what will be attempted in the next N minutes, and
when" from the consumer's own rules (domain/outlook.py), not from the due index: on the in-memory
world with the real services and a virtual clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reminders.domain.endpoints import implicit_endpoint_id
from reminders.domain.health import EndpointHealth, EndpointState, HealthWhy
from reminders.domain.localtime import SendWindow
from reminders.domain.models import ChannelType, Reminder
from reminders.domain.retry import RetryPolicy
from reminders.domain.schedule import iso, sk_due, watch_key
from reminders.services import support
from reminders.services.intents import ChannelSpec

from tests.unit.fakes import WEBHOOK_URL, World


def create(w: World, key: str, due_in: float = 0, **fields: Any) -> Reminder:
    reminder, _ = w.reminders.create(replace(w.new(key, due_in=due_in), **fields))
    return reminder


def preview(w: World, minutes: int = 30, **kw: Any) -> dict[str, Any]:
    return support.preview(w.store, w.clock.now(), minutes, w.shards, account_id="acct-1", **kw)


def promised(out: dict[str, Any]) -> set[tuple[str, str | None]]:
    """(reminder id, the minute it is attempted in) of each promised attempt; today's preview, which
    names ids without a minute, as (id, None)."""
    if "attempts" in out:
        return {(a["reminder_id"], a["at"][:16]) for a in out["attempts"]}
    return {(rid, None) for rid in out["first_ids"]}


def ids(out: dict[str, Any]) -> set[str]:
    return {rid for rid, _ in promised(out)}


def test_preview_does_not_promise_a_cancelled_reminder_when_its_index_entry_remains() -> None:
    w = World(shards=1)
    r = create(w, "cancelled", due_in=300)
    w.reminders.cancel(r.id)
    assert r.id not in ids(preview(w))


def test_preview_moves_a_reminder_to_its_window_when_quiet_hours_hold_it_past_the_horizon() -> None:
    w = World(shards=1)  # T0 = 12:00 UTC; the window opens at 15:00
    r = create(w, "quiet-3h", due_in=300, send_window=SendWindow.parse("15:00", "23:00"))
    assert r.id not in ids(preview(w))


def test_preview_lists_a_certain_dead_letter_as_not_attempted_when_its_window_outlasts_deliver_by() -> None:
    w = World(shards=1)
    due = w.clock.now() + timedelta(seconds=300)
    r = create(
        w,
        "doomed",
        due_in=300,
        send_window=SendWindow.parse("15:00", "23:00"),
        deliver_by=due + timedelta(seconds=10),
    )
    out = preview(w)
    assert r.id not in ids(out)
    assert [(x["reminder_id"], x["reason"]) for x in out["not_attempted"]] == [(r.id, "deadline_passed")]


def test_preview_promises_a_quiet_hours_deferral_that_ends_inside_the_horizon() -> None:
    w = World(shards=1)
    r = create(w, "opens-12:20", send_window=SendWindow.parse("12:20", "23:00"))
    assert [x.outcome for x in w.poll()] == ["deferred_quiet_hours"]
    w.clock.advance(5)
    out = preview(w)
    assert promised(out) == {(r.id, "2026-11-29T12:20")}
    (a,) = out["attempts"]
    assert (a["reason"], a["shifted_from"]) == ("quiet_hours", "2026-11-29T12:00:00.000000Z")


def test_preview_promises_a_429_retry_that_comes_due_inside_the_horizon() -> None:
    w = World(shards=1)
    r = create(w, "throttled")
    w.sender.script(w.delivery(r.id).key, ["429_retry_after"])  # Retry-After: 30 s
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    w.clock.advance(5)
    out = preview(w)
    assert promised(out) == {(r.id, "2026-11-29T12:00")}
    assert out["attempts"][0]["reason"] == "retry"


def test_every_accounts_preview_labels_its_counts_as_due_index_entries_and_reads_no_row() -> None:
    w = World(shards=1)
    r = create(w, "cancelled", due_in=300)
    w.reminders.cancel(r.id)
    reads: list[str] = []
    w.store.batch_get = lambda rids, **kw: reads.extend(rids) or []  # type: ignore[method-assign]
    w.store.get = lambda rid: reads.append(rid)  # type: ignore[method-assign]
    out = support.preview(w.store, w.clock.now(), 30, w.shards)
    assert out["counts_of"] == "due_index_entries" and sum(out["totals"].values()) == 1  # counted, unread
    assert reads == []


# -- the promise against what happens: virtual time, the real services ---------------------------------
HORIZON = 20  # minutes
KINDS = ("plain", "cancelled", "quiet", "doomed", "throttled_before", "failing_before", "late_window", "held")
HELD_URL = "https://held.example/hooks"  # its endpoint is held at T0 (an operator's hold)


def _hold(w: World) -> None:
    endpoint = implicit_endpoint_id("acct-1", HELD_URL)
    now = w.clock.now().timestamp()
    assert w.health.transition(
        EndpointHealth(endpoint, "acct-1"), EndpointState.HELD, HealthWhy.OPERATOR, now
    )


def _make(w: World, i: int, kind: str, minute: int) -> None:
    due_in = minute * 60 + 7
    key = f"{kind}-{i}"
    if kind == "plain":
        create(w, key, due_in)
    elif kind == "held":
        create(w, key, due_in, channels=(ChannelSpec(ChannelType.WEBHOOK, HELD_URL),))
    elif kind == "cancelled":
        w.reminders.cancel(create(w, key, due_in).id)
    elif kind == "quiet":  # the window opens `minute` minutes after T0 (12:00); due before it
        create(w, key, 7, send_window=SendWindow.parse(f"12:{minute:02d}", "23:00"))
    elif kind == "late_window":  # quiet hours hold it past any horizon
        create(w, key, due_in, send_window=SendWindow.parse("15:00", "23:00"))
    elif kind == "doomed":  # the window closes before deliver_by: a certain dead letter
        due = w.clock.now() + timedelta(seconds=due_in)
        create(
            w,
            key,
            due_in,
            send_window=SendWindow.parse("15:00", "23:00"),
            deliver_by=due + timedelta(seconds=10),
        )
    else:  # due now; its first attempt (before the preview) asks for a retry
        r = create(w, key, 0)
        w.sender.script(
            r.deliveries["webhook-0"].key, ["429_retry_after" if kind == "throttled_before" else "500"]
        )


def _run(w: World, until: datetime) -> None:
    """The stack on virtual time: the dispatcher each minute, every visible message processed, the
    clock moved to the next message's visibility or the next minute, whichever comes first."""
    last_dispatch = None
    while w.clock.now() < until:
        minute = w.clock.now().replace(second=0, microsecond=0)
        if minute != last_dispatch:
            w.run_shards()
            last_dispatch = minute
        while w.poll():
            pass
        now = w.clock.now().timestamp()
        visible = [m.visible_at for m in w.sqs.queues["webhook"].messages.values() if m.visible_at > now]
        step = min([(minute + timedelta(minutes=1)).timestamp(), *visible, until.timestamp()]) - now
        w.clock.advance(max(step, 0.001))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(1, 35)), min_size=1, max_size=7))
def test_property_every_promised_attempt_happens_in_its_minute_and_nothing_unpromised_is_attempted(
    specs: list[tuple[str, int]],
) -> None:
    w = World(shards=1, policy=RetryPolicy(base_seconds=300))  # a 500's retry: minutes later
    _hold(w)
    for i, (kind, minute) in enumerate(specs):
        _make(w, i, kind, minute)
    while w.poll():  # the attempts due at T0 (their retries are what the preview must foresee)
        pass
    w.clock.advance(5)
    start = w.clock.now()
    out = support.preview(
        w.store, start, HORIZON, w.shards, account_id="acct-1", health=w.world.health_guard()
    )
    until = start + timedelta(minutes=HORIZON)
    before = len(w.sender.calls)
    _run(w, until)
    keys = {d.key: r.id for r in w.store.batch_get(list(w.store.items)) for d in r.deliveries.values()}
    first: dict[str, str] = {}
    for call in w.sender.calls[before:]:
        assert start <= call.at < until
        first.setdefault(keys[call.key], iso(call.at)[:16])
    certain = promised(out)
    maybe = {a["reminder_id"]: a["at"][:16] for a in out["may_attempt"]}  # a held endpoint's
    for rid, minute in first.items():  # nothing unpromised is attempted, nothing early
        assert (rid, minute) in certain or (rid in maybe and minute >= maybe[rid]), (out, first)
    for rid, minute in certain:  # every promised attempt happens in its minute
        assert first.get(rid) == minute, (out, first)
    for x in out["not_attempted"]:  # a certain dead letter was one, unsent
        r = w.get(x["reminder_id"])
        assert r.deliveries[x["channel_id"]].dead_letter_reason == x["reason"]


def test_an_accounts_preview_stops_at_its_page_limit_and_says_so_when_more_rows_are_due() -> None:
    w = World(shards=1)
    for i in range(3):
        create(w, f"many-{i}", 60 * (i + 1))
    full = support.preview(w.store, w.clock.now(), 30, w.shards, account_id="acct-1")
    assert (len(full["attempts"]), full["truncated"]) == (3, False)
    page = support.preview(w.store, w.clock.now(), 30, w.shards, account_id="acct-1", max_rows=2)
    assert (len(page["attempts"]), page["truncated"]) == (2, True)


# -- review (rev28): what a hostile tenant and a disabled endpoint do to the promise ------------------
def test_preview_does_not_promise_an_attempt_when_its_endpoint_is_disabled() -> None:
    w = World(shards=1)
    endpoint = implicit_endpoint_id("acct-1", HELD_URL)
    now = w.clock.now().timestamp()
    assert w.health.transition(
        EndpointHealth(endpoint, "acct-1"), EndpointState.DISABLED, HealthWhy.OPERATOR, now
    )
    r = create(w, "disabled", 60, channels=(ChannelSpec(ChannelType.WEBHOOK, HELD_URL),))
    out = support.preview(
        w.store, w.clock.now(), 30, w.shards, account_id="acct-1", health=w.world.health_guard()
    )
    w.clock.advance(90)
    _run(w, w.clock.now() + timedelta(minutes=1))
    assert w.get(r.id).deliveries["webhook-0"].dead_letter_reason == "endpoint_disabled"  # what happens
    assert r.id not in ids(out)
    assert [(x["reminder_id"], x["reason"]) for x in out["not_attempted"]] == [(r.id, "endpoint_disabled")]


def test_a_disabled_endpoints_dead_letter_is_a_gate_line_not_an_attempt_when_nothing_is_sent() -> None:
    """The preview lists it as not attempted (dead-lettered unsent); the history must agree: a
    ``gate`` line, as for a deadline or the maximum age, never an ``attempt`` (explorer seed 7)."""
    w = World(shards=1)
    endpoint = implicit_endpoint_id("acct-1", HELD_URL)
    assert w.health.transition(
        EndpointHealth(endpoint, "acct-1"),
        EndpointState.DISABLED,
        HealthWhy.OPERATOR,
        w.clock.now().timestamp(),
    )
    r = create(w, "disabled-line", 0, channels=(ChannelSpec(ChannelType.WEBHOOK, HELD_URL),))
    out = support.preview(
        w.store, w.clock.now(), 30, w.shards, account_id="acct-1", health=w.world.health_guard()
    )
    _run(w, w.clock.now() + timedelta(minutes=1))
    d = w.get(r.id).deliveries["webhook-0"]
    assert [(x["reminder_id"], x["reason"]) for x in out["not_attempted"]] == [(r.id, "endpoint_disabled")]
    assert (d.dead_letter_reason, len(w.sender.calls), d.attempts) == ("endpoint_disabled", 0, 0)
    assert [(a.event, a.detail) for a in d.history] == [("gate", "endpoint_disabled")]


def test_an_accounts_preview_is_unaffected_when_another_account_fills_the_due_index() -> None:
    w = World(shards=1)
    for i in range(3):  # the other tenant's reminders, due first
        w.reminders.create(w.new(f"other-{i}", due_in=60, account_id="acct-2"))
    mine = create(w, "mine", 120)
    out = support.preview(w.store, w.clock.now(), 30, w.shards, account_id="acct-1", max_rows=2)
    assert (ids(out), out["truncated"]) == ({mine.id}, False)


def test_preview_promises_a_queued_delivery_when_the_watchdog_runs_behind_its_lag() -> None:
    w = World(shards=1)
    w.run_shards()  # the shard's cursors exist; the dispatcher then does not run for 25 minutes
    r = create(w, "handed-to-sqs", due_in=30)  # within SQS's window: queued at once, a watch entry
    w.clock.advance(1500)
    assert r.id in ids(preview(w))
    assert [x.outcome for x in w.poll()] == ["delivered"]  # what the consumer then does


# -- a park's watch entry past the window while its delivery comes sooner (explorer seeds 16, 40) ------
OTHER_URL = "https://other.example/hooks"


def _park_entry_far_ahead(w: World, r: Reminder, minutes: float = 50) -> str:
    """As the watchdog's re-check at a park's lease end leaves it (at most an hour out,
    PARK_RENEW_SECONDS): the reminder's entry a watch entry ``minutes`` ahead. Its sort key."""
    key = watch_key(r.id, r.shard, w.clock.now() + timedelta(minutes=minutes), r.account_id)
    assert w.store.move_index(r.id, key)
    return key.sk


def parked(w: World, key: str) -> tuple[Reminder, str]:
    """A reminder whose webhook's endpoint is held (an operator's hold), its delivery parked: the
    reminder and its park's lease end."""
    _hold(w)
    r = create(w, key, channels=(ChannelSpec(ChannelType.WEBHOOK, HELD_URL),))
    assert [x.outcome for x in w.poll()] == ["endpoint_parked"]
    lease = w.delivery(r.id).parked_until
    assert lease is not None
    return r, lease


def _entry(w: World, r: Reminder) -> tuple[str, bool]:
    item = w.store.items[r.id]
    return sk_due(item["gsk"]), bool(item["w"])


def test_preview_promises_a_retry_sooner_than_the_watch_entry_an_earlier_park_left() -> None:
    w = World(shards=1)
    r = create(w, "retry-after-park")
    far = _park_entry_far_ahead(w, r)
    w.sender.script(w.delivery(r.id).key, ["429_retry_after"])  # Retry-After: 30 s
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    assert w.store.items[r.id]["gsk"] == far  # a retry does not move the entry
    w.clock.advance(5)
    out = preview(w, 15)
    assert promised(out) == {(r.id, "2026-11-29T12:00")}
    assert out["attempts"][0]["reason"] == "retry"
    _run(w, w.clock.now() + timedelta(minutes=1))  # what then happens: the retry, in that minute
    assert [iso(c.at)[:16] for c in w.sender.calls] == ["2026-11-29T12:00"] * 2


def test_preview_promises_a_quiet_hours_deferral_sooner_than_the_watch_entry_an_earlier_park_left() -> None:
    w = World(shards=1)  # T0 = 12:00 UTC; the window opens at 12:10 (review rev28e: no attempt line)
    r = create(w, "quiet-after-park", send_window=SendWindow.parse("12:10", "23:00"))
    _park_entry_far_ahead(w, r)
    assert [x.outcome for x in w.poll()] == ["deferred_quiet_hours"]
    w.clock.advance(5)
    out = preview(w, 15)
    assert {(a["reminder_id"], a["at"][11:16]) for a in out["attempts"]} == {(r.id, "12:10")}
    _run(w, w.clock.now() + timedelta(minutes=15))
    assert [iso(c.at)[11:16] for c in w.sender.calls] == ["12:10"]


def test_preview_promises_a_retry_when_the_reminders_other_channel_is_a_dead_letter() -> None:
    w = World(shards=1)
    r = create(
        w,
        "mixed",
        channels=(ChannelSpec(ChannelType.WEBHOOK, WEBHOOK_URL), ChannelSpec(ChannelType.WEBHOOK, OTHER_URL)),
    )
    _park_entry_far_ahead(w, r)
    w.sender.script(r.deliveries["webhook-0"].key, ["400"])  # permanent: dead letter
    w.sender.script(r.deliveries["webhook-1"].key, ["429_retry_after"])
    while w.poll():
        pass
    assert w.get(r.id).deliveries["webhook-0"].state.value == "dead_letter"
    w.clock.advance(5)
    out = preview(w, 15)
    assert {(a["reminder_id"], a["channel_id"]) for a in out["attempts"]} == {(r.id, "webhook-1")}


def test_a_short_preview_reads_no_row_of_a_reminder_due_past_its_window_when_the_page_is_small() -> None:
    """Review rev28f: past the window only watch entries are read (a dispatch entry there is due
    after it): a page of reminders due 40 minutes out neither fills a 15-minute preview's page nor
    makes it say ``truncated``."""
    w = World(shards=1)
    later = [create(w, f"later-{i}", 40 * 60) for i in range(5)]
    reads: list[str] = []
    batch_get = w.store.batch_get
    w.store.batch_get = lambda rids, **kw: reads.extend(rids) or batch_get(rids, **kw)  # type: ignore[method-assign]
    out = support.preview(w.store, w.clock.now(), 15, w.shards, account_id="acct-1", max_rows=5)
    assert out["truncated"] is False and out["attempts"] == []
    assert not {r.id for r in later} & set(reads)


def test_a_parked_delivery_is_previewed_when_its_watch_entry_sits_at_the_parks_lease_past_the_window() -> (
    None
):
    """Explorer seed 16: a park's watch entry sits at its lease's end (up to an hour out) while its
    endpoint may take it sooner; a 15-minute preview read the index only to the lag past its horizon."""
    w = World(shards=1)
    r, lease = parked(w, "parked")
    w.clock.advance(17 * 60)
    w.run_shards()  # the watchdog reads the entry: not lost, re-checked at the park's lease end
    assert _entry(w, r) == (lease, True)
    out = support.preview(
        w.store, w.clock.now(), 15, w.shards, account_id="acct-1", health=w.world.health_guard()
    )
    assert r.id in {a["reminder_id"] for a in out["may_attempt"]}


def test_preview_promises_an_attempt_when_a_stale_replica_still_shows_its_endpoint_disabled() -> None:
    """Review rev28e (the explorer's seed 36): the preview read the endpoint's health eventually
    consistently and listed a delivery as a certain ``endpoint_disabled`` dead letter hours after an
    operator re-enabled the endpoint; the consumer then sent it. The preview reads health as written."""
    from reminders.adapters.stale_reads import StaleImages

    w = World(shards=1)
    endpoint = implicit_endpoint_id("acct-1", HELD_URL)
    now = w.clock.now().timestamp()
    assert w.health.transition(
        EndpointHealth(endpoint, "acct-1"), EndpointState.DISABLED, HealthWhy.OPERATOR, now
    )
    w.health.stale = StaleImages(5)  # replicas lag by up to five writes
    disabled = w.health.get(endpoint, consistent=True)
    assert disabled is not None
    assert w.health.transition(disabled, EndpointState.ACTIVE, HealthWhy.OPERATOR, now)
    r = create(w, "re-enabled", 60, channels=(ChannelSpec(ChannelType.WEBHOOK, HELD_URL),))
    out = support.preview(
        w.store, w.clock.now(), 30, w.shards, account_id="acct-1", health=w.world.health_guard()
    )
    assert r.id in ids(out) and out["not_attempted"] == []
