"""`make mutate`: mutation testing of the modules that carry the delivery promise, one module at a
time, and the threshold check mutmut does not do (it exits 0 whatever survives).

    python -m reminders_ops.proof.mutate run [--file functions/reminders/domain/tenancy.py] [--sample N]
    python -m reminders_ops.proof.mutate quick [--file …] [--sample N]   # a seeded sample (20) of each
    python -m reminders_ops.proof.mutate check [--file …]

mutmut 3.8.1 writes the mutants (``mutants/``, its trampolines, its result files: ``mutmut show NAME``
and ``mutmut results`` read them); this module runs them (``serve``): per module, against the fast
tests named in ``[tool.reminders.mutate.tests]`` only; one process imports pytest and those tests
once, learns which of them reach each mutated function (mutmut's "stats" trampoline mode, one clean
run that must pass), then forks per mutant and runs only the tests that reach its function, fastest
first, stopping at the first failure (about a second a mutant on a shared core, where mutmut's own
loop over the unit, proof and API tiers took minutes). ``run`` tests only the mutants not killed
yet: a stopped run resumes, and survivors are tried again (a test added since may kill them);
mutmut forgets the verdicts of a function whose source changed. A module named in
``[tool.reminders.mutate.sample]`` (pyproject.toml) is scored on a seeded random sample of that size
(the same names every run). ``check`` prints, per module, killed / survived / justified with the
Wilson 95 % interval of the killed fraction (a sample's is an estimate of the module's), the
survivors, and the justified ones with their reasons (mutation-survivors.toml: equivalent mutants
and message text only), and fails when a module is below the threshold, when justified survivors
exceed 5 % of its tested mutants, when a justification names no mutant of its module, or when a
module has no results here (never run: ``mutants/`` is git-ignored; with none at all, as on a fresh
clone, it prints only "no mutation results: run make mutate first").

Mutant names are import names (``reminders.domain.tenancy.x_principal_names__mutmut_3``): mutmut
strips a ``src.`` prefix only, so the configuration mutates ``src/`` — a git-ignored link to
``functions/`` that ``run`` makes.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
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


def run(files: list[str], override: int | None = None) -> int:
    """Test the not-yet-killed mutants of ``files`` (all, or a module's configured sample, or
    ``override`` mutants of each), one module at a time, each against its own tests (``serve``)."""
    ensure_link()
    generate()  # mutmut regenerates a changed module's mutants and forgets their verdicts only
    sample, seed = _samples(files, override)
    env = {**os.environ, "PYTHONPATH": "src", "REMINDERS_TEST_DYNAMODB": "moto"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a mutated module compiles once, not in every process
    rc = 0
    groups: dict[tuple[str, ...], list[str]] = {}  # modules tried against the same tests share a run
    for path in files:
        names = list(results(path))
        if path in sample:
            names = sample_of(names, sample[path], seed)
        # Not yet killed: untested, and survivors again (a test added since may kill them).
        todo = [n for n in names if results(path).get(n) not in KILLED]
        print(f"{path}: {len(todo)} of {len(names)} mutants to test (not killed yet)", flush=True)
        if todo:
            (ROOT / "mutants" / (path + ".todo")).write_text("\n".join(todo))
            groups.setdefault(tuple(tests_of(path)), []).append(path)
    for paths in groups.values():
        cmd = [sys.executable, "-m", "reminders_ops.proof.mutate", "serve"]
        cmd += [a for path in paths for a in ("--file", path)]
        rc = subprocess.call(cmd, cwd=ROOT / "mutants", env=env) or rc
        for path in paths:
            (ROOT / "mutants" / (path + ".todo")).unlink()
    return rc


# --- the fast runner ------------------------------------------------------------------------------
# mutmut's own loop costs minutes a mutant here: each `mutmut run` first runs every covering test of
# the whole selection (unit + proof + API tiers) twice (stats, then a "clean" pass), and a mutant in
# a function the explorer calls runs every explorer and API test that reaches it. This runner keeps
# mutmut's mutants, trampolines and result files (mutants/<file>.meta: `mutmut results/show` read
# them) and changes what a mutant costs: per module, the fast tests named in
# [tool.reminders.mutate.tests] only; one process imports pytest and those tests once, learns which
# tests reach each function (mutmut's own "stats" trampoline mode, in a fork), then forks per mutant
# and runs only the tests that reach its function, fastest first, stopping at the first failure.
NO_TESTS_CODE = 33
QUICK_SAMPLE = 20
TIMEOUT_CODE = 36


def tests_of(path: str) -> list[str]:
    """The test files and folders a module's mutants are tried against (its fast tier)."""
    mine: dict[str, list[str]] = _config()["mine"].get("tests", {})
    if path in mine:
        return mine[path]
    for pattern, tests in mine.items():
        if fnmatch.fnmatch(path, pattern):
            return tests
    return mine.get("default", ["tests/unit"])


def _fork_call(fn: Any, timeout: float | None = None) -> int:
    """Run ``fn()`` (returns an exit code) in a forked child with its output discarded; the child's
    exit code, TIMEOUT_CODE when it outlives ``timeout`` seconds (then it is killed)."""
    pid = os.fork()
    if pid == 0:
        code = 99  # not a verdict: the runner itself failed
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = int(fn())
        finally:
            os._exit(code)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return TIMEOUT_CODE
        time.sleep(0.01)


#: Off in every run of this runner: test order, the cache and xdist's worker start.
PLUGINS_OFF = ["-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist"]


def _pytest_args(tests: list[str]) -> list[str]:
    cli = _config()["mutmut"].get("pytest_add_cli_args", [])
    skip = [a for a in cli if a.startswith(("--ignore", "--deselect"))]
    return ["--rootdir=.", "-x", "-q", *PLUGINS_OFF, *skip, *tests]


def _coverage(tests: list[str]) -> tuple[int, dict[str, list[str]], dict[str, float]]:
    """One clean run of ``tests`` in mutmut's "stats" mode: its exit code, the tests that reach each
    mutated function, and each test's duration."""
    out = Path(f".coverage-{os.getpid()}.json")

    def child() -> int:
        import pytest
        from mutmut.mutation.trampoline import set_mutant_under_test
        from mutmut.state import state

        by_function: dict[str, set[str]] = {}
        durations: dict[str, float] = {}

        class Stats:
            def pytest_runtest_teardown(self, item: Any) -> None:
                for f in state()._stats:
                    by_function.setdefault(f, set()).add(item.nodeid)
                state()._stats.clear()

            def pytest_runtest_logreport(self, report: Any) -> None:
                durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration

        set_mutant_under_test("stats")
        code = int(pytest.main(_pytest_args(tests), plugins=[Stats()]))
        by = {k: sorted(v) for k, v in by_function.items()}
        out.write_text(json.dumps({"code": code, "by": by, "d": durations, "modules": sorted(sys.modules)}))
        return code

    _fork_call(child)
    data = json.loads(out.read_text())
    out.unlink()
    # What the tests import when they run (the product imports lazily: nothing at import time) is
    # imported here once, not compiled again in every mutant's fork.
    for name in data["modules"]:
        if name not in sys.modules and not name.startswith("__"):
            try:
                importlib.import_module(name)
            except Exception:  # a module that imports only in its test's context
                continue
    return int(data["code"]), data["by"], data["d"]


def _save_result(path: str, name: str, code: int, seconds: float) -> None:
    meta = Path(path + ".meta")  # cwd is mutants/
    data = json.loads(meta.read_text())
    data["exit_code_by_key"][name] = code
    data["durations_by_key"][name] = seconds
    tmp = meta.with_suffix(".meta.tmp")
    tmp.write_text(json.dumps(data, indent=4))
    tmp.replace(meta)


def serve(todo: dict[str, list[str]]) -> int:
    """In mutants/ (PYTHONPATH=src): test the mutants ``todo`` names (per module, modules tried
    against the same tests) against those tests. Prints one line per mutant; writes each verdict as
    it comes."""
    import pytest

    tests = tests_of(next(iter(todo)))
    started = time.monotonic()
    # Import pytest's plugins, the conftests and the test modules once: every fork inherits them.
    with open(os.devnull, "w") as devnull:
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = devnull
        try:
            pytest.main(["--rootdir=.", "--collect-only", "-q", *PLUGINS_OFF, *tests])
        finally:
            sys.stdout, sys.stderr = saved
    code, by_function, durations = _coverage(tests)
    print(
        f"clean run of {' '.join(tests)}: exit {code} in {time.monotonic() - started:.0f} s, "
        f"{len(durations)} tests",
        flush=True,
    )
    # The tests pass again on the warmed process every mutant forks from (else every mutant "dies").
    warm = _fork_call(lambda: int(pytest.main(_pytest_args(tests))))
    if code != 0 or warm != 0:
        print(f"the clean runs must pass ({code}, {warm}): no mutant tested")
        return 1
    print(f"warmed, the clean run again exit 0 in {time.monotonic() - started:.0f} s", flush=True)
    for path, names in todo.items():
        reached = sorted(f for f in by_function if f.startswith(module_of(path) + "."))
        print(f"{path}: {len(reached)} functions reached by these tests", flush=True)
        if reached:
            _serve_module(path, names, by_function, durations)
    return 0


def _serve_module(
    path: str, names: list[str], by_function: dict[str, list[str]], durations: dict[str, float]
) -> None:
    import pytest

    for i, name in enumerate(names, 1):
        function = name.partition("__mutmut_")[0]
        covering = sorted(by_function.get(function, []), key=lambda t: (durations.get(t, 0.0), t))
        t0 = time.monotonic()
        if not covering:
            code = NO_TESTS_CODE
        else:
            budget = 10.0 + 10.0 * sum(durations.get(t, 0.0) for t in covering)

            def child(name: str = name, covering: list[str] = covering) -> int:
                from mutmut.mutation.trampoline import set_mutant_under_test

                set_mutant_under_test(name)
                return int(pytest.main(_pytest_args(covering)))

            code = _fork_call(child, timeout=budget)
        seconds = time.monotonic() - t0
        _save_result(path, name, code, seconds)
        verdict = (
            "killed"
            if code in KILLED
            else "SURVIVED"
            if code in SURVIVED or code in NO_TESTS
            else f"exit {code}"
        )
        print(
            f"  [{i}/{len(names)}] {verdict:8} {seconds:5.1f} s {len(covering):4} tests  {name}", flush=True
        )


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
        elif code not in SURVIVED and code not in NO_TESTS:
            s.untested.append(n)  # justified or not: a justification excuses a survivor, not a run
        elif n in justified:
            s.justified.append(n)
        else:
            s.survived.append(n)  # a mutant no test reaches survives
    return s


def has_results(path: str) -> bool:
    """Whether ``make mutate`` ever ran ``path`` here (mutants/ is git-ignored: a clone has none)."""
    return (ROOT / "mutants" / (path + ".meta")).exists()


def check(threshold: float, files: list[str], override: int | None = None) -> int:
    if not any(has_results(p) for p in files):
        print("no mutation results: run make mutate first")
        return 1
    missing = [p for p in files if not has_results(p)]
    files = [p for p in files if has_results(p)]
    sample, seed = _samples(files, override)
    jpath = ROOT / JUSTIFIED_FILE
    justified_reasons: dict[str, str] = tomllib.loads(jpath.read_text()).get("justified", {})
    failed = bool(missing)
    for p in missing:
        print(f"{p}: no mutation results (make mutate FILE=functions/{p[4:]})")
    print("| module | mutants | tested | killed | survived | justified | score | 95 % Wilson | goal |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    scores = [score(p, sample.get(p), seed, set(justified_reasons)) for p in files]
    for s in scores:
        lo, hi = wilson(s.killed, s.tested)
        scope = f"sample of {s.sampled}" if s.sampled is not None else "all"
        print(
            f"| {module_of(s.path)} | {s.total} ({scope}) | {s.tested} | {s.killed} | {len(s.survived)} "
            f"| {len(s.justified)} | {100 * s.score:.1f} % | {100 * lo:.1f}-{100 * hi:.1f} % "
            f"| {threshold:.0f} % |"
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
        for n in s.justified:
            print(f"  justified: {n}: {justified_reasons[n]}")
    known = {n for p in files for n in results(p)}
    for n in sorted(set(justified_reasons) - known):
        if any(n.startswith(module_of(p) + ".") for p in files):
            failed = True
            print(f"{JUSTIFIED_FILE}: {n} is no mutant of the configured modules")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="reminders_ops.proof.mutate")
    ap.add_argument("command", choices=["run", "check", "quick", "serve"])
    ap.add_argument(
        "--file", action="append", default=[], help="a module (repeatable; else every configured one)"
    )
    ap.add_argument("--threshold", type=float, default=90.0)
    ap.add_argument("--sample", type=int, help="test and score a seeded sample of this size of each module")
    args = ap.parse_args(argv)
    configured = [p for p in _config()["mutmut"]["only_mutate"]]
    files = [src_path(f) for arg in args.file for f in arg.split()] or configured
    for f in files:
        if f not in configured:
            raise SystemExit(f"{f} is not in [tool.mutmut] only_mutate")
    if args.command == "serve":  # run's worker, in mutants/
        return serve({path: (ROOT / (path + ".todo")).read_text().split() for path in files})
    if args.command == "quick":  # a developer's loop: a small seeded sample of each module
        args.sample = args.sample or QUICK_SAMPLE
    if args.command in ("run", "quick"):
        rc = run(files, args.sample)
        if rc:
            return rc
    return check(args.threshold, files, args.sample)


if __name__ == "__main__":
    sys.exit(main())
