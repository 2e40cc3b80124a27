"""moto in server mode, in this process, bound to 127.0.0.1.

The handlers reach it over HTTP like any AWS endpoint (``AWS_ENDPOINT_URL``); nothing here uses
``mock_aws`` (in the same process it would wipe the server's state).
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_SESSION_TOKEN": "local",
}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class Emulator:
    def __init__(self, *, account_id: str, region: str, port: int = 0, host: str = "127.0.0.1") -> None:
        self.account_id = account_id
        self.region = region
        self.host = host
        self.port = port
        self._server: Any = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def environment(self) -> dict[str, str]:
        """What every client in this process needs to talk to the emulator and nothing else."""
        return {
            **FAKE_CREDENTIALS,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
            "AWS_ENDPOINT_URL": self.endpoint,
            "MOTO_ACCOUNT_ID": self.account_id,
        }

    def start(self) -> Emulator:
        # Before the first request: moto answers for this account, clients sign with fake keys.
        os.environ.update(self.environment())
        for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
            os.environ.pop(name, None)
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        from moto.server import ThreadedMotoServer

        from .faithful import faithful_moto

        faithful_moto()  # atomic conditional writes, prompt long polls (see faithful.py)
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        self.port = int(self._server.get_host_and_port()[1])
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=self.region)  # type: ignore[call-overload]

    def ses_sent_count(self) -> int:
        """Emails the emulator's SES accepted (moto keeps every message; SES v2 sends land in its
        SES backend). Read in-process: ``GetSendQuota`` counts recipients, twice for raw emails."""
        from moto.backends import get_backend

        return len(get_backend("ses")[self.account_id][self.region].sent_messages)

    def ses_raw_messages(self) -> list[bytes]:
        """The raw MIME of every email the emulator's SES accepted, oldest first (a mailbox to read
        List-Unsubscribe links from, as a recipient's mail client would)."""
        from moto.backends import get_backend

        out: list[bytes] = []
        for m in get_backend("ses")[self.account_id][self.region].sent_messages:
            raw = getattr(m, "raw_data", None)
            if raw is not None:
                out.append(raw.encode() if isinstance(raw, str) else bytes(raw))
        return out
