"""The HTTP API on localhost: each request becomes an API Gateway HTTP API (payload 2.0) proxy
event for the function the template routes it to; the function's response becomes the HTTP
response. Route matching follows API Gateway: the most specific route wins, ``{name}`` is one
path segment, ``{name+}`` the rest, ``ANY`` any method, ``$default`` everything else.

IAM authorization is emulated: an ``AWS_IAM`` route verifies SigV4 (:mod:`.sigv4`, botocore's
signer) and answers 403 as API Gateway does; the caller is the principal of the signing key.
``sigv4=False`` (in-process harnesses only: the API fuzz, benches) trusts ``x-reminders-principal``.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .events import http_api_event
from .lambdas import LocalFunction
from .sigv4 import LocalIam, Refused
from .spec import RouteSpec

#: With ``sigv4=False`` only: the caller's IAM principal ARN, taken from this header.
PRINCIPAL_HEADER = "x-reminders-principal"
#: Without the header (and with no BOOTSTRAP_PRINCIPAL configured), the local operator.
LOCAL_PRINCIPAL = "arn:aws:iam::111111111111:role/reminders-operator"

log = logging.getLogger("reminders_ops.local")
#: The methods an HTTP API route can name; any other reaches no route (API Gateway: 404 JSON).
HTTP_API_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class _Route:
    spec: RouteSpec
    method: str  # "ANY" or an HTTP method; "" for $default
    pattern: re.Pattern[str] | None
    params: tuple[str, ...]
    literal_segments: int
    greedy: bool


def _compile(spec: RouteSpec) -> _Route:
    if spec.route_key == "$default":
        return _Route(spec, "", None, (), -1, True)
    method, _, path = spec.route_key.partition(" ")
    regex = ""
    params: list[str] = []
    literal = 0
    greedy = False
    for seg in path.strip("/").split("/") if path.strip("/") else []:
        m = re.fullmatch(r"\{([A-Za-z0-9_.\-]+)(\+?)\}", seg)
        if m and m.group(2):
            regex += f"/(?P<p{len(params)}>.+)"
            params.append(m.group(1))
            greedy = True
        elif m:
            regex += f"/(?P<p{len(params)}>[^/]+)"
            params.append(m.group(1))
        else:
            regex += "/" + re.escape(seg)
            literal += 1
    return _Route(
        spec, method.upper(), re.compile("^" + (regex or "/") + "/?$"), tuple(params), literal, greedy
    )


class RouteTable:
    def __init__(self, routes: list[RouteSpec]) -> None:
        self.routes = [_compile(r) for r in routes]

    def match(self, method: str, path: str) -> tuple[RouteSpec, dict[str, str]] | None:
        best: tuple[tuple[int, int, int], RouteSpec, dict[str, str]] | None = None
        default: RouteSpec | None = None
        for r in self.routes:
            if r.pattern is None:
                default = r.spec
                continue
            if r.method not in ("ANY", method):
                continue
            m = r.pattern.match(path)
            if not m:
                continue
            params = {name: m.group(f"p{i}") for i, name in enumerate(r.params)}
            rank = (r.literal_segments, 0 if r.greedy else 1, 1 if r.method == method else 0)
            if best is None or rank > best[0]:
                best = (rank, r.spec, params)
        if best is not None:
            return best[1], best[2]
        if default is not None:
            return default, {}
        return None


def to_http(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """A payload-2.0 Lambda response as (status, headers, body), as API Gateway maps it."""
    if not isinstance(result, dict) or "statusCode" not in result:
        body = json.dumps(result).encode()
        return 200, [("content-type", "application/json")], body
    headers: list[tuple[str, str]] = [(k, str(v)) for k, v in (result.get("headers") or {}).items()]
    for k, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((k, str(v)) for v in values)
    headers.extend(("set-cookie", c) for c in result.get("cookies") or [])
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode()
    return int(result["statusCode"]), headers, body


class HttpApi:
    """A threaded HTTP server bound to 127.0.0.1 in front of the API functions, which it calls one
    request at a time (one Lambda instance)."""

    def __init__(
        self,
        routes: list[RouteSpec],
        functions: dict[str, LocalFunction],
        *,
        account_id: str,
        port: int = 0,
        host: str = "127.0.0.1",
        default_principal: str = "",
        sigv4: bool = True,
        region: str = "us-east-1",
    ) -> None:
        self.table = RouteTable(routes)
        self.default_principal = default_principal or LOCAL_PRINCIPAL
        self.iam = LocalIam(region=region, operator_principal=self.default_principal) if sigv4 else None
        self.functions = functions
        self.account_id = account_id
        self.requests = 0
        self.errors = 0
        # One request at a time into the API functions, as one Lambda instance runs them: the server
        # reads, verifies and answers requests on threads, but a handler may keep the request it is
        # resolving on shared objects, as Lambda allows — Powertools puts it on the ``BaseRouter``
        # class (process-wide, whichever resolver) and the route's context on the module-level
        # ``app``, so two concurrent calls would read each other's event and caller (one account
        # acting as another). One lock for every API function, not one each: the class attribute is
        # process-wide, and PublicFunction resolves with the API function's own ``app``.
        self._invoke_lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "reminders-local-api"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _serve(self) -> None:
                try:
                    length = int(self.headers.get("content-length") or 0)
                except ValueError:
                    length = -1
                if length < 0:
                    self.send_error(400, "Bad Request")
                    return
                body = self.rfile.read(length) if length else b""
                status, headers, out = api.handle(
                    self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
                )
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _serve

            def __getattr__(self, name: str) -> Any:
                """Any other method (TRACE, PROPFIND, …) is served too, as API Gateway answers it
                (404 JSON), not with http.server's 501 HTML page."""
                if name.startswith("do_"):
                    return self._serve
                raise AttributeError(name)

            def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
                """What http.server refuses itself (a malformed request line or header): a JSON 4xx."""
                status = code if 400 <= code < 500 else 400
                body = json.dumps({"message": message or "Bad Request"}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                self.close_connection = True

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="http-api", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> HttpApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread.is_alive():
            self._thread.join(5)

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        self.requests += 1
        parts = urlsplit(target)
        path = parts.path or "/"
        matched = self.table.match(method.upper(), path) if method.upper() in HTTP_API_METHODS else None
        if matched is None:
            return 404, [("content-type", "application/json")], b'{"message":"Not Found"}'
        route, params = matched
        principal = self.default_principal
        if route.authorization == "AWS_IAM" and self.iam is not None:
            host = {k.lower(): v for k, v in headers.items()}.get("host") or self.url.split("//", 1)[1]
            try:
                principal = self.iam.verify(method.upper(), f"http://{host}{target}", headers, body)
            except Refused as exc:
                return (
                    403,
                    [("content-type", "application/json")],
                    json.dumps({"message": exc.message}).encode(),
                )
        elif route.authorization == "AWS_IAM":
            principal = {k.lower(): v for k, v in headers.items()}.get(PRINCIPAL_HEADER) or principal
        event = http_api_event(
            method=method.upper(),
            raw_path=path,
            raw_query=parts.query,
            headers=headers,
            body=body,
            route_key=route.route_key,
            path_parameters=params or None,
            source_ip=source_ip,
            account_id=self.account_id,
        )
        if route.authorization == "AWS_IAM":
            # API Gateway puts the SigV4 caller here.
            event["requestContext"]["authorizer"] = {
                "iam": {
                    "userArn": principal,
                    "callerId": principal.rsplit("/", 1)[-1],
                    "accountId": self.account_id,
                }
            }
        try:
            with self._invoke_lock:
                result = self.functions[route.function_id].invoke(event)
            return to_http(result)
        except Exception:
            self.errors += 1
            log.exception("API function failed for %s %s", method, path)
            return 500, [("content-type", "application/json")], b'{"message":"Internal Server Error"}'
