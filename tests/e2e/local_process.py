"""Start ``reminders local`` in a subprocess on free ports, wait until it is ready, always stop it.

Tests talk to it only over HTTP: the API, the webhook receiver, and the emulator's endpoint through
the operator CLI (itself a subprocess).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "cdk.out" / "RemindersStack.template.json"
READY_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http(method: str, url: str, body: Any = None, timeout: float = 15.0) -> tuple[int, Any]:
    from reminders_ops.local.sigv4 import sign

    data = json.dumps(body).encode() if body is not None else None
    # Signed as the local operator (the bootstrap principal): the local API verifies SigV4.
    headers = sign(method, url, body=data or b"", headers={"content-type": "application/json"})
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, (json.loads(raw) if raw else None)


def cli(*args: str, endpoint: str, timeout: float = 60.0) -> Any:
    """The operator CLI against the runtime's emulator (``--json`` output parsed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "reminders_ops.cli", *args, "--endpoint-url", endpoint, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@contextlib.contextmanager
def local_runtime(tmp: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    if not TEMPLATE.exists():
        pytest.skip(f"{TEMPLATE} missing: run `make synth`")
    ready = tmp / "ready.json"
    log = tmp / "handlers.log"
    out = tmp / "stdout.txt"
    args = [
        sys.executable,
        "-m",
        "reminders_ops.cli",
        "local",
        "--no-demo",
        "--no-view",
        "--no-synth",
        "--port",
        str(free_port()),
        "--template",
        str(TEMPLATE),
        "--ready-file",
        str(ready),
        "--log-file",
        str(log),
        "--parent-pid",
        str(os.getpid()),
        *extra,
    ]
    for k, v in (env or {}).items():
        args += ["--env", f"{k}={v}"]
    with open(out, "w") as stdout:
        proc = subprocess.Popen(
            args,
            stdout=stdout,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
            env=dict(os.environ),
        )
        try:
            deadline = time.monotonic() + READY_TIMEOUT_SECONDS
            while not ready.exists():
                if proc.poll() is not None:
                    pytest.fail(f"reminders local exited with {proc.returncode}:\n{out.read_text()[-3000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"reminders local not ready in {READY_TIMEOUT_SECONDS}s:\n{out.read_text()[-3000:]}"
                    )
                time.sleep(0.2)
            info = json.loads(ready.read_text())
            info["_stdout"] = out
            info["_log"] = log
            yield info
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM (a clean stop), then the whole process group if it does not go."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
