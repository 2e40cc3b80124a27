"""A local webhook receiver that behaves like a well-built Standard Webhooks consumer.

It verifies signatures (constant time, timestamp tolerance), deduplicates by ``webhook-id``
(answering 409 to an id it has already accepted), records accepted sends and raw POSTs per key, and
can be told to answer 429 (with Retry-After), 5xx, 4xx or to hang — before or after accepting.
Used by the local runtime, the failure matrix and the fault run. Binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Behaviour:
    """One scripted answer. ``accept`` records the send before answering (timeouts after acceptance)."""

    status: int = 200
    retry_after: str | None = None
    hang_seconds: float = 0.0
    accept: bool | None = None  # default: accept exactly when 2xx
    steering: str | None = None  # a ``webhook-delivery`` response header (issue 16: abort, disable)

    def accepts(self) -> bool:
        return self.accept if self.accept is not None else 200 <= self.status < 300


@dataclass
class ReceiverState:
    accepted: Counter[str] = field(default_factory=Counter)  # accepted sends per webhook-id
    posts: Counter[str] = field(default_factory=Counter)  # raw POSTs per webhook-id
    rejected_signatures: int = 0
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=200))
    scripts: dict[str, deque[Behaviour]] = field(default_factory=dict)  # per key (or "*")
    default: Behaviour = field(default_factory=Behaviour)
    bodies: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, list[str]] = field(default_factory=dict)  # webhook-signature per POST, per key
    last_post: dict[str, tuple[bytes, dict[str, str]]] = field(default_factory=dict)  # body, headers


class WebhookReceiver:
    def __init__(
        self, secret: str, *, port: int = 0, tolerance_seconds: int = 300, host: str = "127.0.0.1"
    ) -> None:
        self.secret = secret
        self.host = host
        self.verifier = Webhook(secret)
        self.tolerance = tolerance_seconds
        self.state = ReceiverState()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                body = json.dumps(receiver.snapshot()).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PUT(self) -> None:  # script behaviours over HTTP: {"key": "*", "behaviours": [...]}
                length = int(self.headers.get("content-length", "0"))
                spec = json.loads(self.rfile.read(length) or b"{}")
                receiver.script(spec.get("key", "*"), [Behaviour(**b) for b in spec.get("behaviours", [])])
                if "default" in spec:
                    receiver.state.default = Behaviour(**spec["default"])
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                status, headers, hang = receiver.handle(raw, {k.lower(): v for k, v in self.headers.items()})
                if hang:
                    time.sleep(hang)
                body = b"{}"
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.server.server_address[1]}"

    def start(self) -> WebhookReceiver:
        self.thread = threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, key: str, behaviours: list[Behaviour]) -> None:
        with self.lock:
            self.state.scripts.setdefault(key, deque()).extend(behaviours)

    def reset_scripts(self) -> None:
        with self.lock:
            self.state.scripts.clear()
            self.state.default = Behaviour()

    def use_secret(self, secret: str) -> None:
        """Verify with another secret from now on (an endpoint's own, after a create or rotation)."""
        with self.lock:
            self.secret = secret
            self.verifier = Webhook(secret)

    def signed_by(self, secret: str, key: str) -> bool:
        """Whether the last POST for ``key`` verifies with ``secret``: its own bytes, signature and
        timestamp (a check against "now" would fail whenever the second turned in between)."""
        with self.lock:
            raw, headers = self.state.last_post[key]
        try:
            Webhook(secret).verify(raw, headers)
        except WebhookVerificationError:
            return False
        return True

    def handle(self, raw: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], float]:
        with self.lock:
            sigs = self.state.signatures.setdefault(headers.get("webhook-id", ""), [])
            sigs.append(headers.get("webhook-signature", ""))
            del sigs[:-20]
            self.state.last_post[headers.get("webhook-id", "")] = (raw, dict(headers))
        try:
            self.verifier.verify(raw, headers)
        except WebhookVerificationError:
            with self.lock:
                self.state.rejected_signatures += 1
            return 401, {}, 0.0
        key = headers.get("webhook-id", "")
        with self.lock:
            self.state.posts[key] += 1
            script = self.state.scripts.get(key) or self.state.scripts.get("*")
            behaviour = script.popleft() if script else self.state.default
            if self.state.accepted[key] and behaviour.accepts():
                self.state.events.append({"key": key, "status": 409, "note": "duplicate webhook-id"})
                return 409, {}, 0.0
            if behaviour.accepts():
                self.state.accepted[key] += 1
                self.state.bodies[key] = raw.decode()
            self.state.events.append(
                {"key": key, "status": behaviour.status, "accepted": behaviour.accepts()}
            )
        headers_out = {"retry-after": behaviour.retry_after} if behaviour.retry_after else {}
        if behaviour.steering:
            headers_out["webhook-delivery"] = behaviour.steering
        if behaviour.accepts():
            headers_out["webhook-receipt"] = f"rcpt-{key[-12:]}-{self.state.posts[key]}"
        return behaviour.status, headers_out, behaviour.hang_seconds

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "accepted": dict(self.state.accepted),
                "posts": dict(self.state.posts),
                "rejected_signatures": self.state.rejected_signatures,
                "duplicates_accepted": sum(max(0, n - 1) for n in self.state.accepted.values()),
                "events": list(self.state.events),
            }
