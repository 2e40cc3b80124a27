"""``make lint``: no module of the code (functions/, infra/) over LIMIT_LINES lines, unless it is on
the allow-list below with the reason a reader needs (issue 29: a file a reader can hold).

A module that shrinks under the limit must leave the list (a stale entry fails too), so the list
only ever names what is still too long.
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT_LINES = 600
ROOTS = ("functions", "infra")

#: path -> why it is longer (each a next step, not a licence).
ALLOWED: dict[str, str] = {
    "functions/reminders_ops/provision.py": (
        "the template inventory and its provisioning onto moto, two halves"
    ),
    "functions/reminders_ops/bench/main.py": "one section per figure of make bench, each independent",
    "functions/reminders/runtime.py": "the composition root: settings and one cached factory per port",
    "functions/reminders_ops/bench/sim/embedded.py": (
        "the real handlers on moto: lateness and API-call counts"
    ),
    "functions/reminders/services/intents.py": (
        "the reminder intent's use cases: create, find, correct, cancel"
    ),
    "functions/reminders_ops/proof/wirerun.py": "the wire fault run: setup, drive, check in one scenario",
    "functions/reminders_ops/local/demo.py": "the demo: every delivery path as one script a reader follows",
}


def main(root: Path) -> int:
    sizes = {
        str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines())
        for top in ROOTS
        for p in sorted((root / top).rglob("*.py"))
    }
    problems = [
        f"{path}: {n} lines (limit {LIMIT_LINES}): split it, or add it to tools/module_size.py with a reason"
        for path, n in sizes.items()
        if n > LIMIT_LINES and path not in ALLOWED
    ]
    problems += [
        f"{path}: on the allow-list but {sizes.get(path, 0)} lines: remove it from tools/module_size.py"
        for path in ALLOWED
        if sizes.get(path, 0) <= LIMIT_LINES
    ]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(__file__).resolve().parents[1]))
