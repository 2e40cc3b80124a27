"""``reminders suppression list|remove`` — an account's suppressed email addresses.

Entries are keyed by the address's hash (the table never holds the address): ``list`` prints
hashes with reason, source, scope and time; ``remove`` takes the address (hashed here, never sent
anywhere or printed) or the hash. Works against the local emulator and real AWS alike.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from .stackrefs import StackRefError, StackTarget, add_target_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "remove"])
    parser.add_argument("--account", required=True, help="the account id")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--address", help="remove: the email address (hashed locally)")
    who.add_argument("--hash", dest="address_hash", help="remove: the address hash as `list` prints it")
    parser.add_argument("--scope", help="remove: only this scope (`*` or a reminder kind); default all")
    parser.add_argument("--limit", type=int, default=100, help="list: at most this many entries")
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def suppression_list(target: StackTarget, table: str | None = None) -> Any:
    from reminders.adapters.suppression import DynamoSuppressionList

    return DynamoSuppressionList(target.client("dynamodb"), table or target.table_name())


def run(args: argparse.Namespace) -> int:
    from reminders.domain.suppression import address_hash

    try:
        target = StackTarget.from_args(args)
        entries = suppression_list(target, args.table)
        if args.action == "list":
            for e in entries.list(args.account, limit=args.limit):
                row = asdict(e)
                row["reason"] = e.reason.value
                print(json.dumps(row, sort_keys=True))
            return 0
        hashed = args.address_hash or (address_hash(args.address) if args.address else None)
        if not hashed:
            print("remove needs --address or --hash", file=sys.stderr)
            return 2
        removed = entries.remove(args.account, hashed, args.scope)
        print(json.dumps({"account_id": args.account, "address_hash": hashed, "removed": removed}))
        return 0 if removed else 1
    except StackRefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
