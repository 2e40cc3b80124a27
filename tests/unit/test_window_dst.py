"""Send windows across DST changes (issue 25 items 11 and 12), through the real services on the
in-memory world: a window that touches a spring-forward gap or a repeated fall-back hour opens, the
reminder is sent at that opening, and nothing is dead-lettered for a DST change alone.

The rule (domain/localtime.py): a window boundary inside a gap is read with the offset before the
gap (RFC 5545) and the window is open from that instant; in a repeated hour the window is open in
both occurrences; "when does it open" is derived from "is it open"."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from reminders.domain.localtime import SendWindow

from tests.unit.fakes import World


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# (zone, window, due (UTC), expected send (UTC)): each window touches the zone's 2027 DST change.
SCENARIOS: dict[str, tuple[str, str, str, str, str]] = {
    # entirely inside the gap: open from the start read with the offset before the gap
    "berlin_02_00_02_30": ("Europe/Berlin", "02:00", "02:30", "2027-03-27T23:30", "2027-03-28T01:00"),
    "cairo_00_00_00_30": ("Africa/Cairo", "00:00", "00:30", "2027-04-29T21:00", "2027-04-29T22:00"),
    "nuuk_23_00_23_30": ("America/Nuuk", "23:00", "23:30", "2027-03-28T00:00", "2027-03-28T01:00"),
    "lord_howe_02_00_02_30": (
        "Australia/Lord_Howe",
        "02:00",
        "02:30",
        "2027-10-02T15:00",
        "2027-10-02T15:30",
    ),
    "anchorage_02_00_02_45": ("America/Anchorage", "02:00", "02:45", "2027-03-14T10:30", "2027-03-14T11:00"),
    # partly inside the gap: open from the first wall time after the gap that is inside the window
    "warsaw_02_30_03_30": ("Europe/Warsaw", "02:30", "03:30", "2027-03-27T23:30", "2027-03-28T01:00"),
    "north_dakota_02_15_03_15": (
        "America/North_Dakota/Center",
        "02:15",
        "03:15",
        "2027-03-14T07:00",
        "2027-03-14T08:00",
    ),
    "santiago_00_15_01_15": ("America/Santiago", "00:15", "01:15", "2027-09-05T03:00", "2027-09-05T04:00"),
    # the end inside the gap: still open after the gap until the end read with the offset before it
    "warsaw_01_30_02_30_due_03_10": (
        "Europe/Warsaw",
        "01:30",
        "02:30",
        "2027-03-28T01:10",
        "2027-03-28T01:10",
    ),
    # a repeated fall-back hour: open in its second occurrence too (01:45 EDT, then 01:00 EST)
    "new_york_01_00_01_30_due_01_45_edt": (
        "America/New_York",
        "01:00",
        "01:30",
        "2027-11-07T05:45",
        "2027-11-07T06:00",
    ),
}


@pytest.mark.xfail(
    strict=True, reason="issue 25 items 11/12: a window touching a DST change loses the reminder"
)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_reminder_is_sent_at_the_windows_opening_when_the_window_touches_a_dst_change(
    scenario: str,
) -> None:
    tz, start, end, due, expected = SCENARIOS[scenario]
    w = World(shards=1, start=_utc(due))
    w.reminders.create(replace(w.new("k"), send_window=SendWindow.parse(start, end), time_zone=tz))
    outcomes = []
    for _ in range(4):
        results = w.poll()
        outcomes += [r.outcome for r in results]
        if not results or results[-1].ack:
            break
        w.clock.advance(results[-1].visibility_seconds)
    dlq: list[dict[str, Any]] = [json.loads(m.body) for m in w.sqs.queues["webhook-dlq"].messages.values()]
    assert dlq == [] and outcomes[-1] == "delivered", outcomes
    assert [c.at for c in w.sender.calls] == [_utc(expected)]
