"""``reminders explain | preview | purge``: the support desk against the local runtime or AWS.

- ``explain <id | account:key>``: who owns it now, each attempt, why it stopped, what changed, what
  is next. Reads the table (found through the stack: ``--endpoint-url`` for the local runtime, the
  stack's outputs on AWS) and decodes it with the codec, or, with ``--api-url``, asks the API with
  a request signed (SigV4, botocore's signer) with the caller's boto3 credentials, as API Gateway's
  IAM authorization and the local runtime expect.
- ``preview --next 30m [--account …]``: what fires in the next minutes: an account's by the
  consumer's rules (when, and why it moved); every account's as the due index's entries counted,
  and the queues' counts (the queues are shared). Reads only.
- ``purge --account …``: deletes an account's reminders (a data-protection request): bounded
  (``--max-items``), resumable (``--resume`` with the token it prints), and it prints counts and the
  token only, never keys, addresses or data.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import Any

from reminders.adapters.codec import reminder_from_item
from reminders.adapters.dynamodb import DynamoReminderStore
from reminders.adapters.health_store import DynamoHealthStore
from reminders.domain.health import HealthPolicy
from reminders.domain.models import reminder_id
from reminders.domain.ports import NullTelemetry
from reminders.domain.retry import RetryPolicy
from reminders.services import support
from reminders.services.health import EndpointHealthGuard

from reminders_ops.stackrefs import StackTarget, add_target_arguments

_ID = re.compile(r"^rem_[0-9a-f]{32}$")
_DURATION = re.compile(r"^(\d+)\s*([mh]?)$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of whichever of explain / preview / purge ``parser`` is (the CLI gives each
    command its own parser)."""
    name = parser.prog.split()[-1]
    if name == "explain":
        parser.add_argument("ref", help="a reminder id (rem_…) or account:key")
        parser.add_argument("--api-url", default=None, help="ask this API instead of reading the table")
        parser.add_argument("--json", action="store_true", help="the explanation as JSON")
    elif name == "preview":
        parser.add_argument("--next", default="30m", help="a duration: 30m, 2h (default 30m)")
        parser.add_argument("--account", default=None)
        parser.add_argument("--json", action="store_true")
    else:
        parser.add_argument("--account", required=True)
        parser.add_argument("--max-items", type=int, default=1000, help="stop after this many deletes")
        parser.add_argument("--page-size", type=int, default=200)
        parser.add_argument("--resume", default=None, help="the token a previous bounded run printed")
    add_target_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return {"explain": _explain, "preview": _preview, "purge": _purge}[args.command](args)


# -- explain ----------------------------------------------------------------------------------------
def _rid(ref: str) -> str:
    if _ID.match(ref):
        return ref
    account, sep, key = ref.partition(":")
    if not sep or not account or not key:
        raise SystemExit(f"{ref!r}: give a reminder id (rem_…) or account:key")
    return reminder_id(account, key)


_API_REGION = re.compile(r"^https://[^/]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:/|$)")


def signed_request(url: str, method: str = "GET") -> urllib.request.Request:
    """``url`` signed with SigV4 for ``execute-api`` with the caller's boto3 credentials (env,
    profile, role): the API's region from its URL, else the session's, else us-east-1."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    session = boto3.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise SystemExit("--api-url: no AWS credentials to sign with (configure boto3: env, profile, role)")
    m = _API_REGION.match(url)
    region = m.group(1) if m else session.region_name or "us-east-1"
    aws = AWSRequest(method=method, url=url)
    SigV4Auth(credentials.get_frozen_credentials(), "execute-api", region).add_auth(aws)
    return urllib.request.Request(url, method=method, headers=dict(aws.headers.items()))


def fetch_view(args: argparse.Namespace) -> dict[str, Any] | None:
    rid = _rid(args.ref)
    if args.api_url:
        url = args.api_url.rstrip("/") + f"/reminders/{rid}"
        try:
            with urllib.request.urlopen(signed_request(url), timeout=10) as resp:
                return dict(json.loads(resp.read()))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise
    target = StackTarget.from_args(args)
    table = target.resource("dynamodb").Table(target.table_name())
    item = table.get_item(Key={"pk": f"R#{rid}", "sk": "R"}, ConsistentRead=True).get("Item")
    return support.reminder_view(reminder_from_item(item)) if item else None


def _explain(args: argparse.Namespace) -> int:
    view = fetch_view(args)
    if view is None:
        print(f"no reminder {args.ref}", file=sys.stderr)
        return 1
    result = support.explain(view, datetime.now(UTC))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(render(result))
    return 0


def render(result: dict[str, Any]) -> str:
    r = result["reminder"]
    lines = [f"{r['id']}  {r['kind']}  version {r['version']}  {r['state']}  due {r['due_at']}"]
    if r.get("expires_at"):
        lines.append(
            f"  expires (TTL) after {datetime.fromtimestamp(r['expires_at'], UTC):%Y-%m-%d %H:%M} UTC"
        )
    for d in result["deliveries"]:
        lines.append(f"- {d['channel_id']} ({d['key']}): {d['state']}")
        lines.append(f"    owner: {d['owner']}")
        for a in d["attempts"]:
            delay = f" delay {a['delay_seconds']:g}s" if a.get("delay_seconds") is not None else ""
            status = f" {a['status']}" if a.get("status") is not None else ""
            rep = f" x{a['repeat']}" if a.get("repeat") else ""
            lines.append(
                f"    attempt {a['at']}: {a.get('outcome')}{status} -> {a.get('decision')}{delay}"
                f" (policy {a.get('policy_version')}){rep}"
            )
        if d["dropped_lines"]:
            lines.append(f"    (history lines folded: {d['dropped_lines']})")
        for c in d["changes"]:
            lines.append(f"    changed {c['at']}: {c['event']} {c['detail']}".rstrip())
        if d["stopped"]:
            lines.append(f"    stopped: {d['stopped']}")
        lines.append(f"    next: {d['next']}")
    return "\n".join(lines)


# -- preview ----------------------------------------------------------------------------------------
def minutes_of(text: str) -> int:
    m = _DURATION.match(text.strip())
    if m is None:
        raise SystemExit(f"--next {text!r}: give minutes or hours, e.g. 30m or 2h")
    n = int(m.group(1)) * (60 if m.group(2) == "h" else 1)
    if not 1 <= n <= support.MAX_PREVIEW_MINUTES:
        raise SystemExit(f"--next: between 1 and {support.MAX_PREVIEW_MINUTES} minutes")
    return n


def _preview(args: argparse.Namespace) -> int:
    minutes = minutes_of(args.next)
    target = StackTarget.from_args(args)
    table = target.resource("dynamodb").Table(target.table_name())
    store = DynamoReminderStore(table, clock_reference=False)
    sqs = target.client("sqs")

    def in_flight() -> dict[str, dict[str, int]]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        out = {}
        for ch in ("email", "webhook"):
            a = sqs.get_queue_attributes(
                QueueUrl=target.queue_url(ch), AttributeNames=[*names, "ApproximateNumberOfMessagesDelayed"]
            )["Attributes"]
            out[ch] = {
                "visible": int(a.get("ApproximateNumberOfMessages", 0)),
                "in_flight": int(a.get("ApproximateNumberOfMessagesNotVisible", 0)),
                "delayed": int(a.get("ApproximateNumberOfMessagesDelayed", 0)),
            }
        return out

    max_age = RetryPolicy.from_env().max_age_seconds
    health = None
    if args.account:  # its endpoints' holds, as the consumer (and the API's preview) reads them
        policy = HealthPolicy.from_env(max_age_seconds=max_age)
        health = EndpointHealthGuard(
            store=DynamoHealthStore(target.client("dynamodb"), target.table_name(), policy),
            policy=policy,
            telemetry=NullTelemetry(),
        )
    result = support.preview(
        store,
        datetime.now(UTC),
        minutes,
        1,
        account_id=args.account,
        in_flight=None if args.account else in_flight,
        max_age_seconds=max_age,
        health=health,
    )
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['from']} .. {result['until']}" + (f"  account {args.account}" if args.account else ""))
    for minute, row in result["per_minute"].items():
        print(f"  {minute}  " + "  ".join(f"{k}={v}" for k, v in sorted(row.items())))
    first = " ".join(result["first_ids"]) or "-"
    print(f"  totals ({result['counts_of']}): {result['totals']}  first ids: {first}")
    for group in ("attempts", "may_attempt", "not_attempted"):
        for a in result.get(group) or []:
            moved = f" (from {a['shifted_from']})" if a.get("shifted_from") else ""
            print(f"  {group}: {a['at']}  {a['reminder_id']} {a['channel_id']}  {a['reason']}{moved}")
    if result.get("truncated"):
        print(f"  (stopped after {support.MAX_PREVIEW_ROWS} reminders: the page limit)")
    for ch, q in result.get("queues", {}).items():
        print(f"  {ch} queue: {q}")
    return 0


# -- purge ------------------------------------------------------------------------------------------
def purge(
    client: Any, table_name: str, account: str, *, max_items: int, page_size: int, resume: str | None
) -> dict[str, Any]:
    """Delete ``account``'s reminder items, at most ``max_items`` (a paginated Scan: the table has no
    account index, and this is a rare, bounded, operator-run job). Each delete is conditional on the
    item still being this account's. Returns counts and the token to resume with (None: done)."""
    start = json.loads(base64.urlsafe_b64decode(resume.encode())) if resume else None
    deleted = scanned = 0
    while deleted < max_items:
        request: dict[str, Any] = {
            "TableName": table_name,
            "FilterExpression": "acct = :a AND sk = :r",
            "ExpressionAttributeValues": {":a": {"S": account}, ":r": {"S": "R"}},
            "ProjectionExpression": "pk, sk",
            "Limit": page_size,
        }
        if start:
            request["ExclusiveStartKey"] = start
        resp = client.scan(**request)
        scanned += int(resp.get("ScannedCount", 0))
        items = resp.get("Items", [])
        for i, it in enumerate(items):
            if deleted >= max_items:
                # resume at the last item handled (scan order is stable)
                return {
                    "deleted": deleted,
                    "scanned": scanned,
                    "resume": _token(items[i - 1] if i else start),
                }
            try:
                client.delete_item(
                    TableName=table_name,
                    Key={"pk": it["pk"], "sk": it["sk"]},
                    ConditionExpression="acct = :a",
                    ExpressionAttributeValues={":a": {"S": account}},
                )
                deleted += 1
            except client.exceptions.ConditionalCheckFailedException:
                pass
        start = resp.get("LastEvaluatedKey")
        if not start:
            return {"deleted": deleted, "scanned": scanned, "resume": None}
    return {"deleted": deleted, "scanned": scanned, "resume": _token(start)}


def _token(key: dict[str, Any] | None) -> str | None:
    if not key:
        return None
    key = {k: key[k] for k in ("pk", "sk") if k in key}
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode()


def _purge(args: argparse.Namespace) -> int:
    target = StackTarget.from_args(args)
    result = purge(
        target.client("dynamodb"),
        target.table_name(),
        args.account,
        max_items=args.max_items,
        page_size=args.page_size,
        resume=args.resume,
    )
    print(json.dumps({"action": "purge", **result}))
    if result["resume"]:
        print(f"bounded: run again with --resume {result['resume']}", file=sys.stderr)
    return 0
