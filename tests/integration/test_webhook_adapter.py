"""The webhook adapter against real local HTTP servers: Standard Webhooks signing, a stable
``webhook-id``, byte-identical retries, no redirects, a capped response, timeouts, the SSRF guard
(after DNS resolution, connecting to the checked address) and secrets."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from reminders.adapters.clock import FixedClock
from reminders.adapters.destinations import DestinationPolicy, InvalidDestinationError
from reminders.adapters.secrets import DEV_WEBHOOK_SECRET, CachedSecret
from reminders.adapters.webhook import MAX_RESPONSE_BYTES, WebhookSender
from reminders.domain.errors import ConfigurationError
from reminders.domain.models import ChannelType, Delivery, Reminder, delivery_key, reminder_id
from reminders.domain.retry import OutcomeClass, SendResult
from reminders.services.render import render
from reminders_ops.local.receiver import Behaviour, WebhookReceiver
from standardwebhooks.webhooks import Webhook

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)  # signatures carry a timestamp the receiver checks
LOCAL = DestinationPolicy(allowed_networks=["127.0.0.0/8"], allow_http=True)


# -- fixtures ----------------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _now_at_test_time() -> None:
    """NOW is the time each test starts, not the module's import: the senders sign with it and the
    receiver allows 5 minutes, and a full suite runs far longer than that after collection (seen:
    401 from the receiver in the last third of a 16-minute `pytest -n 2`)."""
    global NOW
    NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def make(url: str, key: str = "renewal:acct-1:2026-12-20") -> tuple[Delivery, Reminder]:
    d = Delivery(
        channel_id="webhook-0",
        type=ChannelType.WEBHOOK,
        destination=url,
        key=delivery_key("acct-1", key, "webhook-0"),
    )
    r = Reminder(
        id=reminder_id("acct-1", key),
        account_id="acct-1",
        key=key,
        kind="renewal",
        due_at=NOW,
        template_id="renewal",
        template_version=2,
        data={"renewal_date": "2026-12-20", "plan": "pro"},
        version=1,
        created_at=NOW,
        fingerprint="fp",
        deliveries={"webhook-0": d},
    )
    return d, r


def sender(
    policy: DestinationPolicy = LOCAL,
    secret: Callable[[], str] = lambda: DEV_WEBHOOK_SECRET,
    timeout: float = 2.0,
    now: dt.datetime | None = None,
    **kwargs: Any,
) -> WebhookSender:
    """``now``: the signing time (default NOW, the test's start). A real receiver checks the
    timestamp against its clock (±5 min): its tests sign at the current time, however long after
    collection the suite reaches them."""
    return WebhookSender(
        policy=policy, secret=secret, clock=FixedClock(now or NOW), timeout_seconds=timeout, **kwargs
    )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def send(s: WebhookSender, url: str) -> SendResult:
    d, r = make(url)
    return s.send(d, r, render(r, d))


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class RawServer:
    """A tiny HTTP server whose answer a test scripts: respond(handler, seen) writes the response."""

    respond: Callable[[BaseHTTPRequestHandler, Seen], None]
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def start(self, context: ssl.SSLContext | None = None) -> RawServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                s = Seen("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                outer.seen.append(s)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    outer.respond(self, s)

            do_GET = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if context is not None:
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    def url(self, path: str = "/hooks", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def reply(status: int, body: bytes = b"{}", headers: dict[str, str] | None = None) -> Callable[..., None]:
    def respond(h: BaseHTTPRequestHandler, _: Seen) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("content-length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return respond


@pytest.fixture
def raw() -> Iterator[Callable[[Callable[..., None]], RawServer]]:
    servers: list[RawServer] = []

    def start(respond: Callable[..., None]) -> RawServer:
        servers.append(RawServer(respond).start())
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


# -- signing and identity ------------------------------------------------------------------------------------
def test_the_signature_verifies_with_standardwebhooks_and_the_dev_secret(raw: Any) -> None:
    srv = raw(reply(204))
    # The verifier checks the timestamp against the wall clock (5 min tolerance): sign with the time
    # of this test, not of the module's import (the suite can run longer than that).
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    signer = WebhookSender(
        policy=LOCAL, secret=lambda: DEV_WEBHOOK_SECRET, clock=FixedClock(now), timeout_seconds=2.0
    )
    result = send(signer, srv.url())
    assert result.outcome is OutcomeClass.ACCEPTED and result.status == 204
    (seen,) = srv.seen
    d, r = make(srv.url())
    payload = Webhook(DEV_WEBHOOK_SECRET).verify(seen.body, seen.headers)
    assert payload["type"] == "reminder.due" and payload["key"] == r.key and payload["id"] == r.id
    assert seen.headers["webhook-id"] == d.key
    assert seen.headers["webhook-timestamp"] == str(int(now.timestamp()))
    assert seen.headers["webhook-signature"].startswith("v1,")
    assert seen.headers["content-type"] == "application/json"
    with pytest.raises(Exception, match="signature"):  # and a wrong secret does not verify
        Webhook("whsec_" + "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==").verify(seen.body, seen.headers)


def test_the_body_is_the_documented_document(raw: Any) -> None:
    import json

    srv = raw(reply(200))
    send(sender(), srv.url())
    doc = json.loads(srv.seen[0].body)
    assert set(doc) == {"type", "id", "key", "account_id", "kind", "template", "data", "due_at"}
    assert doc["template"] == {"id": "renewal", "version": 2}


def test_webhook_id_and_body_are_stable_across_retries(raw: Any) -> None:
    answers = iter([503, 429, 200])
    srv = raw(lambda h, s: reply(next(answers))(h, s))
    s = sender()
    outcomes = [send(s, srv.url()).outcome for _ in range(3)]
    assert outcomes == [OutcomeClass.TRANSIENT, OutcomeClass.THROTTLED, OutcomeClass.ACCEPTED]
    assert len({x.headers["webhook-id"] for x in srv.seen}) == 1
    assert len({x.body for x in srv.seen}) == 1  # byte-identical
    assert len({x.headers["idempotency-key"] for x in srv.seen}) == 1


def test_a_key_honouring_receiver_answers_409_which_confirms_the_earlier_send() -> None:
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as rcv:
        s = sender(now=_now())
        first = send(s, rcv.url + "/hooks")
        second = send(s, rcv.url + "/hooks")
        snap = rcv.snapshot()
    assert first.outcome is OutcomeClass.ACCEPTED and first.receipt
    assert second.outcome is OutcomeClass.RECONCILED_CONFLICT and second.status == 409
    assert snap["rejected_signatures"] == 0
    assert list(snap["accepted"].values()) == [1] and list(snap["posts"].values()) == [2]


# -- statuses ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, OutcomeClass.ACCEPTED),
        (202, OutcomeClass.ACCEPTED),
        (408, OutcomeClass.TRANSIENT),
        (425, OutcomeClass.TRANSIENT),
        (500, OutcomeClass.TRANSIENT),
        (502, OutcomeClass.TRANSIENT),
        (503, OutcomeClass.TRANSIENT),
        (504, OutcomeClass.TRANSIENT),
        (400, OutcomeClass.PERMANENT),
        (404, OutcomeClass.PERMANENT),
        (410, OutcomeClass.PERMANENT),
    ],
)
def test_statuses_are_classified(raw: Any, status: int, outcome: OutcomeClass) -> None:
    srv = raw(reply(status))
    result = send(sender(), srv.url())
    assert result.outcome is outcome and result.status == status
    assert result.metadata["status"] == str(status)
    assert result.fingerprint


def test_429_retry_after_seconds_and_http_date(raw: Any) -> None:
    srv = raw(reply(429, headers={"retry-after": "17"}))
    assert send(sender(), srv.url()).retry_after_seconds == 17.0
    later = format_datetime(NOW + dt.timedelta(seconds=90), usegmt=True)
    srv2 = raw(reply(429, headers={"retry-after": later}))
    assert send(sender(), srv2.url()).retry_after_seconds == 90.0
    srv3 = raw(reply(429))
    r = send(sender(), srv3.url())
    assert r.outcome is OutcomeClass.THROTTLED and r.retry_after_seconds is None


def test_redirects_are_refused_not_followed(raw: Any) -> None:
    target = raw(reply(200))
    srv = raw(reply(302, headers={"location": target.url("/elsewhere")}))
    result = send(sender(), srv.url())
    assert result.outcome is OutcomeClass.PERMANENT and result.status == 302
    assert result.detail == "redirect_refused"
    assert target.seen == []


def test_a_huge_response_is_read_only_up_to_the_cap(raw: Any) -> None:
    huge = b"x" * (20 * 1024 * 1024)
    srv = raw(reply(200, body=huge))
    started = time.monotonic()
    result = send(sender(), srv.url())
    assert result.outcome is OutcomeClass.ACCEPTED
    assert int(result.metadata["response_bytes"]) == MAX_RESPONSE_BYTES
    assert time.monotonic() - started < 5
    assert result.receipt and "x" not in result.receipt  # the body is never stored


# -- timeouts and connection errors --------------------------------------------------------------------------
def test_a_read_timeout_after_sending_is_a_timeout_the_provider_may_have_accepted() -> None:
    with WebhookReceiver(DEV_WEBHOOK_SECRET) as rcv:
        rcv.script("*", [Behaviour(200, hang_seconds=1.5)])  # accepts, then answers too late
        s = sender(timeout=0.3, now=_now())
        first = send(s, rcv.url + "/hooks")
        assert first.outcome is OutcomeClass.TIMEOUT and first.detail == "timeout_after_send"
        assert first.ambiguous
        second = send(sender(now=_now()), rcv.url + "/hooks")  # the retry, same webhook-id
        assert second.outcome is OutcomeClass.RECONCILED_CONFLICT
        assert list(rcv.snapshot()["accepted"].values()) == [1]


def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = send(sender(), f"http://127.0.0.1:{port}/hooks")
    assert result.outcome is OutcomeClass.CONNECTION
    assert not result.ambiguous


def test_a_server_that_accepts_the_connection_but_never_answers(raw: Any) -> None:
    srv = raw(lambda h, s: time.sleep(1.0))
    result = send(sender(timeout=0.3), srv.url())
    assert result.outcome is OutcomeClass.TIMEOUT


# -- the SSRF guard ------------------------------------------------------------------------------------------
REFUSED = [
    "https://127.0.0.1/hooks",
    "https://127.8.9.10/hooks",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.1.2.3/hooks",
    "https://172.16.5.4/hooks",
    "https://192.168.1.1/hooks",
    "https://100.64.0.1/hooks",  # CGNAT
    "https://0.0.0.0/hooks",
    "https://224.0.0.1/hooks",
    "https://[::1]/hooks",
    "https://[::ffff:127.0.0.1]/hooks",
    "https://[::ffff:169.254.169.254]/hooks",
    "https://[fe80::1]/hooks",
    "https://[fc00::1]/hooks",
    "https://[fd00:ec2::254]/hooks",  # the IMDS IPv6 address
]


@pytest.mark.parametrize("url", REFUSED)
def test_internal_addresses_are_refused(url: str) -> None:
    with pytest.raises(InvalidDestinationError):
        DestinationPolicy().resolve(url)
    result = send(sender(DestinationPolicy()), url)
    assert result.outcome is OutcomeClass.INVALID_DESTINATION


def test_loopback_is_allowed_only_with_an_explicit_allow_list(raw: Any) -> None:
    srv = raw(reply(200))
    assert send(sender(DestinationPolicy()), srv.url()).outcome is OutcomeClass.INVALID_DESTINATION
    assert srv.seen == []
    allowed = DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"})
    assert send(sender(allowed), srv.url()).outcome is OutcomeClass.ACCEPTED
    assert len(srv.seen) == 1
    # the allow-list is exact: it opens loopback, not the rest of the private space
    with pytest.raises(InvalidDestinationError):
        allowed.resolve("http://10.1.2.3/hooks")
    mapped = allowed.resolve("https://[::ffff:127.0.0.1]/hooks").address
    assert ipaddress.ip_address(mapped) == ipaddress.ip_address("::ffff:127.0.0.1")


def resolver_for(mapping: dict[str, Sequence[str]]) -> Callable[[str, int], Sequence[str]]:
    def resolve(host: str, port: int) -> Sequence[str]:
        if host not in mapping:
            raise OSError(f"unknown host {host}")
        return mapping[host]

    return resolve


def test_a_hostname_resolving_to_a_private_address_is_refused_after_resolution() -> None:
    policy = DestinationPolicy(resolver=resolver_for({"evil.example.com": ["10.0.0.7"]}))
    with pytest.raises(InvalidDestinationError, match="private"):
        policy.resolve("https://evil.example.com/hooks")
    mixed = DestinationPolicy(
        resolver=resolver_for({"mixed.example.com": ["93.184.216.34", "169.254.169.254"]})
    )
    with pytest.raises(InvalidDestinationError):
        mixed.resolve("https://mixed.example.com/hooks")
    public = DestinationPolicy(resolver=resolver_for({"ok.example.com": ["93.184.216.34"]}))
    t = public.resolve("https://ok.example.com/hooks?x=1")
    assert (t.host, t.address, t.port, t.path) == ("ok.example.com", "93.184.216.34", 443, "/hooks?x=1")


def test_a_hostname_that_does_not_resolve_at_send_time_is_retried_not_dead_lettered() -> None:
    # Refused at creation (422); at send time DNS may be failing only now (issue 10, case 1).
    result = send(sender(DestinationPolicy(resolver=resolver_for({}))), "https://nowhere.example.test/h")
    assert result.outcome is OutcomeClass.CONNECTION and result.detail == "dns_unresolved"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/x",
        "file:///etc/passwd",
        "https://user:pass@hooks.example.com/x",
        "https:///nohost",
        "http://93.184.216.34/plain-http",  # plain http only for explicitly allowed networks
        "https://hooks.example.com:99999/x",
        "https://" + "a" * 2100 + ".com/",
    ],
)
def test_malformed_or_unsafe_urls_are_refused(url: str) -> None:
    policy = DestinationPolicy(resolver=resolver_for({"hooks.example.com": ["93.184.216.34"]}))
    with pytest.raises(InvalidDestinationError):
        policy.resolve(url)


def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(
    raw: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = raw(reply(200))
    lookups: list[str] = []
    real = socket.getaddrinfo

    def spy(host: Any, *args: Any, **kwargs: Any) -> Any:
        lookups.append(str(host))
        if host == "hooks.example.test":
            raise AssertionError("a second DNS lookup of the checked host")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    policy = DestinationPolicy(
        allowed_networks=["127.0.0.0/8"],
        allow_http=True,
        resolver=resolver_for({"hooks.example.test": ["127.0.0.1"]}),
    )
    result = send(sender(policy), srv.url(host="hooks.example.test"))
    assert result.outcome is OutcomeClass.ACCEPTED
    (seen,) = srv.seen
    assert seen.headers["host"] == f"hooks.example.test:{srv.port}"
    assert "hooks.example.test" not in lookups


# -- TLS to the pinned address with the original host name ---------------------------------------------------
def _self_signed(tmp: Path, host: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_https_connects_to_the_pinned_address_and_verifies_the_original_host(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path, "hooks.example.test")
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    srv = RawServer(reply(200)).start(server_ctx)
    try:
        client_ctx = ssl.create_default_context(cafile=str(cert))
        policy = DestinationPolicy(
            allowed_networks=["127.0.0.0/8"], resolver=resolver_for({"hooks.example.test": ["127.0.0.1"]})
        )
        ok = send(sender(policy, ssl_context=client_ctx), srv.url(host="hooks.example.test", scheme="https"))
        assert ok.outcome is OutcomeClass.ACCEPTED
        assert srv.seen[0].headers["host"] == f"hooks.example.test:{srv.port}"
        # a certificate for another name is refused (TLS error before anything is sent)
        other = DestinationPolicy(
            allowed_networks=["127.0.0.0/8"], resolver=resolver_for({"other.example.test": ["127.0.0.1"]})
        )
        bad = send(sender(other, ssl_context=client_ctx), srv.url(host="other.example.test", scheme="https"))
        assert bad.outcome is OutcomeClass.CONNECTION and bad.detail.startswith("tls:")
        assert len(srv.seen) == 1
    finally:
        srv.stop()


# -- secrets -------------------------------------------------------------------------------------------------
def _missing() -> str:
    raise ConfigurationError("no webhook signing secret configured")


def _boom() -> str:
    raise RuntimeError("AccessDeniedException")


@pytest.mark.parametrize(
    "secret",
    [
        _missing,
        CachedSecret(_boom),
        CachedSecret(lambda: ""),
        lambda: "whsec_***not-base64***",
    ],
    ids=["missing", "fetch-fails", "empty", "malformed"],
)
def test_secret_problems_are_our_configuration_and_nothing_is_sent(raw: Any, secret: Any) -> None:
    srv = raw(reply(200))
    result = send(sender(secret=secret), srv.url())
    assert result.outcome is OutcomeClass.CONFIGURATION
    assert srv.seen == []


def test_a_raw_non_whsec_secret_is_used_as_key_bytes(raw: Any) -> None:
    import base64

    srv = raw(reply(200))
    signer = WebhookSender(  # signed now: the verifier checks the timestamp against the wall clock
        policy=LOCAL,
        secret=lambda: "plain-shared-secret",
        clock=FixedClock(dt.datetime.now(dt.UTC)),
        timeout_seconds=2.0,
    )
    assert send(signer, srv.url()).outcome is OutcomeClass.ACCEPTED
    (seen,) = srv.seen
    verifier = Webhook("whsec_" + base64.b64encode(b"plain-shared-secret").decode())
    verifier.verify(seen.body, seen.headers)


# -- IPv6 forms that embed an IPv4 address (issue 12 #3) ------------------------------------------------
#: (form, IPv6 literal, the IPv4 address it reaches) — each embedded address is one the guard refuses.
EMBEDDED_REFUSED = [
    ("nat64-wkp-loopback", "64:ff9b::7f00:1", "127.0.0.1"),
    ("nat64-wkp-metadata", "64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("nat64-wkp-private", "64:ff9b::a00:1", "10.0.0.1"),
    ("nat64-local-use-loopback", "64:ff9b:1:7f00:0:100::", "127.0.0.1"),  # RFC 6052 /48 layout
    ("nat64-local-use-private", "64:ff9b:1::a00:1", "10.0.0.1"),
    ("6to4-loopback", "2002:7f00:1::", "127.0.0.1"),
    ("6to4-metadata", "2002:a9fe:a9fe::1", "169.254.169.254"),
    ("6to4-private", "2002:c0a8:101::", "192.168.1.1"),
    ("ipv4-compatible-loopback", "::7f00:1", "127.0.0.1"),
    ("ipv4-compatible-metadata", "::a9fe:a9fe", "169.254.169.254"),
    ("ipv4-compatible-cgnat", "::6440:1", "100.64.0.1"),
    ("ipv4-translated-loopback", "::ffff:0:7f00:1", "127.0.0.1"),  # RFC 2765 (issue 24 item 5)
    ("ipv4-translated-metadata", "::ffff:0:a9fe:a9fe", "169.254.169.254"),
    ("ipv4-translated-private", "::ffff:0:a00:1", "10.0.0.1"),
]


@pytest.mark.parametrize(("form", "literal", "ipv4"), EMBEDDED_REFUSED, ids=[f[0] for f in EMBEDDED_REFUSED])
def test_ipv6_forms_embedding_a_refused_ipv4_are_refused_at_creation(
    form: str, literal: str, ipv4: str
) -> None:
    assert not ipaddress.ip_address(ipv4).is_global
    with pytest.raises(InvalidDestinationError, match="loopback, private, link-local or reserved"):
        DestinationPolicy().resolve(f"https://[{literal}]/hooks")
    # the local allow-list for loopback does not open a private address behind a translation prefix
    if not ipaddress.ip_address(ipv4).is_loopback:
        with pytest.raises(InvalidDestinationError):
            LOCAL.resolve(f"https://[{literal}]/hooks")


@pytest.mark.parametrize(("form", "literal", "ipv4"), EMBEDDED_REFUSED, ids=[f[0] for f in EMBEDDED_REFUSED])
def test_a_name_resolving_at_send_time_to_an_embedded_refused_ipv4_is_an_invalid_destination(
    form: str, literal: str, ipv4: str
) -> None:
    """At send the guard runs again on the fresh answer (DNS rebinding): nothing is connected to."""
    policy = DestinationPolicy(resolver=resolver_for({"rebound.example.test": [literal]}))
    result = send(sender(policy), "https://rebound.example.test/hooks")
    assert result.outcome is OutcomeClass.INVALID_DESTINATION, result


TEREDO = [
    # server 65.54.227.120 (public), client 127.0.0.1 (bits inverted in the last 32)
    ("teredo-client-loopback", "2001:0:4136:e378:8000:63bf:80ff:fffe"),
    # server 93.184.216.34 (public), client 10.0.0.1
    ("teredo-client-private", "2001:0:5db8:d822:0:0:f5ff:fffe"),
    # server 10.0.0.1, client 93.184.216.34
    ("teredo-server-private", "2001:0:a00:1::a247:27dd"),
]


@pytest.mark.parametrize(("form", "literal"), TEREDO, ids=[t[0] for t in TEREDO])
def test_teredo_addresses_embedding_a_refused_ipv4_are_refused_whatever_the_stdlib_says(
    form: str, literal: str
) -> None:
    """Python's own table marks 2001::/23 non-global today; the guard checks the embedded server and
    client itself, so it does not depend on that table."""
    server, client = ipaddress.IPv6Address(literal).teredo or (None, None)
    assert server is not None and client is not None
    assert not (server.is_global and client.is_global)
    with pytest.raises(InvalidDestinationError):
        DestinationPolicy().resolve(f"https://[{literal}]/hooks")
    assert send(sender(DestinationPolicy()), f"https://[{literal}]/hooks").outcome is (
        OutcomeClass.INVALID_DESTINATION
    )


def test_ipv6_forms_embedding_a_public_ipv4_are_not_refused_for_what_they_embed() -> None:
    """The embedded check refuses by the embedded address only: a 6to4 or NAT64 form of a public
    address is judged like any other IPv6 address (it is not refused for embedding 93.184.216.34)."""
    from reminders.domain.special_addresses import embedded_ipv4

    assert embedded_ipv4(ipaddress.IPv6Address("64:ff9b::5db8:d822")) == [
        ipaddress.IPv4Address("93.184.216.34")
    ]
    assert embedded_ipv4(ipaddress.IPv6Address("2002:5db8:d822::1")) == [
        ipaddress.IPv4Address("93.184.216.34")
    ]
    assert embedded_ipv4(ipaddress.IPv6Address("2606:4700::1111")) == []
    DestinationPolicy().resolve("https://[2606:4700::1111]/hooks")  # an ordinary global IPv6 address
