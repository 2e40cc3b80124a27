"""``make explore-regressions``: the explorer's power, measured. Each fix of issues 24 and 25 is
reverted, one at a time, as a reverse patch of its commit's product code applied to a temporary copy
of ``functions/`` (the worktree is never touched); the explorer runs on that copy (``PYTHONPATH``)
seed after seed within a budget of steps, and the table prints, per class: the steps to its first
violation (summed over the seeds it took), the violation's kind and the shrunk trace's length.

A fix whose reverse patch no longer applies whole to today's code (later work changed its lines) is
reverted hunk by hunk as far as it applies, and the table names the files whose hunks stayed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]  # the repository (functions/reminders_ops/proof/explorer/..)

#: (class, the fix commit's subject prefix, the checker's kinds that are this class): the commit is
#: found by its message, not a hash.
FIXES: tuple[tuple[str, str, frozenset[str]], ...] = (
    (
        "a foreign endpoint reached by a correction",
        "issue 24.1: every endpoint reference is (account, endpoint)",
        frozenset({"signed_for_another_account", "answer_crossed_accounts"}),
    ),
    (
        "a forged receipt / another account's signature",
        "issue 24.2, 24.3: every webhook is signed",
        frozenset({"receipt_crossed_accounts", "delivered_without_acceptance", "signed_for_another_account"}),
    ),
    (
        "a correction after a possible acceptance",
        "issue 25.1, 25.3: the evidence that an attempt",
        frozenset({"two_bodies_one_key"}),
    ),
    (
        "lost take-over evidence",
        "issue 25.2: a take-over writes the previous owner's evidence",
        frozenset({"two_bodies_one_key", "delivered_without_acceptance"}),
    ),
    (
        "a redrive after a correction stuck",
        "issue 25.4: a redriven message whose redrive",
        frozenset({"late"}),
    ),
    (
        "wrong answers after lost responses",
        "issue 25.5: own-write recognition",
        frozenset({"answer_disagrees_with_store"}),
    ),
    ("multiplying parked copies", "issue 25.6: record a park on the row", frozenset({"parked_copies"})),
)

_VIOLATION = re.compile(r"VIOLATION at step (\d+): ([a-z_]+)")
_SHRUNK = re.compile(r"shrunk to (\d+) steps")


@dataclass
class Row:
    name: str
    commit: str
    steps: int | None = None
    kind: str = ""
    shrunk: int | None = None
    note: str = ""
    kinds: frozenset[str] = frozenset()


def find_commit(subject: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--format=%h %s", "--fixed-strings", f"--grep={subject}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    hits = [line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1].startswith(subject)]
    return hits[-1] if hits else None


def reverted_copy(commit: str, into: Path) -> str | None:
    """``functions/`` with ``commit``'s product changes reversed: None when the whole reverse patch
    applied; else the hunks that did (``--reject``) and a note naming the files whose hunks did not."""
    shutil.copytree(ROOT / "functions", into / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    patch = subprocess.run(
        ["git", "-C", str(ROOT), "show", "--format=", commit, "--", "functions/reminders"],
        capture_output=True,
        check=True,
    ).stdout
    applied = subprocess.run(
        ["git", "apply", "-R", "--whitespace=nowarn", "-"],
        cwd=into,
        input=patch,
        capture_output=True,
        check=False,
    )
    if applied.returncode == 0:
        return None
    subprocess.run(
        ["git", "apply", "-R", "--reject", "--whitespace=nowarn", "-"],
        cwd=into,
        input=patch,
        capture_output=True,
        check=False,
    )
    rejected = sorted(str(p.relative_to(into)).removesuffix(".rej") for p in into.rglob("*.rej"))
    return "partial revert, hunks kept in " + ", ".join(rejected)


def run_class(row: Row, budget: int, steps: int, first_seed: int, shrink_budget: int = 30) -> Row:
    with tempfile.TemporaryDirectory(prefix="explore-regression-") as tmp:
        partial = reverted_copy(row.commit, Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "functions")}
        spent, seed = 0, first_seed
        while spent < budget:
            n = min(steps, budget - spent)
            trace = Path(tmp) / f"trace-{seed}.json"
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "reminders_ops.proof.explorer.engine",
                    "--seed",
                    str(seed),
                    "--steps",
                    str(n),
                    "--trace-out",
                    str(trace),
                    "--shrink-budget",
                    str(shrink_budget),
                ],
                env=env,
                cwd=tmp,
                capture_output=True,
                text=True,
                check=False,
            )
            out = proc.stdout
            found = _VIOLATION.search(out)
            if not found and proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                row.note = f"the reverted copy does not run ({last[:80]})" + (
                    f"; {partial}" if partial else ""
                )
                return row
            if found:
                row.steps = spent + int(found.group(1))
                row.kind = found.group(2)
                shrunk = _SHRUNK.search(out)
                row.shrunk = int(shrunk.group(1)) if shrunk else None
                row.note = f"seed {seed}" + (f"; {partial}" if partial else "")
                return row
            spent += n
            seed += 1
        row.note = f"none within {budget} steps" + (f"; {partial}" if partial else "")
        return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="revert each issue-24/25 fix; steps to the explorer's first violation"
    )
    parser.add_argument("--budget", type=int, default=6000, help="steps per class, over seeds")
    parser.add_argument("--steps", type=int, default=1500, help="steps per seed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="run the classes whose name contains this")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name, subject, kinds in FIXES:
        if args.only and args.only not in name:
            continue
        commit = find_commit(subject)
        row = Row(name, commit or "?", kinds=kinds)
        if commit is None:
            row.note = "fix commit not found"
        else:
            run_class(row, args.budget, args.steps, args.seed)
        rows.append(row)
        print(_line(row), flush=True)
    print()
    print(f"{'class':48} {'fix':9} {'steps':>6} {'shrunk':>6}  kind / note")
    for row in rows:
        print(_line(row))
    return 0


def _line(row: Row) -> str:
    steps = str(row.steps) if row.steps is not None else "-"
    shrunk = str(row.shrunk) if row.shrunk is not None else "-"
    kind = row.kind if not row.kind or row.kind in row.kinds else f"{row.kind} (not this class)"
    return f"{row.name:48} {row.commit:9} {steps:>6} {shrunk:>6}  {kind} {row.note}".rstrip()


if __name__ == "__main__":
    sys.exit(main())
