"""``reminders rewind-dispatch --to <ISO instant>``: set every due-index shard's dispatch and
watchdog positions back to that minute (never forward).

The step after rolling forward from a rollback to a build before the account-tagged due index
(issue 28): that code could not see the entries this one writes and moved its cursors past their
minutes. Pass the instant the rollback began. The dispatcher then hands those minutes over again:
what was handed over meanwhile goes to SQS a second time and the ledger's claim sends each key
once. A shard busy with a dispatch run is left as it is and listed; run the command again.

Bounded: the dispatcher then re-reads every minute since ``--to`` on every shard (a due-index query
per minute and shard, the watchdog's as many) and hands every dispatch entry still in the index to
SQS again (a delivered or cancelled delivery's message is dropped at its claim, never sent twice, but
each costs a message and a consumer invocation). ``--to`` further back than ``MAX_REWIND_SECONDS``
(24 h: longer than a rollback is expected to last) is refused unless ``--force``; one after now too.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from reminders.domain.schedule import SHARD_HIGH_WATER
from reminders.services.dispatch import rewind_cursors

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments

OWNER = "operator-rewind"
#: The furthest back ``--to`` may be without ``--force``: 1,440 minutes x shards queries to catch up.
MAX_REWIND_SECONDS = 24 * 3600


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, help="the instant the rollback began (ISO-8601 with offset)")
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"allow --to more than {MAX_REWIND_SECONDS // 3600} h back (every minute since is read again)",
    )
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def rewind(store: Any, to: datetime, now: datetime) -> dict[str, Any]:
    """Every shard ever used (the control item's high-water mark), back to ``to``'s minute."""
    shards = int(store.get_controls().get(SHARD_HIGH_WATER) or 0)
    done = rewind_cursors(store, shards, to, OWNER, now)
    return {
        "to": to.isoformat(),
        "shards": shards,
        "rewound": done,
        "busy": sorted(set(range(shards)) - set(done)),
    }


def bound_error(to: datetime, now: datetime, *, force: bool = False) -> str | None:
    """Why ``--to`` is refused (None: it is not): after now, or too far back without ``--force``."""
    if to > now:
        return f"--to {to.isoformat()} is after now: a rewind never moves a cursor forward"
    back = (now - to).total_seconds()
    if back > MAX_REWIND_SECONDS and not force:
        return (
            f"--to is {back / 3600:.1f} h back, more than {MAX_REWIND_SECONDS // 3600} h: the dispatcher"
            " would re-read every minute since on every shard and hand every entry still indexed to SQS"
            " again (nothing is sent twice); pass --force to do it anyway"
        )
    return None


def run(args: argparse.Namespace) -> int:
    from .controls import _store

    to: datetime | None = None
    try:
        given = datetime.fromisoformat(args.to.replace("Z", "+00:00"))
        to = given.astimezone(UTC) if given.tzinfo is not None else None
    except (ValueError, OverflowError):  # OverflowError: the offset leaves the years 1-9999 in UTC
        pass
    if to is None:
        sys.stderr.write("reminders rewind-dispatch: --to must be an ISO-8601 instant with an offset\n")
        return 2
    now = datetime.now(UTC)
    wrong = bound_error(to, now, force=args.force)
    if wrong:
        sys.stderr.write(f"reminders rewind-dispatch: {wrong}\n")
        return 2
    target = StackTarget.from_args(args)
    try:
        store = _store(target, args.table)  # the operator commands' one way to open the table
    except StackRefError as exc:
        sys.stderr.write(f"reminders rewind-dispatch: {exc}\n")
        return 2
    out = rewind(store, to, now)
    print(json.dumps(out))
    return 1 if out["busy"] else 0
