"""The explorer's swarm profiles (issue 26, ``explorer/profiles.py``) and its send-window oracle
(``explorer/windows.py``): a seed's profile is a function of the seed (7 and 8 run the full
catalogue), and each focused profile finds the regression class it was made for when that fix is
planted back (``make explore-regressions`` measures the same on reverted copies).

Sized in steps, never in seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from reminders_ops.proof.explorer import actions, profiles
from reminders_ops.proof.explorer.engine import explore
from reminders_ops.proof.explorer.sim import T0
from reminders_ops.proof.explorer.windows import skipped_opening

STEPS = 1500


def test_the_seeds_make_test_runs_draw_from_the_full_catalogue_on_the_usual_clock() -> None:
    for seed in (7, 8, 12):
        assert profiles.profile_of(seed) == "all"
        assert profiles.start_of(seed) == T0
    assert profiles.profile_of(1) == "dst" and profiles.profile_of(2) == "collide"
    assert profiles.start_of(1) == datetime(2027, 3, 28, 1, 0, tzinfo=UTC) - timedelta(hours=3)


def test_a_deferral_over_the_window_a_spring_gap_swallows_skips_its_opening() -> None:
    """Berlin, 2027-03-28: the clocks jump from 02:00 to 03:00, 02:00-03:00 is never shown; the window
    still opens that day (at 01:00Z, the change) and stays open for its hour. Waiting to the next
    day's 02:00 skips it; waiting to the change does not."""
    at = datetime(2027, 3, 27, 22, 10, tzinfo=UTC)
    change = datetime(2027, 3, 28, 1, 0, tzinfo=UTC)
    next_day = datetime(2027, 3, 29, 0, 0, tzinfo=UTC)
    assert skipped_opening(at, next_day, "02:00", "03:00", "Europe/Berlin") == change
    assert skipped_opening(at, change, "02:00", "03:00", "Europe/Berlin") is None
    # an ordinary day: 09:00-17:00 in Berlin (CET) opens at 08:00Z
    evening, opening = datetime(2027, 3, 25, 20, 0, tzinfo=UTC), datetime(2027, 3, 26, 8, 0, tzinfo=UTC)
    assert skipped_opening(evening, opening, "09:00", "17:00", "Europe/Berlin") is None
    late = opening + timedelta(hours=1)
    assert skipped_opening(evening, late, "09:00", "17:00", "Europe/Berlin") == opening


def test_the_oracle_reads_a_start_inside_a_gap_as_rfc_5545_does() -> None:
    """Lord Howe, 2027-10-03: 02:00 -> 02:30 (+10:30 -> +11); 02:10 read with the offset before the gap
    is 15:40Z. A deferral to it skips nothing; one past its end (15:50Z) does."""
    at = datetime(2027, 10, 2, 14, 32, 37, tzinfo=UTC)
    opens = datetime(2027, 10, 2, 15, 40, tzinfo=UTC)
    assert skipped_opening(at, opens, "02:10", "02:20", "Australia/Lord_Howe") is None
    assert skipped_opening(at, opens + timedelta(days=1), "02:10", "02:20", "Australia/Lord_Howe") == opens


def _wall_clock_only_next_opening(self: Any, instant: datetime, tz: Any) -> datetime:
    """The opening before issue 25.11/25.12: read from the wall clock alone (the revert
    ``make explore-regressions`` writes)."""
    from reminders.domain.localtime import local_wall, resolve

    if self.is_open_at(local_wall(instant, tz)):
        return instant
    day = local_wall(instant, tz).date()
    opens = time(self.start_minute // 60, self.start_minute % 60)
    for offset in range(3):
        at: datetime = resolve(datetime.combine(day + timedelta(days=offset), opens), tz).instant
        if at > instant:
            return at
    raise AssertionError("unreachable")


def test_a_window_opening_read_from_the_wall_clock_alone_is_found_by_the_dst_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted: the DST fix reverted. Seed 1 (dst: Berlin's spring change) defers a reminder whose
    window the gap swallows to the next day; the oracle names the skipped opening."""
    from reminders.domain.localtime import SendWindow

    monkeypatch.setattr(SendWindow, "next_opening", _wall_clock_only_next_opening)
    found = explore(1, STEPS)
    assert found.violation is not None and found.violation.kind == "window_opening_skipped", found.violation


def test_a_correction_that_never_asks_about_a_possible_acceptance_is_found_by_the_collide_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted: a correction checked as a resend is (never asked whether an earlier attempt may have
    been accepted). Seed 6 (collide) corrects a webhook a non-deduplicating receiver took while its
    answer was lost; the receiver takes a second body under the same key."""
    from reminders.services.intents import Reminders

    real = Reminders._check_correctable

    def check(self: Reminders, current: Any, changes: Any, affected: Any, *, resend: bool = False) -> None:
        real(self, current, changes, affected, resend=True)

    monkeypatch.setattr(Reminders, "_check_correctable", check)
    found = explore(6, STEPS)
    assert found.violation is not None and found.violation.kind == "two_bodies_one_key", found.violation


def test_a_cancel_that_knows_its_lost_write_only_by_an_unchanged_history_is_found_by_the_collide_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted (issue 25.5 reverted in spirit): own-write recognition that also wants the history as
    long as the write left it. A consumer records its attempt between the cancel's lost write and its
    re-read (``interleave.py``): the cancel answers 409 after it landed."""
    from reminders.services import intents

    real = intents.is_own_write

    def strict(stored: Any, written: Any) -> bool:
        same = all(len(stored.deliveries[c].history) == len(d.history) for c, d in written.deliveries.items())
        return bool(real(stored, written)) and same

    monkeypatch.setattr(intents, "is_own_write", strict)
    found = explore(6, STEPS)
    assert found.violation is not None, "a cancel answered 409 after its write went unnoticed"
    assert found.violation.kind == "answer_disagrees_with_store", found.violation


def test_the_evidence_profile_is_drawn_for_seeds_3_mod_4_except_the_ones_make_test_runs() -> None:
    for seed in (3, 11, 15, 19, 23):
        assert profiles.profile_of(seed) == "evidence"
        assert profiles.start_of(seed) == T0
    assert profiles.profile_of(7) == "all"


def test_the_evidence_profile_draws_only_the_catalogues_actions_and_whole_episodes() -> None:
    """Its episodes are scripts of ordinary actions (routes, consumers, time, the operator's redrive,
    armed receiver answers): every drawn action is one the catalogue names, and a run draws both
    ambiguous steps (a lost answer, a take-over) and the corrections that follow them."""
    from reminders_ops.proof.explorer.evidence import episode

    draw, rng = profiles.generator_of(3), __import__("random").Random(5)
    names = set(actions.NAMES)
    drawn = [draw(rng, ("acct-a", "acct-b", "acct-x"), "acct-x") for _ in range(3000)]
    assert {name for name, _ in drawn} <= names
    crashes = [a for name, a in drawn if name == "deliver" and a.get("crash") == "after:send"]
    armed = {a["answer"] for name, a in drawn if name == "receiver_fault"}
    assert crashes and {"timeout_after", "400", "429", "500"} <= armed
    one = episode(__import__("random").Random(1), "acct-a")
    assert one[0][0] == "POST /reminders" and any(name.startswith("PATCH") for name, _ in one)
    assert {name for name, _ in one} <= names


def _no_take_over_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted (issue 25.2 reverted): a take-over claims the delivery without the previous owner's
    ``lease_expired`` line (the revert ``make explore-regressions`` writes)."""
    from reminders.services.delivery import claim

    real = claim.add_history

    def without_lease_expired(d: Any, line: Any) -> dict[str, Any]:
        return {} if line.event == "lease_expired" else dict(real(d, line))

    monkeypatch.setattr(claim, "add_history", without_lease_expired)


def test_a_take_over_that_drops_the_previous_owners_evidence_is_found_by_the_evidence_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 3 (evidence): a consumer crashes after its send, another takes the message over and is
    answered 429; a correction is accepted, and the receiver takes a second body under the key."""
    _no_take_over_evidence(monkeypatch)
    found = explore(3, STEPS)
    assert found.violation is not None and found.violation.kind == "two_bodies_one_key", found.violation


@pytest.mark.parametrize("seed", [1, 3, 6])
def test_the_focused_profiles_hold_on_todays_code(seed: int) -> None:
    outcome = explore(seed, STEPS)
    assert outcome.ok, f"seed {seed} ({profiles.profile_of(seed)}): {outcome.violation}"


def test_two_bodies_are_never_accepted_under_one_key_when_collide_seed_10_runs() -> None:
    """Found by the collide profile (step 472): a reschedule skipped a dead letter that may have been
    accepted, and its redrive sent the new ``due_at`` under the same key
    (tests/unit/test_delivery_evidence.py)."""
    outcome = explore(10, STEPS)
    assert outcome.ok, f"seed 10 (collide): {outcome.violation}"
