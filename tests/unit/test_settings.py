"""The functions' settings, read from the environment once: types, bounds, a clear error naming the
variable; and the delivery consumers' cold start without pydantic (issue 14, cold start)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from reminders.runtime import Settings, SettingsError

REQUIRED = {
    "TABLE_NAME": "t",
    "EMAIL_QUEUE_URL": "q",
    "WEBHOOK_QUEUE_URL": "q",
    "EMAIL_DLQ_URL": "d",
    "WEBHOOK_DLQ_URL": "d",
}
FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


def test_values_take_their_field_types_and_defaults() -> None:
    s = Settings.from_env(
        {**REQUIRED, "DUE_SHARDS": "4", "WATCH_LAG_SECONDS": "30", "DESTINATION_RATE_PER_SECOND": "2.5"}
    )
    assert (s.due_shards, s.watch_lag_seconds, s.destination_rate_per_second) == (4, 30.0, 2.5)
    assert isinstance(s.due_shards, int) and s.email_rate_per_second is None and s.retention_days == 90


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DUE_SHARDS": "0"}, "DUE_SHARDS must be within [1, 1000], not 0"),
        ({"DUE_SHARDS": "1001"}, "DUE_SHARDS must be within"),
        ({"DUE_SHARDS": "four"}, "DUE_SHARDS must be a number"),
        ({"RETENTION_DAYS": "7"}, "RETENTION_DAYS must be within [30, None]"),
        ({"DELAY_WINDOW_SECONDS": "901"}, "DELAY_WINDOW_SECONDS must be within [1, 900]"),
        ({"EMAIL_RATE_PER_SECOND": "-1"}, "EMAIL_RATE_PER_SECOND must be within"),
    ],
)
def test_a_bad_value_names_its_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Settings.from_env({**REQUIRED, **env})


def test_a_missing_required_variable_is_named() -> None:
    env = dict(REQUIRED)
    del env["WEBHOOK_QUEUE_URL"]
    with pytest.raises(SettingsError, match="WEBHOOK_QUEUE_URL is not set"):
        Settings.from_env(env)


def test_an_empty_optional_number_is_unset() -> None:
    assert Settings.from_env({**REQUIRED, "EMAIL_RATE_PER_SECOND": ""}).email_rate_per_second is None


@pytest.mark.parametrize("handler", ["delivery", "receipts"])
def test_the_consumers_cold_start_imports_no_pydantic(handler: str) -> None:
    code = f"import sys, reminders.handlers.{handler}; print('pydantic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=FUNCTIONS, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_the_stack_signature_window_is_the_cut_over_plus_at_most_seven_days(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 24: SIGNING_CUTOVER_AT + STACK_SIGNATURE_DAYS (default 7, never more); unset: none."""
    from datetime import UTC, datetime, timedelta

    from reminders import runtime

    def until(env: dict[str, str]) -> datetime | None:
        monkeypatch.setattr(runtime, "settings", lambda: Settings.from_env({**REQUIRED, **env}))
        return runtime.stack_signature_until()

    cut = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert until({}) is None
    assert until({"SIGNING_CUTOVER_AT": "2026-12-01T12:00:00Z"}) == cut + timedelta(days=7)
    assert until({"SIGNING_CUTOVER_AT": cut.isoformat(), "STACK_SIGNATURE_DAYS": "2"}) == cut + timedelta(
        days=2
    )
    with pytest.raises(SettingsError, match="STACK_SIGNATURE_DAYS"):
        until({"SIGNING_CUTOVER_AT": cut.isoformat(), "STACK_SIGNATURE_DAYS": "8"})
    with pytest.raises(SettingsError, match="SIGNING_CUTOVER_AT"):
        until({"SIGNING_CUTOVER_AT": "2026-12-01T12:00:00"})  # no offset
    with pytest.raises(SettingsError, match="SIGNING_CUTOVER_AT"):
        until({"SIGNING_CUTOVER_AT": "next tuesday"})
