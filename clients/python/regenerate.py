"""Regenerate ``src/reminders_client/generated`` from the API's own ``/openapi.json`` (issue 31).

    python clients/python/regenerate.py            # rewrite the generated package (``make client``)
    python clients/python/regenerate.py --into DIR # generate into DIR (the staleness test)

The document is what ``GET /openapi.json`` answers: the API function is invoked in-process with an
API Gateway event for that route (no AWS call). ``openapi-python-client`` (pinned in the project's
dev extra) generates offline; no post hooks run, so the output depends on the document alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE / "src" / "reminders_client" / "generated"
CONFIG = HERE / "openapi-python-client.yaml"


def openapi_document() -> dict[str, object]:
    import os

    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # the handler's cold-start lines
    from reminders.handlers.api import handler
    from reminders_ops.local.events import LambdaContext, http_api_event

    event = http_api_event(
        method="GET",
        raw_path="/openapi.json",
        raw_query="",
        headers={"host": "localhost"},
        body=b"",
        route_key="GET /openapi.json",
        path_parameters=None,
        source_ip="127.0.0.1",
        account_id="111111111111",
    )
    answer = handler(event, LambdaContext("api", 10.0))
    if answer.get("statusCode") != 200:
        raise SystemExit(f"GET /openapi.json answered {answer.get('statusCode')}")
    doc: dict[str, object] = json.loads(answer["body"])
    return doc


def generate(into: Path) -> None:
    """Generate the package into ``into`` (replaced)."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "openapi.json"
        spec.write_text(json.dumps(openapi_document(), indent=1, sort_keys=True))
        out = Path(tmp) / "generated"
        cli = Path(sys.executable).with_name("openapi-python-client")
        subprocess.run(
            [
                str(cli),
                "generate",
                "--path",
                str(spec),
                "--meta",
                "none",
                "--config",
                str(CONFIG),
                "--output-path",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        if into.exists():
            shutil.rmtree(into)
        shutil.copytree(out, into)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--into", type=Path, default=PACKAGE_DIR)
    args = parser.parse_args(argv)
    generate(args.into)
    print(f"generated {args.into}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
