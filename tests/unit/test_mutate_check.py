"""`make mutate`'s verdict (reminders_ops/proof/mutate.py): the per-module table and the threshold
mutmut itself does not enforce (it exits 0 whatever survives)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reminders_ops.proof import mutate

MODULE = "src/reminders/domain/example.py"
NAME = "reminders.domain.example.x_f__mutmut_"


def _project(root: Path, codes: dict[int, int | None], justified: dict[int, str] | None = None) -> None:
    (root / "pyproject.toml").write_text(
        f'[tool.mutmut]\nonly_mutate = ["{MODULE}"]\n[tool.reminders.mutate]\nseed = 26\n'
    )
    meta = root / "mutants" / (MODULE + ".meta")
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {f"{NAME}{i}": c for i, c in codes.items()}}))
    lines = [f'"{NAME}{i}" = "{why}"' for i, why in (justified or {}).items()]
    (root / mutate.JUSTIFIED_FILE).write_text("[justified]\n" + "\n".join(lines) + "\n")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(mutate, "ROOT", tmp_path)
    return tmp_path


def test_check_passes_and_prints_the_row_when_the_module_reaches_the_goal(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(root, {i: 1 for i in range(19)} | {19: 0})  # 19 killed, 1 survivor: 95 %
    assert mutate.check(90.0, [MODULE]) == 0
    out = capsys.readouterr().out
    assert "| reminders.domain.example | 20 (all) | 20 | 19 | 1 | 0 | 95.0 % |" in out
    assert f"survived: {NAME}19" in out


def test_check_fails_when_a_module_is_below_the_goal(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(root, {i: 1 for i in range(8)} | {8: 0, 9: 33})  # a mutant no test reaches survives
    assert mutate.check(90.0, [MODULE]) == 1
    assert "80.0 % killed, below 90 %" in capsys.readouterr().out


def test_check_fails_when_a_mutant_is_not_tested_yet(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(root, {i: 1 for i in range(10)} | {10: None})
    assert mutate.check(90.0, [MODULE]) == 1
    assert "1 mutants not tested yet" in capsys.readouterr().out


def test_check_fails_when_justified_survivors_exceed_five_percent(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(root, {i: 1 for i in range(18)} | {18: 0, 19: 0}, justified={18: "equivalent", 19: "equivalent"})
    assert mutate.check(90.0, [MODULE]) == 1
    out = capsys.readouterr().out
    assert "2 justified survivors, more than 5 % of 20" in out and f"justified: {NAME}18: equivalent" in out


def test_check_fails_when_a_justification_names_no_mutant_of_the_module(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(root, {i: 1 for i in range(20)}, justified={99: "equivalent"})
    assert mutate.check(90.0, [MODULE]) == 1
    assert f"{NAME}99 is no mutant" in capsys.readouterr().out


def test_a_sample_is_the_same_names_on_every_run_whatever_their_order() -> None:
    names = [f"m{i}" for i in range(100)]
    first = mutate.sample_of(names, 30, 26)
    assert first == mutate.sample_of(list(reversed(names)), 30, 26) and len(set(first)) == 30
    assert mutate.sample_of(names, 200, 26) == sorted(names)


def _fresh_clone(root: Path, modules: list[str], justified: str = "") -> None:
    """A clone before any `make mutate`: the configuration and the justifications, no mutants/."""
    listed = ", ".join(f'"{m}"' for m in modules)
    (root / "pyproject.toml").write_text(
        f"[tool.mutmut]\nonly_mutate = [{listed}]\n[tool.reminders.mutate]\nseed = 26\n"
    )
    (root / mutate.JUSTIFIED_FILE).write_text("[justified]\n" + justified)


def test_check_says_run_make_mutate_first_in_one_line_when_no_module_has_results(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fresh_clone(root, [MODULE], justified=f'"{NAME}3" = "equivalent"\n')
    assert mutate.main(["check"]) != 0
    assert capsys.readouterr().out == "no mutation results: run make mutate first\n"


def test_check_fails_when_a_configured_module_has_no_results_while_another_has(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(root, {i: 1 for i in range(20)})
    other = "src/reminders/domain/other.py"
    text = (root / "pyproject.toml").read_text().replace(f'["{MODULE}"]', f'["{MODULE}", "{other}"]')
    (root / "pyproject.toml").write_text(text)
    assert mutate.main(["check"]) == 1
    out = capsys.readouterr().out
    assert f"{other}: no mutation results (make mutate FILE=functions/reminders/domain/other.py)" in out


def test_check_counts_a_justified_mutant_not_tested_yet_as_untested_not_as_a_justified_survivor(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `make mutate` generates every module's mutants on its first run; the others stay untested.
    _project(root, {i: 1 for i in range(19)} | {19: None}, justified={19: "equivalent"})
    assert mutate.check(90.0, [MODULE]) == 1
    out = capsys.readouterr().out
    assert "| reminders.domain.example | 20 (all) | 19 | 19 | 0 | 0 | 100.0 % |" in out
    assert "1 mutants not tested yet" in out and "justified survivors" not in out
