"""The dispatcher picks the moment of its send (issue 14, cost and lateness): SQS counts DelaySeconds
in whole seconds from when it receives the send, so a send at a random instant makes a whole-second
due time turn visible up to a second early and the consumer waits the rest out before its claim:
billed Lambda time (0.5 s on average per batch) and a lane held. Sent at the right moment, the
message turns visible 0.05-0.15 s before it is due. Never late, never early."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta

import pytest
from reminders.domain.schedule import PHASE_MIN_AHEAD_SECONDS, SEND_LEAD_SECONDS, phase_wait
from reminders.services import dispatch

from tests.unit.fakes import World

LO, HI = SEND_LEAD_SECONDS


def _lead_after(ahead: float, wait: float) -> float:
    """How long before its due time a message sent ``wait`` from now turns visible (delay rounded down)."""
    return (ahead - wait) % 1.0


@pytest.mark.parametrize("phase", [0.0, 0.1, 0.24, 0.26, 0.5, 0.9, 0.999])
def test_whole_second_dues_sent_at_any_phase_turn_visible_just_before_they_are_due(phase: float) -> None:
    ahead = [30 + k - phase for k in range(20)]  # due at whole seconds, now at ``phase`` into a second
    wait = phase_wait(ahead)
    assert 0 <= wait < 1
    assert all(LO - 1e-6 <= _lead_after(a, wait) <= HI + 1e-6 for a in ahead)


def test_a_send_already_inside_the_lead_waits_for_its_upper_end() -> None:
    """Inside the band is not enough: every dispatcher aims at the same lead (the band's upper end)."""
    assert phase_wait([30.1, 31.1, 45.1]) == pytest.approx(0.95)
    assert phase_wait([30.15, 31.15]) == 0.0
    assert phase_wait([30.1, 31.1, 45.1], snap=False) == 0.0  # a pass's later send: in phase already


def test_two_shards_turn_one_second_visible_at_different_instants_when_one_already_sends_in_the_lead() -> (
    None
):
    """Every shard's dispatcher picks its own send moment. One that would send at a phase already in
    the lead band (0.10 s) sent at once while another waited for 0.15 s: the same second's messages
    of the two shards turned visible 50 ms apart and reached the consumer in two batches (the
    simulator, 16 shards: 4.6 visible instants per second holding a due time, mean batch 2.2)."""
    leads = []
    for phase in (0.90, 0.40):  # into the second: sending now leaves a 0.10 s lead, and a 0.60 s one
        ahead = [30 + k - phase for k in range(20)]
        wait = phase_wait(ahead)
        leads.append({round(_lead_after(a, wait), 6) for a in ahead})
    assert leads[0] == leads[1] == {HI}


def test_messages_due_soon_never_wait_for_a_phase() -> None:
    assert phase_wait([PHASE_MIN_AHEAD_SECONDS - 0.01, 0.6, 1.5]) == 0.0


def test_mixed_fractions_cover_the_majority() -> None:
    ahead = [40.7] * 8 + [41.3] * 2
    wait = phase_wait(ahead)
    assert sum(LO <= _lead_after(a, wait) <= HI + 1e-6 for a in ahead) == 8


def _due_in(w: World, at: datetime) -> float:
    return (at - w.clock.now()).total_seconds()


def test_the_dispatcher_sends_so_messages_turn_visible_just_before_due_and_the_consumer_barely_waits() -> (
    None
):
    """50 reminders due at whole seconds, the dispatcher running at an unaligned instant: every
    message turns visible 0.05-0.15 s before its due time, none after it; each is sent exactly when
    due, never early."""
    w = World(shards=1)
    w.run_shards()
    base = w.clock.now().replace(microsecond=0) + timedelta(seconds=1200)
    rng = random.Random(5)
    dues = [base + timedelta(seconds=rng.randrange(0, 120)) for _ in range(50)]
    for i, due in enumerate(dues):
        w.create(f"k{i}", due_in=_due_in(w, due))
    w.clock.advance(_due_in(w, base) - 600 + 0.537)  # inside the window, at an unaligned instant
    reports = w.run_shards()
    assert sum(r.dispatched for r in reports) == 50
    assert 0 < sum(r.phase_wait_seconds for r in reports) < 1
    now = w.clock.now()
    leads = [
        (w.get(m["reminder_id"]).due_at - (now + timedelta(seconds=m["visible_in"]))).total_seconds()
        for m in w.queued()
    ]
    assert len(leads) == 50 and all(LO - 1e-3 <= lead <= HI + 1e-3 for lead in leads), leads
    w.clock.advance(590)
    for _ in range(140):
        w.clock.advance(1)
        w.poll()
    assert Counter(c.at for c in w.sender.calls) == Counter(dues)  # each sent when due


def test_a_message_due_within_two_seconds_is_sent_at_once_and_the_others_after_the_wait() -> None:
    """The rule was paused: one reminder is due in 0.5 s, another in 20.5 s. The first is not held
    for the second's phase."""
    w = World(shards=1)
    w.run_shards()
    base = w.clock.now().replace(microsecond=0) + timedelta(seconds=1200)
    soon = w.create("soon", due_in=_due_in(w, base))
    later = w.create("later", due_in=_due_in(w, base + timedelta(seconds=20)))
    w.clock.advance(_due_in(w, base) - 0.5)
    run_start = w.clock.now()
    w.run_shards()
    now = w.clock.now()
    visible = {m["reminder_id"]: now + timedelta(seconds=m["visible_in"]) for m in w.queued()}
    assert visible[soon.id] == run_start  # sent before any wait, delay 0
    assert now > run_start  # the dispatcher waited for the later one's moment
    lead = (later.due_at - visible[later.id]).total_seconds()
    assert LO - 1e-3 <= lead <= HI + 1e-3


def test_messages_due_in_the_same_second_are_spread_over_many_sqs_batches_when_accounts_interleave() -> None:
    """A minute's partition sorts by account (issue 28 item 1). Handed to SQS in that order, the
    messages due in one second fall into several SendMessageBatch calls, each received by SQS a round
    trip after the other: they turn visible at as many instants, and the consumer's event source
    (no batching window) takes them in as many small batches — more invocations and receives per
    reminder (the simulator's cost $3.59 → $3.88). In due order, one second's messages share a
    batch of ten, as before the tag."""
    w = World(shards=1)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    for i in range(40):  # 10 accounts x 4 seconds of one minute: each second due for every account
        w.create(
            f"k{i}", due_in=_due_in(w, base + timedelta(seconds=10 * (i // 10))), account_id=f"acct-{i % 10}"
        )
    w.clock.advance(_due_in(w, base) - 600 + 0.537)  # the minute inside the horizon
    assert sum(r.dispatched for r in w.run_shards()) == 40
    sent = [w.get(m["reminder_id"]).due_at for m in w.queued()]  # in the order SQS received them
    chunks = [sent[i : i + 10] for i in range(0, len(sent), 10)]  # one SendMessageBatch each
    assert all(len(set(chunk)) == 1 for chunk in chunks), chunks


def test_a_minute_over_several_pages_is_handed_to_sqs_out_of_due_order_when_accounts_interleave() -> None:
    """Each page of a minute read in account order spans the whole minute: handed over page by page,
    one second's messages go out in as many sends as there are pages (the simulator with 2 shards,
    ~4 pages a minute, n=3000: consumer 0.29 invocations per reminder before the tag, 0.79 after,
    lateness p99 0.08 → 0.28 s; sorting each page alone: 0.47 and p99 1.2 s; the minute read whole
    and sent in due order: 0.30 and 0.08 s)."""
    w = World(shards=1, page_size=3)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    for i in range(30):  # 10 accounts x 3 seconds: 10 pages, each with every second in it
        w.create(
            f"k{i}", due_in=_due_in(w, base + timedelta(seconds=10 * (i // 10))), account_id=f"acct-{i % 10}"
        )
    w.clock.advance(_due_in(w, base) - 600 + 0.537)
    assert sum(r.dispatched for r in w.run_shards()) == 30
    sent = [w.get(m["reminder_id"]).due_at for m in w.queued()]
    assert sent == sorted(sent)


def test_a_minute_over_max_pass_pages_is_handed_over_in_parts_each_once_and_before_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A minute too large to read whole (``MAX_PASS_PAGES``) is handed over in parts, each in due
    order, the read resuming after its last key: every reminder once, none after its due time."""
    monkeypatch.setattr(dispatch, "MAX_PASS_PAGES", 2)
    w = World(shards=1, page_size=3)
    w.run_shards()
    base = w.clock.now().replace(second=0, microsecond=0) + timedelta(seconds=1200)
    rs = [
        w.create(f"k{i}", due_in=_due_in(w, base + timedelta(seconds=i)), account_id=f"acct-{i % 7}")
        for i in range(20)
    ]
    w.clock.advance(_due_in(w, base) - 781)  # the minutes before it read, it not yet in the horizon
    assert w.run_shards()[0].dispatched == 0
    w.clock.advance(62.537)
    (rep,) = w.run_shards()
    assert rep.dispatched == 20 and rep.pages == 1 + 7  # the empty minute before; 20 entries, 3 a page
    assert Counter(m["reminder_id"] for m in w.queued()) == Counter(r.id for r in rs)
    now = w.clock.now()
    assert all(m["visible_in"] <= (w.get(m["reminder_id"]).due_at - now).total_seconds() for m in w.queued())
    w.clock.advance(60)
    assert w.run_shards()[0].dispatched == 0  # the next run hands nothing over again
