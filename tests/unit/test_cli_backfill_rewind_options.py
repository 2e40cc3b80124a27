"""The options of ``reminders backfill-tags`` and ``reminders rewind-dispatch`` (issue 28, review
suspicions): a malformed value ends in exit 2 with a message naming the option and what is wrong,
never in a traceback. Nothing here reaches a table: the options are checked before it is opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from reminders_ops.cli import main

NOWHERE = ["--table", "t", "--endpoint-url", "http://127.0.0.1:9"]


@pytest.mark.parametrize(
    ("after", "what"),
    [
        ("{bad", "not JSON"),
        ('["pk", "sk"]', "JSON object"),
        ('{"pk": 1}', "string"),
        ("{}", "JSON object"),
    ],
)
def test_backfill_tags_exits_2_naming_after_when_it_is_malformed(
    after: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backfill-tags", "--after", after, *NOWHERE]) == 2
    err = capsys.readouterr().err
    assert "--after" in err and what in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["--page", "--max-pages"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_backfill_tags_exits_2_naming_the_option_when_a_count_is_below_1(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backfill-tags", option, value, *NOWHERE]) == 2
    assert option in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--page", "--max-pages"])
def test_backfill_tags_exits_2_when_a_count_is_not_a_number(option: str) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error
        main(["backfill-tags", option, "ten", *NOWHERE])
    assert exc.value.code == 2


@pytest.mark.parametrize("to", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_rewind_dispatch_exits_2_naming_to_when_it_is_out_of_range(
    to: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rewind-dispatch", "--to", to, *NOWHERE]) == 2
    assert "--to" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [["backfill-tags"], ["rewind-dispatch", "--to", "2026-12-02T10:00:00Z"]],
    ids=["backfill", "rewind"],
)
def test_the_commands_exit_2_naming_profile_when_the_aws_profile_does_not_exist(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(tmp_path / "none"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    assert main([*argv, "--table", "t", "--profile", "no-such-profile"]) == 2
    err = capsys.readouterr().err
    assert "--profile" in err and "no-such-profile" in err
