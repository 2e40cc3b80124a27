"""Issue 31 item 4: traces from create to send. Every outbound webhook carries a W3C
``traceparent``; in a traced Lambda environment the send's segment carries the reminder id and the
delivery key as annotations, its trace is the one of the ``traceparent``, and nothing personal is in
any segment the SDK emits (captured from its UDP emitter on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET
from reminders_ops.local.receiver import WebhookReceiver

from tests.support.traced_run import KEY, PERSONAL

ROOT = Path(__file__).resolve().parents[2]
TRACEPARENT = re.compile(r"^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-(0[01])$")
TRACE_ID = "1-67a0b1c2-0123456789abcdef01234567"


def _send_one(url: str) -> dict[str, str]:
    from tests.integration.test_webhook_adapter import make, render, sender

    d, r = make(url)
    # Signed now: the receiver checks the timestamp against its clock (±5 min), and the suite may
    # reach this test long after it imported the adapter tests' NOW (it failed so under load).
    result = sender(now=datetime.now(UTC)).send(d, r, render(r, d))
    assert result.status == 200
    return d.key  # type: ignore[return-value]


def test_webhook_carries_a_wellformed_traceparent_when_not_traced() -> None:
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as receiver:
        key = _send_one(receiver.url + "/hooks")
        _body, headers = receiver.state.last_post[str(key)]
    header = {k.lower(): v for k, v in headers.items()}.get("traceparent", "")
    m = TRACEPARENT.match(header)
    assert m, header
    assert m.group(3) == "00"  # no X-Ray trace: a fresh, unsampled one


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The traced run and every segment document its X-Ray SDK emitted."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(2.0)
    port = udp.getsockname()[1]
    env = {
        **os.environ,
        "LAMBDA_TASK_ROOT": str(ROOT / "functions"),
        "AWS_LAMBDA_FUNCTION_NAME": "reminders-traced",
        "_X_AMZN_TRACE_ID": f"Root={TRACE_ID};Parent=53995c3f42cd8ad8;Sampled=1",
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{port}",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "POWERTOOLS_TRACE_DISABLED": "false",
    }
    env.pop("POWERTOOLS_DEV", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.support.traced_run"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        run = json.loads(proc.stdout.strip().splitlines()[-1])
        docs: list[dict[str, Any]] = []
        while True:
            try:
                data = udp.recv(65536)
            except TimeoutError:
                break
            header, _, body = data.decode().partition("\n")
            assert json.loads(header)["format"] == "json"
            docs.append(json.loads(body))
        yield run, docs
    finally:
        udp.close()


def _all(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for d in docs:
        stack = [d]
        while stack:
            s = stack.pop()
            yield s
            stack.extend(s.get("subsegments", []))


def test_send_segment_carries_reminder_id_and_delivery_key_when_traced(traced: Any) -> None:
    run, docs = traced
    annotated = [s for s in _all(docs) if s.get("annotations", {}).get("delivery_key") == run["delivery_key"]]
    assert annotated, [s.get("name") for s in _all(docs)]
    assert all(s["annotations"]["reminder_id"] == run["reminder_id"] for s in annotated)
    created = [s for s in _all(docs) if s.get("annotations", {}).get("reminder_id") == run["reminder_id"]]
    assert len(created) > len(annotated)  # the create's segment carries the reminder id too (the join)


def test_traceparent_carries_the_trace_and_segment_of_the_send_when_traced(traced: Any) -> None:
    run, docs = traced
    header = {k.lower(): v for k, v in run["headers"].items()}.get("traceparent", "")
    m = TRACEPARENT.match(header)
    assert m, header
    assert m.group(1) == TRACE_ID[2:].replace("-", "") and m.group(3) == "01"
    send = [s for s in _all(docs) if s.get("annotations", {}).get("delivery_key") == run["delivery_key"]]
    assert m.group(2) in {s["id"] for s in send}


def test_email_receipt_and_stream_segments_carry_the_ids_when_traced(traced: Any) -> None:
    """The email send (as the webhook's), a receipt merged and a stream record processed: each its
    own subsegment annotated with the ids it concerns, so X-Ray joins them to the create's."""
    run, docs = traced
    named = {}
    for s in _all(docs):
        if s.get("name") in {"## email send", "## receipt merge", "## operational events record"}:
            named.setdefault(s["name"], []).append(s.get("annotations", {}))
    assert named.get("## email send") == [
        {"reminder_id": run["email_reminder_id"], "delivery_key": run["email_delivery_key"]}
    ], named
    assert named.get("## receipt merge") == [
        {"reminder_id": run["reminder_id"], "delivery_key": run["delivery_key"]}
    ], named
    assert named.get("## operational events record") == [{"reminder_id": run["reminder_id"]}], named


def test_trace_segments_carry_nothing_personal_when_traced(traced: Any) -> None:
    _run, docs = traced
    assert docs, "no segment emitted"
    text = json.dumps(docs)
    for secret in [*PERSONAL.values(), KEY, "acct-traced", "/hooks", DEV_WEBHOOK_SECRET]:
        assert secret not in text
