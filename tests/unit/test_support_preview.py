"""Issue 28 item 1: an account's preview answers "what will be attempted in the next N minutes, and
when" from the consumer's own rules (domain/outlook.py), not from the due index: on the in-memory
world with the real services and a virtual clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from reminders.domain.localtime import SendWindow
from reminders.domain.models import Reminder
from reminders.services import support

from tests.unit.fakes import World

XFAIL = pytest.mark.xfail(strict=True, reason="issue 28 item 1: preview reads only the due index")


def create(w: World, key: str, due_in: float = 0, **fields: Any) -> Reminder:
    reminder, _ = w.reminders.create(replace(w.new(key, due_in=due_in), **fields))
    return reminder


def preview(w: World, minutes: int = 30) -> dict[str, Any]:
    return support.preview(w.store, w.clock.now(), minutes, w.shards, account_id="acct-1")


def promised(out: dict[str, Any]) -> set[tuple[str, str | None]]:
    """(reminder id, the minute it is attempted in) of each promised attempt; today's preview, which
    names ids without a minute, as (id, None)."""
    if "attempts" in out:
        return {(a["reminder_id"], a["at"][:16]) for a in out["attempts"]}
    return {(rid, None) for rid in out["first_ids"]}


def ids(out: dict[str, Any]) -> set[str]:
    return {rid for rid, _ in promised(out)}


@XFAIL
def test_preview_does_not_promise_a_cancelled_reminder_when_its_index_entry_remains() -> None:
    w = World(shards=1)
    r = create(w, "cancelled", due_in=300)
    w.reminders.cancel(r.id)
    assert r.id not in ids(preview(w))


@XFAIL
def test_preview_moves_a_reminder_to_its_window_when_quiet_hours_hold_it_past_the_horizon() -> None:
    w = World(shards=1)  # T0 = 12:00 UTC; the window opens at 15:00
    r = create(w, "quiet-3h", due_in=300, send_window=SendWindow.parse("15:00", "23:00"))
    assert r.id not in ids(preview(w))


@XFAIL
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


@XFAIL
def test_preview_promises_a_quiet_hours_deferral_that_ends_inside_the_horizon() -> None:
    w = World(shards=1)
    r = create(w, "opens-12:20", send_window=SendWindow.parse("12:20", "23:00"))
    assert [x.outcome for x in w.poll()] == ["deferred_quiet_hours"]
    w.clock.advance(5)
    out = preview(w)
    assert promised(out) == {(r.id, "2026-11-29T12:20")}
    (a,) = out["attempts"]
    assert (a["reason"], a["shifted_from"]) == ("quiet_hours", "2026-11-29T12:00:00.000000Z")


@XFAIL
def test_preview_promises_a_429_retry_that_comes_due_inside_the_horizon() -> None:
    w = World(shards=1)
    r = create(w, "throttled")
    w.sender.script(w.delivery(r.id).key, ["429_retry_after"])  # Retry-After: 30 s
    assert [x.outcome for x in w.poll()] == ["retry_scheduled"]
    w.clock.advance(5)
    out = preview(w)
    assert promised(out) == {(r.id, "2026-11-29T12:00")}
    assert out["attempts"][0]["reason"] == "retry"


@XFAIL
def test_every_accounts_preview_labels_its_counts_as_due_index_entries_and_reads_no_row() -> None:
    w = World(shards=1)
    r = create(w, "cancelled", due_in=300)
    w.reminders.cancel(r.id)
    reads: list[str] = []
    w.store.batch_get = lambda rids, **kw: reads.extend(rids) or []  # type: ignore[method-assign]
    w.store.get = lambda rid: reads.append(rid)  # type: ignore[method-assign]
    out = support.preview(w.store, w.clock.now(), 30, w.shards)
    assert out["counts_of"] == "due_index_entries" and out["totals"]["to_dispatch"] == 1
    assert reads == []
