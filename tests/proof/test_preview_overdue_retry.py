"""A finding of the explorer (issue 28's preview, found while closing issue 26): the settle driver's
seed 16 stopped at ``preview_unpromised_attempt``. At step 500 acct-b's preview did not list
``webhook-0`` of a reminder that was ``retryable`` with its next attempt already past (17:38:55,
the preview at 17:48:51): the retry travels as an SQS message (within the delay window the index
entry is not moved), and the reminder's only due-index entry was the watch entry an earlier park
left at 18:34:51, past the preview's read range. The consumer then attempted it at 17:51:51.

The fix: an account's preview also reads the account's retryable and held reminders (and its dead
letters within the maximum age) from the attention index, whose partition is the account. The
unit-sized case is in tests/unit/test_support_preview.py. Sized in steps."""

from __future__ import annotations

from reminders_ops.proof.explorer.engine import driven

STEPS = 700  # the preview is taken at step 500 and judged once its 15 minutes passed


def test_an_overdue_retry_in_sqs_is_previewed_when_its_index_entry_sits_past_the_window() -> None:
    with driven(16, STEPS) as explorer:  # raises the Violation it meets
        assert explorer.preview.taken >= 7  # its previews were taken (every 100 steps) and judged
