"""``reminders backfill-tags``: rewrite the due-index entries written before the account tag (issue
28) and those of the previous build's 8-character tag into this build's 16-character tagged form, so
that an account's preview finds reminders created before the upgrade.

Run once after upgrading (and again after rolling forward from a rollback: the old build writes
entries of its own form). Operator-wide: a paged scan of the table; each entry gets its own row's
account's tag (a watchdog entry stays one); an entry due within about 16 minutes and one of this
build's tag are left as they are. Each rewrite is conditional on the entry the scan read (a
correction, a hand-over or a delete since wins), so a rerun rewrites nothing twice. ``--max-pages``
bounds a run; it prints ``after``: pass it as ``--after`` to go on (exit 1 while there is more; 0
once the scan is done).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError
from reminders.services.backfill import SCAN_PAGE, backfill_tags

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--after", default="", help="resume where a previous run stopped (its 'after')")
    parser.add_argument("--max-pages", type=int, default=None, help="scan pages in this run (default: all)")
    parser.add_argument("--page", type=int, default=SCAN_PAGE, help=f"items read per scan page ({SCAN_PAGE})")
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def after_error(after: str) -> str | None:
    """What is wrong with ``--after`` (None: nothing): it must be the ``after`` a previous run printed,
    the JSON object of the scan's position (the table's keys, strings)."""
    if not after:
        return None
    try:
        value = json.loads(after)
    except ValueError:
        return "is not JSON: pass the 'after' a previous run printed"
    if not isinstance(value, dict) or not value:
        return "must be a non-empty JSON object: the 'after' a previous run printed"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return "must map the table's keys to string values: the 'after' a previous run printed"
    return None


def backfill(
    store: Any, *, after: str = "", page: int = SCAN_PAGE, max_pages: int | None = None
) -> dict[str, Any]:
    return asdict(
        backfill_tags(store, lambda: datetime.now(UTC), after=after, page=page, max_pages=max_pages)
    )


def run(args: argparse.Namespace) -> int:
    from .controls import _store

    if args.page < 1 or (args.max_pages is not None and args.max_pages < 1):
        sys.stderr.write("reminders backfill-tags: --page and --max-pages must be at least 1\n")
        return 2
    wrong = after_error(args.after)
    if wrong:
        sys.stderr.write(f"reminders backfill-tags: --after {wrong}\n")
        return 2
    target = StackTarget.from_args(args)
    try:
        store = _store(target, args.table)  # the operator commands' one way to open the table
    except StackRefError as exc:
        sys.stderr.write(f"reminders backfill-tags: {exc}\n")
        return 2
    try:
        out = backfill(store, after=args.after, page=args.page, max_pages=args.max_pages)
    except ClientError as exc:
        if not args.after or exc.response.get("Error", {}).get("Code") != "ValidationException":
            raise
        # Only the first page starts from the operator's position; the next ones from DynamoDB's.
        sys.stderr.write(f"reminders backfill-tags: --after is not a position of this table: {exc}\n")
        return 2
    print(json.dumps(out))
    return 1 if out["after"] else 0
