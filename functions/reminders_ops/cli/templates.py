"""``reminders templates preview`` — render an account's template version with sample data (issue 30).

The version is read from the stack's table (``--account --template --version``), or from a file
holding the body a ``PUT /templates/{id}/versions/{n}`` takes (``--file``: write a version, see it,
then register it). The render is the one a send makes (the same sandboxed, bounded renderer, a pure
function of version, locale and data): it prints the locale chosen, the subject, the text and the
HTML. Nothing is written or sent. Works against the local emulator and real AWS alike.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..stackrefs import StackRefError, StackTarget, add_target_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["preview"])
    parser.add_argument("--account", help="the account id (with --template and --version)")
    parser.add_argument("--template", help="the template id")
    parser.add_argument("--version", type=int, help="the version number")
    parser.add_argument("--file", type=Path, help="a version as a PUT body (JSON), instead of a stored one")
    parser.add_argument("--data", default="{}", help="sample data, a JSON object (default {})")
    parser.add_argument("--locale", help="the reminder's locale (BCP 47); default: the version's default")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of sections")
    parser.add_argument("--table", help="the table name (default: the stack's TableName output)")
    add_target_arguments(parser)


def _stored(args: argparse.Namespace) -> Any:
    from reminders.adapters.templates_store import DynamoTemplateStore

    target = StackTarget.from_args(args)
    store = DynamoTemplateStore(target.client("dynamodb"), args.table or target.table_name())
    return store.get(args.account, args.template, args.version)


def _from_file(path: Path) -> Any:
    from reminders.domain.templates import new_version
    from reminders.services.templating import check_sources

    body = json.loads(path.read_text())
    tv = new_version(
        str(body.get("account_id", "preview")),
        "preview",
        1,
        default_locale=body["default_locale"],
        locales=body["locales"],
        variables=body.get("variables") or {},
        webhook_rendered=bool(body.get("webhook_rendered", False)),
    )
    check_sources(tv)
    return tv


def preview(tv: Any, data: dict[str, Any], locale: str | None) -> dict[str, str]:
    from reminders.services.templating import render_version

    out = render_version(tv, locale, data)
    return {"locale": out.locale, "subject": out.subject, "text": out.text, "html": out.html}


def run(args: argparse.Namespace) -> int:
    from reminders.domain.errors import ValidationError
    from reminders.domain.templates import RenderError

    try:
        data = json.loads(args.data)
        if not isinstance(data, dict):
            raise ValueError("--data must be a JSON object")
        if args.file is not None:
            tv = _from_file(args.file)
        elif args.account and args.template and args.version:
            tv = _stored(args)
            if tv is None:
                print(
                    f"error: no version {args.version} of {args.template} for {args.account}", file=sys.stderr
                )
                return 1
        else:
            print("error: give --file, or --account, --template and --version", file=sys.stderr)
            return 2
        out = preview(tv, data, args.locale)
    except (ValidationError, RenderError, ValueError, KeyError, StackRefError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for name in ("locale", "subject", "text", "html"):
        print(f"--- {name}")
        print(out[name].rstrip("\n"))
    return 0
