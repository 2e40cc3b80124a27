"""Issue 31 end to end: the typed client against ``reminders local`` (SigV4 verified there), and the
README's receiver, unchanged, receiving the webhook, verifying it and posting a signed receipt."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from botocore.credentials import Credentials
from reminders_client import Conflict, Forbidden, PreconditionFailed, RemindersClient
from reminders_ops.local.sigv4 import OPERATOR, credentials_for

from tests.e2e.local_process import free_port, local_runtime

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "acct-client-e2e"
TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-0[01]$")


def readme_receiver() -> str:
    text = (ROOT / "clients" / "python" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    code = next(b for b in blocks if "Receiver(" in b)
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) < 30, "the README's receiver is a complete one in < 30 lines"
    return code


def wait_for(predicate, what: str, rounds: int = 120):  # type: ignore[no-untyped-def]
    for _ in range(rounds):
        got = predicate()
        if got:
            return got
        time.sleep(0.5)
    pytest.fail(f"never: {what}")


def test_client_schedules_corrects_lists_and_cancels_against_the_local_runtime(tmp_path: Path) -> None:
    with local_runtime(tmp_path) as info:
        api = info["api"]
        client = RemindersClient(
            api, credentials=Credentials(OPERATOR.access_key_id, OPERATOR.secret_access_key)
        )

        port = free_port()
        endpoint = client.create_endpoint({"account_id": ACCOUNT, "url": f"http://127.0.0.1:{port}/hook"})
        assert endpoint.secret.startswith("whsec_")
        assert client.get_endpoint(endpoint.id).url == f"http://127.0.0.1:{port}/hook"
        receiver_code = tmp_path / "receiver.py"
        receiver_code.write_text(readme_receiver())
        out = open(tmp_path / "receiver.out", "w+")  # noqa: SIM115
        env = {**os.environ, "WEBHOOK_SECRETS": endpoint.secret, "REMINDERS_API": api, "PORT": str(port)}
        proc = subprocess.Popen(
            [sys.executable, str(receiver_code)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
            new = {
                "account_id": ACCOUNT,
                "key": "client-e2e:1",
                "kind": "renewal",
                "due_at": later,
                "template": {"id": "renewal", "version": 1},
                "channels": [{"type": "webhook", "endpoint_id": endpoint.id}],
                "data": {"plan": "pro"},
            }
            created = client.create(new)
            assert client.create(new).id == created.id  # the business key: the same reminder
            got = client.get(created.id)
            assert got.state == "scheduled" and got.version == created.version

            with pytest.raises(PreconditionFailed) as stale:
                client.correct(created.id, {"due_at": later}, if_match=created.version + 7)
            assert stale.value.field == "If-Match"
            corrected = client.correct(
                created.id, {"due_at": datetime.now(UTC).isoformat()}, if_match=got.version
            )
            assert corrected.version > got.version

            line = wait_for(
                lambda: (out.seek(0), out.read())[1].strip(), "the README receiver got the webhook"
            )
            reminder_id, traceparent = line.splitlines()[0].split()
            assert reminder_id == created.id
            assert TRACEPARENT.match(traceparent), traceparent  # the send's trace (unsampled locally)
            done = wait_for(
                lambda: (d := client.get(created.id).deliveries[0]).receiver_receipt and d,
                "the receiver's signed receipt recorded",
            )
            assert done.state == "delivered" and str(done.receiver_receipt).startswith("p|")

            other = client.create({**new, "key": "client-e2e:2", "due_at": later})
            assert client.cancel(other.id).state == "canceled"
            with pytest.raises(Conflict):  # a second cancel (not a retry of the first) is refused
                client.cancel(other.id)
            assert list(client.attention(ACCOUNT, page_size=1)) == []

            wrong = RemindersClient(api, credentials=Credentials(OPERATOR.access_key_id, "not-the-secret"))
            with pytest.raises(Forbidden) as refused:
                wrong.get(created.id)
            assert "signature" in refused.value.message
            stranger = credentials_for("arn:aws:iam::222222222222:role/stranger")
            outsider = RemindersClient(
                api, credentials=Credentials(stranger.access_key_id, stranger.secret_access_key)
            )
            with pytest.raises((Forbidden, PreconditionFailed, Exception)) as not_theirs:
                outsider.get(created.id)
            assert getattr(not_theirs.value, "status", None) in (403, 404)
        finally:
            proc.terminate()
            proc.wait(10)
            out.close()
