"""``reminders rewind-dispatch --to <ISO instant>``: set every due-index shard's dispatch and
watchdog positions back to that minute (never forward).

The step after rolling forward from a rollback to a build before the account-tagged due index
(issue 28): that code could not see the entries this one writes and moved its cursors past their
minutes. Pass the instant the rollback began. The dispatcher then hands those minutes over again:
what was handed over meanwhile goes to SQS a second time and the ledger's claim sends each key
once. A shard busy with a dispatch run is left as it is and listed; run the command again.
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, help="the instant the rollback began (ISO-8601 with offset)")
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
    target = StackTarget.from_args(args)
    try:
        store = _store(target, args.table)  # the operator commands' one way to open the table
    except StackRefError as exc:
        sys.stderr.write(f"reminders rewind-dispatch: {exc}\n")
        return 2
    out = rewind(store, to, datetime.now(UTC))
    print(json.dumps(out))
    return 1 if out["busy"] else 0
