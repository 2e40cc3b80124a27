"""Review rev28e (hostile): two explorer seeds that stopped at ``preview_unpromised_attempt``, as the
seeds that now hold (sized in steps).

Seed 40. Review rev28e (hostile): the explorer's seed 40 (``--seed 40 --steps 1500``) stops at
``preview_unpromised_attempt`` at step 1050: acct-b's preview at step 950 (2026-11-30T02:29:38.7Z,
15 min) listed nothing for rem_542f…/webhook-0, ``queued`` after three ``defer endpoint_hold`` lines
and no attempt line (so no attention entry), its next attempt already past (02:17:43.85Z), its only
due-index entry the park's watch entry at 03:13:27Z, past the read range; a consumer attempted it at
02:30:08.2Z. The seed-16 state without a retry: 7144747's attention read does not reach a delivery
that was never attempted (tests/unit/test_review28e_hostile.py, the quiet-hours case, is its unit
size).

Fixed: the backfill's Scan reads consistently (the explorer's backfill action writes the older
build's entry just before the run; an eventual Scan read the previous image, already tagged, and
skipped it), and the preview reads the index as far as a park's lease (an hour past now).

Seed 36. Review rev28e (hostile): the explorer's seed 36 (``python -m reminders_ops.proof.explorer.engine
--seed 36 --steps 1500``) stops at ``preview_unpromised_attempt`` at step 1372: acct-a's preview at
step 1350 (2026-11-30T06:10:37.7Z, 15 min) listed rem_b444…/webhook-0 (``scheduled``, due 05:55:05)
as ``not_attempted`` (``endpoint_disabled``), and worker w2 (clock -30 s) then sent it (200,
delivered; its line at 06:10:37.2Z).

Cause (traced): the preview's endpoint-health read is eventually consistent (HealthGuard.view,
``consistent=False``); in the explorer's stale mode the health twin's image lags by writes with no
time bound (faults.make_stale: only the reminder store's has STALE_SECONDS), so the preview saw the
endpoint DISABLED three hours after it was re-enabled (ACTIVE since 03:26:55Z, tv=2); the consumer saw
it ACTIVE. The checker exempts reminders read stale (``lagging``), not stale health. The same on
e663363: not introduced by 7144747. Either the model (a time bound on the health twin's stale image)
or the preview (a consistent health read) should change; which is the maintainers' call.

Fixed in the preview: it reads endpoint health consistently, past the guard's cache."""

from __future__ import annotations

from reminders_ops.proof.explorer.engine import driven


def test_seed_40_holds_when_a_parked_never_attempted_delivery_sits_past_the_preview_window() -> None:
    with driven(40, 1100) as explorer:  # raises the Violation it meets
        assert explorer.preview.taken >= 20


def test_seed_36_holds_when_a_stale_replica_still_shows_a_re_enabled_endpoint_disabled() -> None:
    with driven(36, 1500) as explorer:
        assert explorer.preview.taken >= 20
