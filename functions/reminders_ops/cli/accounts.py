"""``reminders accounts grant|revoke|show PRINCIPAL [ACCOUNT]`` — which accounts an IAM principal's API
calls may act for (the tenant scoping of every API route). A role's grant covers its sessions
(``assumed-role/<role>/<session>``). API instances re-read a principal's grants within 15 s.
"""

from __future__ import annotations

import argparse
import json
import sys

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("grant", "revoke", "show"))
    parser.add_argument("principal", help="an IAM principal ARN (a role, a user, or a session)")
    parser.add_argument("account_id", nargs="?", help="the account id (grant/revoke); * = every account")
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from reminders.adapters.grants_store import DynamoGrantStore

    try:
        target = StackTarget.from_args(args)
        store = DynamoGrantStore(target.client("dynamodb"), args.table or target.table_name())
    except StackRefError as exc:
        sys.stderr.write(f"reminders accounts: {exc}\n")
        return 2
    if args.action in ("grant", "revoke"):
        if not args.account_id:
            sys.stderr.write("reminders accounts: grant/revoke need an ACCOUNT\n")
            return 2
        (store.grant if args.action == "grant" else store.revoke)(args.principal, args.account_id)
    accounts = sorted(store.accounts(args.principal))
    print(json.dumps({"principal": args.principal, "accounts": accounts, "note": "API re-reads within 15 s"}))
    return 0
