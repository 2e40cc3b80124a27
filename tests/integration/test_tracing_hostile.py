"""Review 31: what an AWS call's error puts into a trace. The X-Ray SDK's botocore patch records a
ClientError's message on the call's subsegment whatever Powertools' capture_error says; SES's
messages name the address they refuse."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.traced_ses_error import ADDRESS

ROOT = Path(__file__).resolve().parents[2]
TRACE_ID = "1-67a0b1c2-0123456789abcdef01234568"


def _segments(module: str) -> list[dict[str, Any]]:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(2.0)
    env = {
        **os.environ,
        "LAMBDA_TASK_ROOT": str(ROOT / "functions"),
        "AWS_LAMBDA_FUNCTION_NAME": "reminders-traced",
        "_X_AMZN_TRACE_ID": f"Root={TRACE_ID};Parent=53995c3f42cd8ad9;Sampled=1",
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{udp.getsockname()[1]}",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "POWERTOOLS_TRACE_DISABLED": "false",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    env.pop("POWERTOOLS_DEV", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        docs: list[dict[str, Any]] = []
        while True:
            try:
                data = udp.recv(65536)
            except TimeoutError:
                break
            docs.append(json.loads(data.decode().partition("\n")[2]))
        return docs
    finally:
        udp.close()


def test_trace_segments_carry_no_address_when_ses_refuses_naming_it() -> None:
    docs = _segments("tests.support.traced_ses_error")
    text = json.dumps(docs)
    assert "SendEmail" in text or "send_email" in text.lower(), "the SES call's subsegment was not emitted"
    assert ADDRESS not in text
    assert "MessageRejected" in text  # the error is still in the trace: its type, not its text
