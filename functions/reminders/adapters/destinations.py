"""Destination checks: malformed addresses and the SSRF guard.

A webhook URL must be https, carry no credentials, and resolve only to public addresses — no
loopback, private, link-local (incl. 169.254.169.254), CGNAT, multicast or reserved ranges — unless
an operator explicitly allows a network (the local runtime allows 127.0.0.0/8). The address that
was checked is the address the sender connects to: no second DNS lookup.

Which addresses are public is decided by an explicit table of the IANA special-purpose address
registries (domain/special_addresses.py), never by the Python version's own ``ipaddress`` table.
IPv6 forms that carry an IPv4 address are judged by that address too: IPv4-mapped
``::ffff:a.b.c.d`` (by it alone: the socket connects over IPv4), NAT64 ``64:ff9b::/96`` (RFC 6052),
6to4 ``2002::/16`` and Teredo ``2001::/32`` (server and client); IPv4-translated ``::ffff:0:a.b.c.d``
(RFC 2765), IPv4-compatible ``::a.b.c.d`` and the local-use ``64:ff9b:1::/48`` (RFC 8215) are not
globally reachable and are refused as a whole. The check is the same at creation and at every send.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..domain.errors import ValidationError
from ..domain.special_addresses import address_permitted

EMAIL_RE = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$"
)
MAX_URL_LENGTH = 2048
MAX_EMAIL_LENGTH = 254

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]


class InvalidDestinationError(ValidationError):
    """A destination that can never be delivered to (malformed, or refused by the SSRF guard)."""


class DestinationUnresolvedError(InvalidDestinationError):
    """The host did not resolve now (EAI_AGAIN, NXDOMAIN, no addresses). Refused at creation (a clear
    422); at send time a resolver failure is transient and retried, never a dead letter."""

    transient = True


def valid_email(address: str) -> bool:
    return len(address) <= MAX_EMAIL_LENGTH and EMAIL_RE.fullmatch(address) is not None


def _system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str  # the checked IP to connect to


class DestinationPolicy:
    def __init__(
        self,
        *,
        allowed_networks: Sequence[str] = (),
        allow_http: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        self.allowed = [ipaddress.ip_network(n, strict=False) for n in allowed_networks]
        self.allow_http = allow_http
        self.resolver = resolver or _system_resolver

    @classmethod
    def from_env(cls, env: dict[str, str]) -> DestinationPolicy:
        """``ALLOW_DESTINATION_NETWORKS`` (comma-separated CIDRs) is for local development only; plain
        http is allowed exactly for those networks."""
        nets = [n.strip() for n in env.get("ALLOW_DESTINATION_NETWORKS", "").split(",") if n.strip()]
        return cls(allowed_networks=nets, allow_http=bool(nets))

    def _permitted(self, ip: IPAddress) -> bool:
        return address_permitted(ip, self.allowed)

    def resolve(self, url: str, field: str = "url") -> Target:
        if len(url) > MAX_URL_LENGTH:
            raise InvalidDestinationError(field, f"longer than {MAX_URL_LENGTH} characters")
        if not url.isascii() or any(c <= " " or c == "\x7f" for c in url):
            # http.client refuses these in a request line (a send that could never happen, retried
            # six times); accepting them would also store something other than what is sent.
            raise InvalidDestinationError(
                field,
                "must be ASCII without spaces or control characters "
                "(percent-encode them; write an international host name in punycode)",
            )
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise InvalidDestinationError(field, f"not a valid URL ({exc})") from None
        if parts.scheme not in ("https", "http"):
            raise InvalidDestinationError(field, "must be an https:// URL")
        if parts.username or parts.password:
            raise InvalidDestinationError(field, "must not carry credentials")
        host = parts.hostname
        if not host:
            raise InvalidDestinationError(field, "has no host")
        if port == 0:
            raise InvalidDestinationError(field, "port must be 1-65535")
        port = port or (443 if parts.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        addresses = [str(literal)] if literal is not None else None
        if addresses is None:
            try:
                addresses = list(self.resolver(host, port))
            except UnicodeError:
                raise InvalidDestinationError(field, "host is not a valid name") from None
            except OSError:
                raise DestinationUnresolvedError(field, "host does not resolve") from None
        if not addresses:
            raise DestinationUnresolvedError(field, "host does not resolve")
        ips = [ipaddress.ip_address(a) for a in addresses]
        refused = [ip for ip in ips if not self._permitted(ip)]
        if refused:
            raise InvalidDestinationError(
                field, "resolves to a loopback, private, link-local or reserved address"
            )
        if parts.scheme == "http" and not (
            self.allow_http and all(any(ip in n for n in self.allowed) for ip in ips)
        ):
            raise InvalidDestinationError(field, "must be an https:// URL")
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        return Target(parts.scheme, host, port, path, str(ips[0]))
