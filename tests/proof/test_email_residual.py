"""The email residual curve (``reminders_ops.bench.email_residual``, moved from the retired fault run):
small runs, judged by counts. The wait trades duplicates for lateness: with no wait an ambiguous
email is re-sent before SES's event can say it went; at the default wait most events arrive first."""

from __future__ import annotations

from reminders.domain.retry import RetryPolicy
from reminders_ops.bench import email_residual


def test_the_unconfirmed_wait_cuts_the_email_residual_and_costs_the_ambiguous_emails_its_length() -> None:
    default = RetryPolicy().unconfirmed_send_wait_seconds
    none, waited = email_residual.curve(7, 300, (0.0, default))
    assert none.open_deliveries == 0 and waited.open_deliveries == 0
    assert none.emails == waited.emails == 300
    assert waited.ambiguous_waits > 0, email_residual.format_curve([none, waited], default)
    assert none.duplicates > waited.duplicates, email_residual.format_curve([none, waited], default)
    # What the wait added to an ambiguous email is at least the wait (it re-sends after it).
    assert min(waited.wait_after_ambiguous) >= default
    assert "email lateness after an ambiguous send" in waited.summary()
