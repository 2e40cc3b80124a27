"""`make mutate`: mutmut over the modules that carry the delivery promise, one module at a time, and
the threshold check mutmut does not do (it exits 0 whatever survives).

    python -m reminders_ops.proof.mutate run [--file functions/reminders/domain/tenancy.py]
    python -m reminders_ops.proof.mutate check

``run`` tests only the mutants not killed yet (mutmut keeps results in ``mutants/`` and drops them
when a function's source changes): a run picks up where the last one stopped, and re-tests the
survivors (a test added since may kill them). A
module named in ``[tool.reminders.mutate] sample`` (pyproject.toml) is scored on a seeded random
sample of that size: its full run takes hours on two cores. ``check`` reads mutmut's results and
prints, per module, killed / tested with the Wilson 95 % interval of the killed fraction (a sample's
is an estimate of the module's), the survivors and the justified ones (mutation-survivors.toml:
equivalent mutants and message text only), and fails when a module is below the threshold, when
justified survivors exceed 5 % of its tested mutants, or when a justification names no survivor.

Mutant names are import names (``reminders.domain.tenancy.x_principal_names__mutmut_3``): mutmut
strips a ``src.`` prefix only, so the configuration mutates ``src/`` — a git-ignored link to
``functions/`` that ``run`` makes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path.cwd()
JUSTIFIED_FILE = "mutation-survivors.toml"
#: mutmut's exit codes (mutmut/stats.py): 1 and 3 a failing test; 36 and the SIGXCPU codes a
#: timeout (the mutant made the tests hang: detected); 37 the type checker's catch.
KILLED = {1, 3, 36, 24, -24, 152, 255, 37}
SURVIVED = {0}
NO_TESTS = {5, 33}


def _config() -> dict[str, Any]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {"mutmut": data["tool"]["mutmut"], "mine": data["tool"].get("reminders", {}).get("mutate", {})}


def module_of(path: str) -> str:
    """``src/reminders/domain/tenancy.py`` -> ``reminders.domain.tenancy``."""
    p = Path(path)
    parts = p.with_suffix("").parts
    if parts[0] in ("src", "functions"):
        parts = parts[1:]
    return ".".join(parts)


def src_path(path: str) -> str:
    """Any spelling of a module's file (functions/…, src/…, reminders/…) as the configuration's."""
    p = Path(path)
    parts = p.parts
    if parts[0] in ("src", "functions"):
        parts = parts[1:]
    return str(Path("src", *parts))


def ensure_link() -> None:
    link = ROOT / "src"
    if not link.is_symlink():
        if link.exists():
            raise SystemExit("src exists and is not the link to functions/: move it away")
        link.symlink_to("functions")


def results(path: str) -> dict[str, int | None]:
    meta = ROOT / "mutants" / (path + ".meta")
    if not meta.exists():
        return {}
    data: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return data


def sample_of(names: list[str], size: int, seed: int) -> list[str]:
    """A seeded uniform sample (the same names on every run, so a run resumes it)."""
    ordered = sorted(names)
    if size >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, size))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n (95 % at z = 1.96)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


def _mutmut(args: list[str]) -> int:
    # The store's tests on moto only: mutmut runs them in its copy (mutants/), without node_modules,
    # and the forked workers would each start a dynalite.
    env = {**os.environ, "REMINDERS_TEST_DYNAMODB": os.environ.get("REMINDERS_TEST_DYNAMODB", "moto")}
    return subprocess.call([str(Path(sys.executable).parent / "mutmut"), *args], env=env)


def generate() -> None:
    """mutmut writes the mutants (and their result files) on a run; the first run needs their names
    before (to pick the untested ones, or a sample), so this does mutmut's own generation step alone."""
    code = (
        "from mutmut.__main__ import copy_src_dir, copy_also_copy_files, create_mutants\n"
        "from pathlib import Path\n"
        "Path('mutants').mkdir(exist_ok=True)\n"
        "copy_src_dir(); copy_also_copy_files(); create_mutants(1)\n"
    )
    subprocess.check_call([sys.executable, "-c", code], stdout=subprocess.DEVNULL)


def _samples(files: list[str], override: int | None) -> tuple[dict[str, int], int]:
    """The sample size per module (``--sample`` for the modules named, else the configuration's)."""
    cfg = _config()
    sample: dict[str, int] = dict(cfg["mine"].get("sample", {}))
    if override:
        sample.update(dict.fromkeys(files, override))
    return sample, int(cfg["mine"].get("seed", 26))


def run(files: list[str], max_children: int, override: int | None = None) -> int:
    """One mutmut run over the not-yet-killed mutants of ``files`` (each mutmut run first runs every
    test that covers them once, clean: one run for several modules pays that once)."""
    ensure_link()
    sample, seed = _samples(files, override)
    todo: list[str] = []
    for path in files:
        names = list(results(path))
        if not names:  # a fresh clone: no mutants yet (after that, mutmut's run regenerates changed ones)
            generate()
            names = list(results(path))
        if path in sample:
            names = sample_of(names, sample[path], seed)
        # Not yet killed: untested, and survivors again (a test added since may kill them; mutmut
        # itself re-tests only mutants of changed functions).
        mine = [n for n in names if results(path).get(n) not in KILLED]
        print(f"{path}: {len(mine)} of {len(names)} mutants to test (not killed yet)", flush=True)
        todo += mine
    if not todo:
        return 0
    return _mutmut(["run", "--max-children", str(max_children), *todo])


def quick(files: list[str], tests: list[str], override: int | None) -> int:
    """A developer's loop, not the score: each not-yet-killed mutant of ``files`` against ``tests``
    only (its own unit tests: seconds, not mutmut's clean pass over every covering test), one pytest
    per mutant in mutmut's copy. Prints the mutants those tests do not kill; writes no result (a
    mutant they kill, mutmut's full selection kills too; the others need mutmut's verdict)."""
    sample, seed = _samples(files, override)
    env = {**os.environ, "PYTHONPATH": "src", "REMINDERS_TEST_DYNAMODB": "moto"}
    alive: list[str] = []
    for path in files:
        names = list(results(path))
        names = sample_of(names, sample[path], seed) if path in sample else names
        todo = [n for n in names if results(path).get(n) not in KILLED]
        for n in todo:
            rc = subprocess.call(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-x",
                    "-q",
                    "-p",
                    "no:randomly",
                    "-p",
                    "no:cacheprovider",
                    *tests,
                ],
                cwd=ROOT / "mutants",
                env={**env, "MUTANT_UNDER_TEST": n},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if rc == 0:
                alive.append(n)
        print(f"{path}: {len(todo) - len([a for a in alive if a in todo])} of {len(todo)} killed by {tests}")
    for n in alive:
        print(f"  not killed by these tests: {n}")
    return 0


@dataclass
class Score:
    path: str
    total: int = 0
    sampled: int | None = None
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    justified: list[str] = field(default_factory=list)

    @property
    def tested(self) -> int:
        return self.killed + len(self.survived) + len(self.justified)

    @property
    def score(self) -> float:
        return self.killed / self.tested if self.tested else 0.0


def score(path: str, sample: int | None, seed: int, justified: set[str]) -> Score:
    res = results(path)
    names = sample_of(list(res), sample, seed) if sample else sorted(res)
    s = Score(path, total=len(res), sampled=len(names) if sample else None)
    for n in names:
        code = res[n]
        if code in KILLED:
            s.killed += 1
        elif n in justified:
            s.justified.append(n)
        elif code in SURVIVED or code in NO_TESTS:
            s.survived.append(n)  # a mutant no test reaches survives
        else:
            s.untested.append(n)
    return s


def check(threshold: float, files: list[str], override: int | None = None) -> int:
    sample, seed = _samples(files, override)
    jpath = ROOT / JUSTIFIED_FILE
    justified_reasons: dict[str, str] = tomllib.loads(jpath.read_text()).get("justified", {})
    failed = False
    print("| module | mutants | tested | killed | justified | score | 95 % Wilson |")
    print("|---|---:|---:|---:|---:|---:|---|")
    scores = [score(p, sample.get(p), seed, set(justified_reasons)) for p in files]
    for s in scores:
        lo, hi = wilson(s.killed, s.tested)
        scope = f"sample of {s.sampled}" if s.sampled is not None else "all"
        print(
            f"| {module_of(s.path)} | {s.total} ({scope}) | {s.tested} | {s.killed} | {len(s.justified)} "
            f"| {100 * s.score:.1f} % | {100 * lo:.1f}-{100 * hi:.1f} % |"
        )
    for s in scores:
        if s.untested:
            failed = True
            hint = f"make mutate FILE=functions/{s.path[4:]}"
            print(f"{s.path}: {len(s.untested)} mutants not tested yet ({hint})")
        if s.tested and s.score * 100 < threshold:
            failed = True
            print(f"{s.path}: {100 * s.score:.1f} % killed, below {threshold:.0f} %")
        if s.tested and len(s.justified) > 0.05 * s.tested:
            failed = True
            print(f"{s.path}: {len(s.justified)} justified survivors, more than 5 % of {s.tested}")
        for n in s.survived:
            print(f"  survived: {n}   (mutmut show {n})")
    known = {n for p in files for n in results(p)}
    for n in sorted(set(justified_reasons) - known):
        failed = True
        print(f"{JUSTIFIED_FILE}: {n} is no mutant of the configured modules")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="reminders_ops.proof.mutate")
    ap.add_argument("command", choices=["run", "check", "quick"])
    ap.add_argument("tests", nargs="*", help="quick: the test files to try each mutant against")
    ap.add_argument(
        "--file", action="append", default=[], help="a module (repeatable; else every configured one)"
    )
    ap.add_argument("--max-children", type=int, default=1)
    ap.add_argument("--threshold", type=float, default=90.0)
    ap.add_argument("--sample", type=int, help="score the named modules on a seeded sample of this size")
    args = ap.parse_args(argv)
    configured = [p for p in _config()["mutmut"]["only_mutate"]]
    files = [src_path(f) for arg in args.file for f in arg.split()] or configured
    for f in files:
        if f not in configured:
            raise SystemExit(f"{f} is not in [tool.mutmut] only_mutate")
    if args.command == "quick":
        return quick(files, args.tests, args.sample)
    if args.command == "run":
        rc = run(files, args.max_children, args.sample)
        if rc:
            return rc
    return check(args.threshold, files, args.sample)


if __name__ == "__main__":
    sys.exit(main())
