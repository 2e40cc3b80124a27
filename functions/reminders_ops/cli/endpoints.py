"""``reminders endpoints list|show|enable|disable`` — endpoint health for operators (issue 16).

- ``list``: the endpoints that have a health item (every endpoint that ever failed or changed
  state), optionally of one ``--account`` or one ``--state``: a bounded, paginated scan of the
  ``E#…/H`` items (the table has no index by account for them), one JSON line each.
- ``show ID``: the endpoint's health (state, why, since, transitions, recent success ratio, last
  error class, next probe) and its backlog (open deliveries naming it, oldest pending age).
- ``enable ID`` / ``disable ID``: the operator's transition (``why=operator``); after ``enable``,
  redrive its ``endpoint_disabled`` dead letters (``reminders dlq redrive --reason
  endpoint_disabled``).

Reads and writes the table (found through the stack's outputs), like the other operator commands;
never prints a URL or a secret. Works against the local emulator and real AWS alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "show", "enable", "disable"])
    parser.add_argument("endpoint_id", nargs="?", help="show/enable/disable: the endpoint id (ep_…)")
    parser.add_argument("--account", help="list: only this account's endpoints")
    parser.add_argument("--state", choices=["active", "held", "disabled"], help="list: only this state")
    parser.add_argument("--limit", type=int, default=100, help="list: at most this many endpoints")
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def _at(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _row(h: Any, now: float, policy: Any) -> dict[str, Any]:
    ratio = h.success_ratio(now, policy)
    return {
        "endpoint_id": h.endpoint_id,
        "account_id": h.account_id,
        "state": h.state.value,
        "why": h.why,
        "since": _at(h.since),
        "transitions": h.tv,
        "recent_success_ratio": None if ratio is None else round(ratio, 4),
        "last_error_class": h.last_error,
        "next_probe_at": _at(h.next_probe_at) if h.state.value == "held" else None,
    }


def list_health(client: Any, table: str, *, account: str | None, state: str | None, limit: int) -> list[Any]:
    """The health items, scanned page by page (bounded by ``limit`` matches)."""
    from reminders.adapters.health_store import PK_PREFIX, SK, health_from_item

    names = {"#pk": "pk", "#sk": "sk"}
    values: dict[str, Any] = {":p": {"S": PK_PREFIX}, ":h": {"S": SK}}
    expr = "begins_with(#pk, :p) AND #sk = :h"
    if account:
        names["#acct"], values[":a"] = "acct", {"S": account}
        expr += " AND #acct = :a"
    if state:
        names["#st"], values[":s"] = "st", {"S": state}
        expr += " AND #st = :s"
    out: list[Any] = []
    kwargs: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": expr,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    while len(out) < limit:
        page = client.scan(**kwargs)
        for item in page.get("Items", []):
            out.append(health_from_item(item["pk"]["S"][len(PK_PREFIX) :], item))
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return out[:limit]


def run(args: argparse.Namespace) -> int:
    from reminders.adapters.health_store import DynamoHealthStore
    from reminders.domain.endpoints import is_endpoint_id
    from reminders.domain.health import EndpointState, HealthPolicy
    from reminders.services.health import EndpointHealthGuard

    policy = HealthPolicy.from_env()
    now = time.time()
    try:
        target = StackTarget.from_args(args)
        client = target.client("dynamodb")
        table = args.table or target.table_name()
        if args.action == "list":
            for h in list_health(client, table, account=args.account, state=args.state, limit=args.limit):
                print(json.dumps(_row(h, now, policy), sort_keys=True))
            return 0
        if not args.endpoint_id or not is_endpoint_id(args.endpoint_id):
            print(f"{args.action} needs an endpoint id (ep_ and 32 hex digits)", file=sys.stderr)
            return 2
        eid = args.endpoint_id
        raw = client.get_item(
            TableName=table, Key={"pk": {"S": f"E#{eid}"}, "sk": {"S": "E"}}, ConsistentRead=True
        ).get("Item")
        if raw is None:
            print(f"no endpoint {eid}", file=sys.stderr)
            return 1
        account = raw["acct"]["S"]
        store = DynamoHealthStore(client, table, policy)
        if args.action in ("enable", "disable"):
            guard = EndpointHealthGuard(store=store, policy=policy, telemetry=_Quiet())
            state = EndpointState.ACTIVE if args.action == "enable" else EndpointState.DISABLED
            h = guard.set_state(eid, account, state, now)
            print(json.dumps(_row(h, now, policy), sort_keys=True))
            if args.action == "enable":
                print("next: reminders dlq redrive --reason endpoint_disabled", file=sys.stderr)
            return 0
        from reminders.domain.health import EndpointHealth

        h = store.get(eid) or EndpointHealth(eid, account)
        count, oldest = _backlog(client, table, eid, now)
        row = _row(h, now, policy) | {
            "backlog": count,
            "oldest_pending_age_seconds": None if oldest is None else round(oldest, 3),
        }
        print(json.dumps(row, sort_keys=True))
        return 0
    except StackRefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


class _Quiet:
    """The CLI's telemetry: the transition is printed, not counted (no metrics from a laptop)."""

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        pass

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        pass

    def log(self, action: str, **fields: Any) -> None:
        pass


def _backlog(client: Any, table: str, endpoint_id: str, now: float) -> tuple[int, float | None]:
    """Open deliveries naming the endpoint (its use items), read-only."""
    from reminders.adapters.dynamodb import DynamoReminderStore
    from reminders.adapters.endpoints_store import DynamoEndpointStore
    from reminders.services.health import backlog

    class _Uses:
        store = DynamoEndpointStore(client, table, sealer=None)  # type: ignore[arg-type]  # uses only
        reminders = DynamoReminderStore(client, table_name=table)

    return backlog(_Uses, endpoint_id, now)
