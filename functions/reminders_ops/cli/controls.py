"""The runbook's switches: ``reminders pause-producers|resume-producers|pause-consumers|resume-consumers``.

Producers: the operator controls item of the table (``producers_paused``); the API rejects new
reminders with 503 while it is set (each API instance re-reads it within 15 s). Nothing queued is
touched.

Consumers: in AWS, the stack's SQS event source mappings are disabled/enabled
(``UpdateEventSourceMapping Enabled=false/true``): messages stay in their queues, nothing is lost,
and delayed or retried messages simply wait. Against the local emulator, where Lambda does not run,
the same intent is the controls item ``consumers_paused`` that the local runtime's pollers obey.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from reminders_ops.stackrefs import StackRefError, StackTarget, add_target_arguments

PRODUCER_COMMANDS = {"pause-producers": True, "resume-producers": False}
CONSUMER_COMMANDS = {"pause-consumers": True, "resume-consumers": False}
ESM_TYPE = "AWS::Lambda::EventSourceMapping"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--function",
        action="append",
        default=[],
        help="consumers only: just the mappings of this function (name or part of it); repeatable",
    )
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def _store(target: StackTarget, table: str | None) -> Any:
    from reminders.adapters.dynamodb import DynamoReminderStore

    return DynamoReminderStore(target.client("dynamodb"), table_name=table or target.table_name())


def update_controls(store: Any, **changes: Any) -> dict[str, Any]:
    """Set (or, with ``None``, remove) only these switches; the others stay as they are."""
    store.set_controls(changes)
    controls: dict[str, Any] = store.get_controls()
    return controls


def set_producers(target: StackTarget, paused: bool, table: str | None = None) -> dict[str, Any]:
    return update_controls(_store(target, table), producers_paused=paused)


def set_local_consumers(
    target: StackTarget, paused: bool, functions: list[str], table: str | None = None
) -> dict[str, Any]:
    store = _store(target, table)
    if not paused:
        if functions:
            current = store.get_controls().get("consumers_paused")
            left = [f for f in current if f not in functions] if isinstance(current, list) else []
            return update_controls(store, consumers_paused=left or None)
        return update_controls(store, consumers_paused=None)
    if functions:
        current = store.get_controls().get("consumers_paused")
        names = sorted({*(current if isinstance(current, list) else []), *functions})
        return update_controls(store, consumers_paused=names)
    return update_controls(store, consumers_paused=True)


def stack_mappings(target: StackTarget) -> list[dict[str, Any]]:
    """The stack's event source mappings (CloudFormation knows their UUIDs)."""
    cfn = target.client("cloudformation")
    lam = target.client("lambda")
    out = []
    for page in cfn.get_paginator("list_stack_resources").paginate(StackName=target.stack):
        for r in page["StackResourceSummaries"]:
            if r["ResourceType"] == ESM_TYPE:
                out.append(lam.get_event_source_mapping(UUID=r["PhysicalResourceId"]))
    return out


def function_name(arn: str) -> str:
    """The function's name in its ARN, qualified or not (``...:function:Name:live`` with SnapStart's
    alias, issue 32.2: the mappings then name the alias)."""
    parts = arn.split(":")
    return parts[6] if len(parts) > 6 and parts[5] == "function" else arn.rsplit(":", 1)[-1]


def set_aws_consumers(target: StackTarget, enabled: bool, functions: list[str]) -> list[dict[str, str]]:
    lam = target.client("lambda")
    changed = []
    for m in stack_mappings(target):
        fn = function_name(m["FunctionArn"])
        if functions and not any(f.lower() in fn.lower() for f in functions):
            continue
        resp = lam.update_event_source_mapping(UUID=m["UUID"], Enabled=enabled)
        changed.append(
            {"uuid": m["UUID"], "function": fn, "source": m["EventSourceArn"], "state": resp["State"]}
        )
    return changed


def run(args: argparse.Namespace) -> int:
    target = StackTarget.from_args(args)
    command = args.command
    try:
        if command in PRODUCER_COMMANDS:
            controls = set_producers(target, PRODUCER_COMMANDS[command], args.table)
            print(json.dumps({"controls": controls, "note": "API instances re-read controls within 15 s"}))
            return 0
        paused = CONSUMER_COMMANDS[command]
        if target.local:
            controls = set_local_consumers(target, paused, args.function, args.table)
            print(json.dumps({"controls": controls, "note": "the local runtime's pollers obey within 2 s"}))
            return 0
        changed = set_aws_consumers(target, not paused, args.function)
        if not changed:
            sys.stderr.write("no event source mapping of the stack matched\n")
            return 1
        print(json.dumps({"mappings": changed}, indent=2))
        return 0
    except StackRefError as exc:
        sys.stderr.write(f"reminders {command}: {exc}\n")
        return 2
