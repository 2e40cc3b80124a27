"""``make explore-regressions``: the explorer's power, measured. Each fix of issues 24, 25 and 26 is
reverted, one at a time, on a temporary copy of ``functions/`` (the worktree is never touched): by a
revert written against today's code (the fix's lines put back as they were, ``FIXES``), or, for a fix
whose commit still reverses whole, by its commit's reverse patch; the explorer runs on that copy
(``PYTHONPATH``) seed after seed within a budget of steps, and the table prints, per class: the steps
to its first violation (summed over the seeds it took), the violation's kind and the shrunk trace's
length.

A violation counts for a class only when it is of that class's kinds and its shrunk trace holds on
today's code (replayed there); any other is noted beside the row and the search goes on with the next
seed (its steps counted). A revert whose text is no longer in today's code says so in the table (the
fix moved: write it again).
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

#: A revert written against today's code: (file under ``functions/``, the fix's text, what it was).
Edit = tuple[str, str, str]

_ENDPOINTS = "reminders/services/endpoints.py"
_CLAIM = "reminders/services/delivery/claim.py"

#: (class, the fix commit's subject prefix, the checker's kinds that are this class, its revert): the
#: commit is found by its message, not a hash. A class with edits is reverted by them (its commit's
#: reverse patch no longer applies to the code the delivery steps and routers moved into); one without
#: by its commit's reverse patch.
FIXES: tuple[tuple[str, str, frozenset[str], tuple[Edit, ...]], ...] = (
    (
        "a foreign endpoint reached by a correction",
        "issue 24.1: every endpoint reference is (account, endpoint)",
        # reference_crossed_accounts (rev26): the stored reference itself, before any send
        frozenset({"signed_for_another_account", "answer_crossed_accounts", "reference_crossed_accounts"}),
        (
            # a create or correction may name any account's endpoint; the sender signs with it
            (
                _ENDPOINTS,
                "        if endpoint is None or endpoint.account_id != account_id:\n"
                '            raise ValidationError(field, "no such endpoint for this account")',
                "        if endpoint is None:\n"
                '            raise ValidationError(field, "no such endpoint for this account")',
            ),
            (
                _ENDPOINTS,
                "        if endpoint is not None and endpoint.account_id != account_id:\n"
                "            self._remember(key, mono, None)",
                "        if endpoint is None and endpoint is not None:\n"
                "            self._remember(key, mono, None)",
            ),
        ),
    ),
    (
        "a forged receipt / another account's signature",
        "issue 24.2, 24.3: every webhook is signed",
        frozenset({"receipt_crossed_accounts", "delivered_without_acceptance", "signed_for_another_account"}),
        (
            # a receipt proves a delivery never attempted, verified with any account's endpoint
            (
                "reminders/services/receipts.py",
                "if reminder is not None and delivery is not None and claimed(delivery):",
                "if reminder is not None and delivery is not None:",
            ),
            (
                "reminders/services/receipts.py",
                "if d.state in _PROVEN and here and claimed(d):",
                "if d.state in _PROVEN and here:",
            ),
            (
                "reminders/adapters/receipts.py",
                "        if endpoint is None or endpoint.account_id != account_id:\n            return []",
                "        if endpoint is None:\n            return []",
            ),
        ),
    ),
    (
        "a correction after a possible acceptance",
        "issue 25.1, 25.3: the evidence that an attempt",
        frozenset({"two_bodies_one_key"}),
        (
            (
                "reminders/services/intents.py",
                "if current.deliveries[cid].may_have_been_accepted():  # any attempt, any destination",
                "if False:  # reverted: a correction never asks whether an attempt may have been accepted",
            ),
        ),
    ),
    (
        "lost take-over evidence",
        "issue 25.2: a take-over writes the previous owner's evidence",
        frozenset({"two_bodies_one_key", "delivered_without_acceptance"}),
        (
            (
                _CLAIM,
                "deliveries[msg.channel_id] = replace(taken, **add_history(taken, line))",
                "deliveries[msg.channel_id] = taken  # reverted: no evidence of the previous owner",
            ),
        ),
    ),
    (
        "compaction that drops evidence",
        "issue 25.1, 25.3: the evidence that an attempt",
        frozenset({"two_bodies_one_key"}),
        (
            # the evidence summary is never written: what compaction drops from the history is gone
            (
                "reminders/domain/models.py",
                "    evidence = with_evidence(d, evidence_tag(d, line))",
                "    evidence = list(d.maybe_accepted)",
            ),
            # nor read back as it was stored: the evidence is what the history shows now (the read-back
            # of rows written before the summary would otherwise store it at the row's next write)
            (
                "reminders/adapters/codec.py",
                "        if not seed <= set(d.maybe_accepted):\n"
                "            d.maybe_accepted = sorted(seed | set(d.maybe_accepted))",
                "        d.maybe_accepted = sorted(seed)",
            ),
        ),
    ),
    (
        "a redrive after a correction stuck",
        "issue 25.4: a redriven message whose redrive",
        frozenset({"lost_after_settle", "late_without_reason"}),
        (
            (
                _CLAIM,
                'if not d.state.terminal and str(d.cycle - 1) == attrs.get("dl_cycle"):',
                'if False and str(d.cycle - 1) == attrs.get("dl_cycle"):',
            ),
        ),
    ),
    (
        "wrong answers after lost responses",
        "issue 25.5: own-write recognition",
        frozenset({"answer_disagrees_with_store"}),
        (),
    ),
    (
        "a DST window that loses a reminder",
        "issue 25.11/25.12: one rule for send windows across DST changes",
        frozenset({"window_opening_skipped"}),
        (
            # the opening read from the wall clock alone: a window a spring-forward gap swallows
            # (Berlin 02:00-03:00 on the change's day) never opens that day; the reminder waits a day
            (
                "reminders/domain/localtime.py",
                "        if self.is_open(instant, tz):\n"
                "            return instant\n"
                "        day = local_wall(instant, tz).date()\n"
                "        for days in (range(-1, 3), range(3, 8)):",
                "        if self.is_open_at(local_wall(instant, tz)):\n"
                "            return instant\n"
                "        day = local_wall(instant, tz).date()\n"
                "        opens = time(self.start_minute // 60, self.start_minute % 60)\n"
                "        for offset in range(3):  # reverted: today's opening or tomorrow's\n"
                "            at = resolve(datetime.combine(day + timedelta(days=offset), opens), tz)"
                ".instant\n"
                "            if at > instant:\n"
                "                return at\n"
                "        for days in (range(-1, 3), range(3, 8)):",
            ),
        ),
    ),
    (
        "multiplying parked copies",
        "issue 25.6: record a park on the row",
        frozenset({"parked_copies"}),
        (
            # neither the claim's condition nor its judgement tells a copy from the parked message
            (
                "reminders/adapters/memory.py",
                'and ("pu" not in d or d["pu"] <= now_s or d["pu"] == parked_lease)',
                "and True",
            ),
            ("reminders/services/delivery/messages.py", "    if not d.parked_until:\n", "    if True:\n"),
        ),
    ),
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
    edits: tuple[Edit, ...] = ()


def find_commit(subject: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--format=%h %s", "--fixed-strings", f"--grep={subject}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    hits = [line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1].startswith(subject)]
    return hits[-1] if hits else None


def reverted_copy(commit: str, into: Path, edits: tuple[Edit, ...] = ()) -> str | None:
    """``functions/`` with the fix reverted: by ``edits`` when given (a note if one no longer finds
    its text), else by ``commit``'s reverse patch (None when it applied whole; else the hunks that did,
    ``--reject``, and a note naming the files whose hunks did not)."""
    shutil.copytree(ROOT / "functions", into / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    if edits:
        missing = []
        for rel, fixed, reverted in edits:
            path = into / "functions" / rel
            text = path.read_text()
            if fixed not in text:
                missing.append(rel)
                continue
            path.write_text(text.replace(fixed, reverted, 1))
        return f"revert no longer applies in {', '.join(missing)}" if missing else None
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
        partial = reverted_copy(row.commit, Path(tmp), row.edits)
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "functions")}
        spent, seed = 0, first_seed
        others: list[str] = []
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
            if found and found.group(2) in row.kinds and _on_main(trace, seed):
                # the shrunk trace fails on today's code too: a finding of main's, not the fix's class
                others.append(f"seed {seed}: {found.group(2)} at {found.group(1)}, also on main")
                spent += int(found.group(1))
                seed += 1
                continue
            if found and found.group(2) not in row.kinds:
                # Another class's violation (one main shows too, or another revert's): noted, and the
                # search goes on with the next seed.
                others.append(f"seed {seed}: {found.group(2)} at {found.group(1)}")
                spent += int(found.group(1))
                seed += 1
                continue
            if found:
                row.steps = spent + int(found.group(1))
                row.kind = found.group(2)
                shrunk = _SHRUNK.search(out)
                row.shrunk = int(shrunk.group(1)) if shrunk else None
                row.note = "; ".join([f"seed {seed}", *others, *([partial] if partial else [])])
                return row
            spent += n
            seed += 1
        row.note = "; ".join([f"none within {budget} steps", *others, *([partial] if partial else [])])
        return row


_ENGINE = (sys.executable, "-m", "reminders_ops.proof.explorer.engine")


def _on_main(trace: Path, seed: int) -> bool:
    """The trace, replayed on today's code (the worktree's ``functions/``), fails too."""
    proc = subprocess.run(
        [*_ENGINE, "--seed", str(seed), "--replay", str(trace)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "functions")},
        cwd=trace.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode != 0


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
    for name, subject, kinds, edits in FIXES:
        if args.only and args.only not in name:
            continue
        commit = find_commit(subject)
        row = Row(name, commit or "?", kinds=kinds, edits=edits)
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
