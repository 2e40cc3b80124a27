"""A fault-injecting HTTP proxy on 127.0.0.1, in front of moto server or the webhook receiver.

The project's real clients (botocore with ``adapters/clients.client_config``; the webhook adapter's
pinned connection) talk to it as they would to AWS or a receiver; it forwards each request upstream
and, as a seeded random draw decides, breaks the exchange the way networks and providers do:

| kind                  | upstream applied? | what the client sees                                      |
| --------------------- | ----------------- | --------------------------------------------------------- |
| ``drop_after_apply``  | yes               | the connection closes with no response                    |
| ``reset_before``      | no                | TCP reset right after the request was sent                |
| ``reset_after``       | yes               | TCP reset instead of the response                         |
| ``stall``             | yes               | nothing past its read timeout (the answer comes too late) |
| ``trickle``           | yes               | the response, a few bytes at a time                       |
| ``error_after_apply`` | yes               | 500 in the protocol's error shape                         |
| ``http_500``          | no                | 500 in the protocol's error shape                         |
| ``http_503``          | no                | 503 in the protocol's error shape                         |
| ``throttle``          | no                | the protocol's throttling error (webhook: 429)            |
| ``retry_after_past``  | no                | 429 + ``Retry-After`` as an HTTP-date in the past          |
| ``retry_after_huge``  | no                | 429 + ``Retry-After: 99999999999``                         |
| ``retry_after_nonascii`` | no             | 429 + ``Retry-After`` in Arabic-Indic digits (``١٢``)      |
| ``redirect``          | no                | 307 to the instance-metadata address                      |

Error shapes follow the wire protocol of the request: DynamoDB and SQS speak
``application/x-amz-json-1.0`` with ``__type`` (SQS also sets ``x-amzn-query-error``), SES v2 is
REST-JSON with ``x-amzn-ErrorType``; a webhook receiver answers plain JSON. Each exchange is logged
with its correlation (botocore's ``amz-sdk-invocation-id``, the SES ``delivery_key`` tag, or the
``webhook-id``) so the fault run can count what each fault cost: extra requests and delay.

Threads serve connections concurrently, so which request draws which fault depends on thread timing;
the draw itself is seeded. Nothing here binds anything but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

#: Every kind, in the order of the table above.
KINDS = (
    "drop_after_apply",
    "reset_before",
    "reset_after",
    "stall",
    "trickle",
    "error_after_apply",
    "http_500",
    "http_503",
    "throttle",
    "retry_after_past",
    "retry_after_huge",
    "retry_after_nonascii",
    "redirect",
)
#: Kinds that only make sense for a receiver honouring Retry-After (the webhook); AWS clients ignore it.
RETRY_AFTER_KINDS = ("retry_after_past", "retry_after_huge", "retry_after_nonascii")
#: Kinds after which the upstream has applied the request.
APPLIED = frozenset({"drop_after_apply", "reset_after", "stall", "trickle", "error_after_apply"})
MAX_HEADER_BYTES = 65536


@dataclass
class Exchange:
    """One request through the proxy, as its client saw it."""

    at: float  # wall-clock start (time.time())
    ended: float
    service: str  # dynamodb | sqs | sesv2 | webhook | other
    operation: str
    correlation: str  # retries of one call share it
    fault: str | None
    status: int | None  # what the client got (None: no response)


@dataclass
class ProxyStats:
    exchanges: list[Exchange] = field(default_factory=list)


def _service_of(headers: Mapping[str, str], path: str) -> tuple[str, str]:
    target = headers.get("x-amz-target", "")
    if target.startswith("DynamoDB_"):
        return "dynamodb", target.split(".", 1)[-1]
    if target.startswith("AmazonSQS."):
        return "sqs", target.split(".", 1)[-1]
    if path.startswith("/v2/email/"):
        return "sesv2", path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if "webhook-id" in headers:
        return "webhook", "POST"
    return "other", path.split("?", 1)[0]


def _correlation(service: str, headers: Mapping[str, str], body: bytes) -> str:
    if service == "webhook":
        return "webhook:" + headers.get("webhook-id", "")
    if service == "sesv2":
        try:
            tags = {t["Name"]: t["Value"] for t in json.loads(body or b"{}").get("EmailTags", [])}
        except (ValueError, TypeError, KeyError):
            tags = {}
        if "delivery_key" in tags:  # a re-send by our retry policy is a new call with the same key
            return "email:" + tags["delivery_key"]
    return "sdk:" + headers.get("amz-sdk-invocation-id", "")


def error_response(service: str, kind: str, now: datetime) -> tuple[int, dict[str, str], bytes]:
    """The answer of an injected error in the request's own wire protocol."""
    status = {"http_500": 500, "error_after_apply": 500, "http_503": 503, "redirect": 307}.get(kind, 429)
    if kind == "redirect":
        return status, {"location": "http://169.254.169.254/latest/meta-data/"}, b""
    if service == "webhook":
        headers = {"content-type": "application/json"}
        if kind == "retry_after_past":
            headers["retry-after"] = format_datetime(now - timedelta(days=3), usegmt=True)
        elif kind == "retry_after_huge":
            headers["retry-after"] = "99999999999"
        elif kind == "retry_after_nonascii":
            headers["retry-after"] = "\u0661\u0662"  # "١٢": Arabic-Indic twelve
        elif kind == "throttle":
            headers["retry-after"] = "2"
        return status, headers, b'{"error":"injected"}'
    if service in ("dynamodb", "sqs"):
        if status == 429:  # DynamoDB and SQS throttle with a 400 and an error type
            status = 400
        prefix = "com.amazonaws.dynamodb.v20120810#" if service == "dynamodb" else "com.amazonaws.sqs#"
        code = {
            500: "InternalServerError" if service == "dynamodb" else "InternalError",
            503: "ServiceUnavailable",
            400: "ThrottlingException",
        }[status]
        headers = {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "injected"}
        if service == "sqs":
            headers["x-amzn-query-error"] = f"{code};{'Sender' if status == 400 else 'Receiver'}"
        body = json.dumps({"__type": prefix + code, "message": "injected by the fault proxy"}).encode()
        return status, headers, body
    code = {500: "InternalFailure", 503: "ServiceUnavailable", 429: "TooManyRequestsException"}[status]
    headers = {
        "content-type": "application/json",
        "x-amzn-errortype": f"{code}:http://internal.amazon.com/coral/com.amazonaws.sesv2/",
        "x-amzn-requestid": "injected",
    }
    return status, headers, json.dumps({"message": "injected by the fault proxy"}).encode()


class FaultProxy:
    """``FaultProxy(upstream_port, rates={"stall": 0.01, ...}, seed=7)``; ``with proxy: ...``.

    ``rates`` are per request; ``services`` limits faults to some services and ``operations`` to some
    operations (``UpdateItem``, ...; others pass through). ``stall_seconds`` must exceed the client's
    read timeout; ``active`` turns injection on and off."""

    def __init__(
        self,
        upstream_port: int,
        *,
        rates: Mapping[str, float],
        seed: int,
        name: str = "proxy",
        stall_seconds: float = 3.0,
        trickle_seconds: float = 1.0,
        services: frozenset[str] | None = None,
        upstream_host: str = "127.0.0.1",
        on_applied: Callable[[str, str, bytes, int, bytes], None] | None = None,
        forced: Sequence[str] = (),
        operations: frozenset[str] | None = None,
    ) -> None:
        unknown = set(rates) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")
        self.upstream = (upstream_host, upstream_port)
        self.rates = dict(rates)
        self.rng = random.Random(seed)
        self.forced = list(forced)  # injected first, in order, one per eligible request (short runs)
        self.name = name
        self.stall_seconds = stall_seconds
        self.trickle_seconds = trickle_seconds
        self.services = services
        self.operations = operations
        self.on_applied = on_applied  # (service, operation, request body, upstream status, upstream body)
        self.active = True
        self.stats = ProxyStats()
        self.lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FaultProxy:
        self.thread = threading.Thread(target=self.server.serve_forever, name=self.name, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection ----------------------------------------------------------------------------
    def _draw(self, service: str, operation: str = "") -> str | None:
        if not self.active or (self.services is not None and service not in self.services):
            return None
        if self.operations is not None and operation not in self.operations:
            return None
        with self.lock:
            for i, kind in enumerate(self.forced):
                if service == "webhook" or kind not in RETRY_AFTER_KINDS:
                    return self.forced.pop(i)
            u = self.rng.random()
        for kind, rate in self.rates.items():
            if service != "webhook" and kind in RETRY_AFTER_KINDS:
                continue
            if u < rate:
                return kind
            u -= rate
        return None

    def _serve(self, sock: socket.socket) -> None:
        reader = sock.makefile("rb")
        try:
            while True:
                request = _read_request(reader)
                if request is None:
                    return
                if not self._exchange(sock, *request):
                    return
        except (OSError, ValueError):
            return
        finally:
            reader.close()
            with contextlib.suppress(OSError):
                sock.close()

    def _exchange(
        self, sock: socket.socket, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> bool:
        """Serve one request; False when the connection is finished."""
        service, operation = _service_of(headers, path)
        fault = self._draw(service, operation)
        ex = Exchange(time.time(), 0.0, service, operation, _correlation(service, headers, body), fault, None)
        with self.lock:  # logged before the client can see anything: its retry is logged after it
            self.stats.exchanges.append(ex)
        try:
            if fault == "reset_before":
                _reset(sock)
                return False
            if fault in ("http_500", "http_503", "throttle", "redirect", *RETRY_AFTER_KINDS):
                status, h, b = error_response(service, fault, datetime.now(UTC))
                ex.status = status
                sock.sendall(_render(status, h, b))
                return True
            up_status, up_headers, up_body = self._forward(method, path, headers, body)
            if self.on_applied is not None:
                self.on_applied(service, operation, body, up_status, up_body)
            if fault == "drop_after_apply":
                sock.shutdown(socket.SHUT_RDWR)
                return False
            if fault == "reset_after":
                _reset(sock)
                return False
            if fault == "error_after_apply":
                status, h, b = error_response(service, fault, datetime.now(UTC))
                ex.status = status
                sock.sendall(_render(status, h, b))
                return True
            raw = _render(up_status, up_headers, up_body)
            if fault == "stall":
                time.sleep(self.stall_seconds)
                with contextlib.suppress(OSError):
                    sock.sendall(raw)  # long after the client gave up; the answer reaches no one
                return False
            ex.status = up_status
            if fault == "trickle":
                pieces = 12
                step = max(1, len(raw) // pieces + 1)
                for i in range(0, len(raw), step):
                    sock.sendall(raw[i : i + step])
                    time.sleep(self.trickle_seconds / pieces)
                return True
            sock.sendall(raw)
            return True
        finally:
            ex.ended = time.time()

    def _forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            out = {k: v for k, v in headers.items() if k not in ("connection", "keep-alive")}
            conn.request(method, path, body=body, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            hop = {"connection", "keep-alive", "transfer-encoding", "content-length"}
            return resp.status, {k.lower(): v for k, v in resp.getheaders() if k.lower() not in hop}, data
        except OSError:
            return 502, {"content-type": "application/json"}, b'{"error":"upstream unreachable"}'
        finally:
            conn.close()

    # -- what each fault cost ------------------------------------------------------------------------
    def costs(self) -> dict[str, dict[str, float]]:
        """Per fault kind: injected, extra requests (later requests of the same call or delivery key)
        and delay (from the fault to the first later success of the same correlation), in seconds."""
        with self.lock:
            exchanges = list(self.stats.exchanges)
        by_corr: dict[str, list[Exchange]] = {}
        for ex in sorted(exchanges, key=lambda e: e.at):
            by_corr.setdefault(ex.correlation, []).append(ex)
        out: dict[str, dict[str, float]] = {}
        for chain in by_corr.values():
            for i, ex in enumerate(chain):
                if ex.fault is None:
                    continue
                row = out.setdefault(
                    f"{ex.service}.{ex.fault}", {"injected": 0, "extra_requests": 0, "delay_seconds": 0.0}
                )
                row["injected"] += 1
                later = chain[i + 1 :]
                nxt = next((j for j, e in enumerate(later) if e.fault is not None), len(later))
                row["extra_requests"] += nxt  # until the next fault takes over the blame
                ok = next(
                    (e for e in later[:nxt] if (e.status is not None and e.status < 300) or e.status == 409),
                    None,
                )
                if ok is not None:
                    row["delay_seconds"] += ok.ended - ex.at
        return out

    def injected(self) -> dict[str, int]:
        with self.lock:
            exchanges = list(self.stats.exchanges)
        counts: dict[str, int] = {}
        for ex in exchanges:
            if ex.fault:
                key = f"{ex.service}.{ex.fault}"
                counts[key] = counts.get(key, 0) + 1
        return counts


def _reset(sock: socket.socket) -> None:
    """Close with SO_LINGER 0: the peer gets a TCP RST, not a FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def _render(status: int, headers: Mapping[str, str], body: bytes) -> bytes:
    reason = http.client.responses.get(status, "Unknown")
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"content-length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")
    return head + body


def _read_request(reader: Any) -> tuple[str, str, dict[str, str], bytes] | None:
    line = reader.readline(MAX_HEADER_BYTES)
    if not line:
        return None
    parts = line.decode("latin-1").rstrip("\r\n").split(" ")
    if len(parts) != 3:
        raise ValueError("bad request line")
    method, path, _ = parts
    headers: dict[str, str] = {}
    while True:
        h = reader.readline(MAX_HEADER_BYTES)
        if not h or h in (b"\r\n", b"\n"):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = reader.read(length) if length else b""
    return method, path, headers, body
