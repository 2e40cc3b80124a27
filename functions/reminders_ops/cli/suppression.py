"""``reminders suppression list|remove`` — an account's suppressed email addresses.

Entries are keyed by the address's hash (the table never holds the address): ``list`` prints
hashes with reason, source, scope and time; ``remove`` takes the address (hashed here, never sent
anywhere or printed) or the hash. Works against the local emulator and real AWS alike.

The hash is keyed (HMAC under the stack's ``AddressHashSecret``, output ``AddressHashSecretArn``;
``ADDRESS_HASH_SECRET_ARN`` overrides): ``remove --address`` removes the entries under the keyed
hash and under the unkeyed one of before. A stack without that output has unkeyed hashes only.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments


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


def address_hasher(target: StackTarget) -> Any:
    """The stack's address hasher: keyed by its secret, or the unkeyed form (no such secret)."""
    import os

    from reminders.domain.address_hash import AddressHasher

    try:
        arn = os.environ.get("ADDRESS_HASH_SECRET_ARN") or target.output("AddressHashSecretArn")
    except StackRefError:
        return AddressHasher()
    value = str(target.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"])
    return AddressHasher(lambda: value.encode())


def run(args: argparse.Namespace) -> int:
    try:
        target = StackTarget.from_args(args)
        entries = suppression_list(target, args.table)
        if args.action == "list":
            for e in entries.list(args.account, limit=args.limit):
                row = asdict(e)
                row["reason"] = e.reason.value
                print(json.dumps(row, sort_keys=True))
            return 0
        hashes = [args.address_hash] if args.address_hash else []
        if args.address:
            hashes = address_hasher(target).candidates(args.account, args.address)
        if not hashes:
            print("remove needs --address or --hash", file=sys.stderr)
            return 2
        removed = sum(entries.remove(args.account, h, args.scope) for h in hashes)
        print(json.dumps({"account_id": args.account, "address_hash": hashes[0], "removed": removed}))
        return 0 if removed else 1
    except StackRefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
