"""``reminders`` — the operator CLI. A small dispatcher: each subcommand lives in its own module,
imported only when that subcommand runs, and provides ``add_arguments(parser)`` and ``run(args)``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "invoke": ("reminders_ops.invoke", "invoke one function of the synthesized template with an event"),
    "local": ("reminders_ops.local.cli", "run the whole stack locally (emulator, handlers, API, receiver)"),
    "dlq": ("reminders_ops.cli.dlq", "list dead-lettered messages with reasons; redrive a bounded batch"),
    "ses-events": (
        "reminders_ops.cli.ses_events",
        "list|redrive SES events the function never processed (rule DLQ, on-failure destination)",
    ),
    "endpoints": (
        "reminders_ops.cli.endpoints",
        "list|show|enable|disable endpoints by health (held, disabled)",
    ),
    "suppression": (
        "reminders_ops.cli.suppression",
        "list or remove an account's suppressed email addresses",
    ),
    "pause-producers": ("reminders_ops.cli.controls", "reject new reminders (503) until resumed"),
    "resume-producers": ("reminders_ops.cli.controls", "accept new reminders again"),
    "pause-consumers": ("reminders_ops.cli.controls", "stop the queue consumers without losing queued work"),
    "resume-consumers": ("reminders_ops.cli.controls", "start the queue consumers again"),
    "accounts": ("reminders_ops.cli.accounts", "grant|revoke|show the accounts an IAM principal may act for"),
    "explain": (
        "reminders_ops.cli.support",
        "explain a reminder: owner, attempts, why stopped, changes, next",
    ),
    "templates": (
        "reminders_ops.cli.templates",
        "preview an account's template version rendered with sample data",
    ),
    "preview": (
        "reminders_ops.cli.support",
        "what fires in the next minutes (due index and queues); changes nothing",
    ),
    "purge": (
        "reminders_ops.cli.support",
        "delete an account's reminders (bounded, resumable, no personal data logged)",
    ),
    "rewind-dispatch": (
        "reminders_ops.cli.dispatch_cursors",
        "set the due index's dispatch and watchdog cursors back to a minute (after a rollback)",
    ),
    "backfill-tags": (
        "reminders_ops.cli.backfill_tags",
        "rewrite older due-index entries (untagged, 8-char tag) with the account's tag (after the upgrade)",
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="reminders", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(sub)
            sub.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
