"""Which IP addresses a webhook may reach: the IANA special-purpose address registries, embedded.

The SSRF guard (adapters/destinations.py) decides by this table alone, never by Python's
``ipaddress`` properties (``is_global``, ``is_private``…), whose table differs between Python
versions and lags the registries (3.11 passes ``3fff::/20``, ``5f00::/16`` and ``fec0::/10``).

The rows are the IANA IPv4 and IPv6 Special-Purpose Address Registries with their "Globally
Reachable" column (``None`` where the registry says N/A), the IPv6 Address Space registry (only
``2000::/3`` is global unicast; the rest is reserved or scoped), multicast, and the two IPv6 forms
that carry an IPv4 address outside both registries (IPv4-compatible, IPv4-translated). The most
specific row containing an address decides:

- reachable ``True``: permitted (an IPv6 row that carries an IPv4 address also needs that address
  permitted: NAT64 ``64:ff9b::/96``);
- ``False``: refused, whatever it carries — except IPv4-mapped ``::ffff:0:0/96``, which a socket
  reaches over IPv4: it is judged by the IPv4 address alone;
- N/A: permitted only for a form that carries IPv4 addresses, each of them permitted (6to4
  ``2002::/16``, Teredo ``2001::/32`` server and client); refused otherwise (deprecated blocks);
- no row: an IPv4 address is public unicast; every IPv6 address has a row (the address space).

Registries as of 2025 (iana-ipv4-special-registry, iana-ipv6-special-registry, ipv6-address-space,
ipv4-address-space). Pure: no I/O; the table is parsed on first use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Carries(StrEnum):
    """An IPv6 form that carries an IPv4 address, and where."""

    MAPPED = "ipv4-mapped"  # ::ffff:a.b.c.d, RFC 4291 §2.5.5.2
    TRANSLATED = "ipv4-translated"  # ::ffff:0:a.b.c.d, RFC 2765 §2.1 (SIIT)
    COMPATIBLE = "ipv4-compatible"  # ::a.b.c.d, RFC 4291 §2.5.5.1 (deprecated)
    NAT64 = "nat64"  # 64:ff9b::a.b.c.d, RFC 6052 §2.1 (/96 layout)
    NAT64_LOCAL = "nat64-local-use"  # 64:ff9b:1::/48, RFC 8215 (any RFC 6052 layout)
    SIX_TO_FOUR = "6to4"  # 2002:AABB:CCDD::/48, RFC 3056
    TEREDO = "teredo"  # 2001:0:server:flags:port:~client, RFC 4380 §4


@dataclass(frozen=True, slots=True)
class RegistryRow:
    block: str
    name: str
    rfc: str
    globally_reachable: bool | None  # the registry's column; None: N/A
    registry: str
    carries: Carries | None = None


V4_SPECIAL = "iana-ipv4-special-registry"
V6_SPECIAL = "iana-ipv6-special-registry"
V6_SPACE = "ipv6-address-space"
V4_SPACE = "ipv4-address-space"
NOT_REGISTERED = "RFC (not a registry row)"

REGISTRY: tuple[RegistryRow, ...] = (
    # -- IPv4 Special-Purpose Address Registry --------------------------------------------------------
    RegistryRow("0.0.0.0/8", "This network", "RFC 791", False, V4_SPECIAL),
    RegistryRow("0.0.0.0/32", "This host on this network", "RFC 1122", False, V4_SPECIAL),
    RegistryRow("10.0.0.0/8", "Private-Use", "RFC 1918", False, V4_SPECIAL),
    RegistryRow("100.64.0.0/10", "Shared Address Space", "RFC 6598", False, V4_SPECIAL),
    RegistryRow("127.0.0.0/8", "Loopback", "RFC 1122", False, V4_SPECIAL),
    RegistryRow("169.254.0.0/16", "Link Local", "RFC 3927", False, V4_SPECIAL),
    RegistryRow("172.16.0.0/12", "Private-Use", "RFC 1918", False, V4_SPECIAL),
    RegistryRow("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", False, V4_SPECIAL),
    RegistryRow("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False, V4_SPECIAL),
    RegistryRow("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False, V4_SPECIAL),
    RegistryRow("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True, V4_SPECIAL),
    RegistryRow("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True, V4_SPECIAL),
    RegistryRow("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", False, V4_SPECIAL),
    RegistryRow("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", False, V4_SPECIAL),
    RegistryRow("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False, V4_SPECIAL),
    RegistryRow("192.31.196.0/24", "AS112-v4", "RFC 7535", True, V4_SPECIAL),
    RegistryRow("192.52.193.0/24", "AMT", "RFC 7450", True, V4_SPECIAL),
    RegistryRow("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None, V4_SPECIAL),
    RegistryRow("192.168.0.0/16", "Private-Use", "RFC 1918", False, V4_SPECIAL),
    RegistryRow("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True, V4_SPECIAL),
    RegistryRow("198.18.0.0/15", "Benchmarking", "RFC 2544", False, V4_SPECIAL),
    RegistryRow("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False, V4_SPECIAL),
    RegistryRow("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False, V4_SPECIAL),
    RegistryRow("240.0.0.0/4", "Reserved", "RFC 1112", False, V4_SPECIAL),
    RegistryRow("255.255.255.255/32", "Limited Broadcast", "RFC 8190", False, V4_SPECIAL),
    # multicast is no unicast destination (IPv4 Address Space registry)
    RegistryRow("224.0.0.0/4", "Multicast", "RFC 5771", False, V4_SPACE),
    # -- IPv6 Special-Purpose Address Registry --------------------------------------------------------
    RegistryRow("::1/128", "Loopback Address", "RFC 4291", False, V6_SPECIAL),
    RegistryRow("::/128", "Unspecified Address", "RFC 4291", False, V6_SPECIAL),
    RegistryRow("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False, V6_SPECIAL, Carries.MAPPED),
    RegistryRow("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True, V6_SPECIAL, Carries.NAT64),
    RegistryRow("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", False, V6_SPECIAL, Carries.NAT64_LOCAL),
    RegistryRow("100::/64", "Discard-Only Address Block", "RFC 6666", False, V6_SPECIAL),
    RegistryRow("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False, V6_SPECIAL),
    RegistryRow("2001::/23", "IETF Protocol Assignments", "RFC 2928", False, V6_SPECIAL),
    RegistryRow("2001::/32", "TEREDO", "RFC 4380", None, V6_SPECIAL, Carries.TEREDO),
    RegistryRow("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True, V6_SPECIAL),
    RegistryRow("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True, V6_SPECIAL),
    RegistryRow(
        "2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True, V6_SPECIAL
    ),
    RegistryRow("2001:2::/48", "Benchmarking", "RFC 5180", False, V6_SPECIAL),
    RegistryRow("2001:3::/32", "AMT", "RFC 7450", True, V6_SPECIAL),
    RegistryRow("2001:4:112::/48", "AS112-v6", "RFC 7535", True, V6_SPECIAL),
    RegistryRow("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None, V6_SPECIAL),
    RegistryRow("2001:20::/28", "ORCHIDv2", "RFC 7343", True, V6_SPECIAL),
    RegistryRow(
        "2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True, V6_SPECIAL
    ),
    RegistryRow("2001:db8::/32", "Documentation", "RFC 3849", False, V6_SPECIAL),
    RegistryRow("2002::/16", "6to4", "RFC 3056", None, V6_SPECIAL, Carries.SIX_TO_FOUR),
    RegistryRow("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True, V6_SPECIAL),
    RegistryRow("3fff::/20", "Documentation", "RFC 9637", False, V6_SPECIAL),
    RegistryRow("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False, V6_SPECIAL),
    RegistryRow("fc00::/7", "Unique-Local", "RFC 4193", False, V6_SPECIAL),
    RegistryRow("fe80::/10", "Link-Local Unicast", "RFC 4291", False, V6_SPECIAL),
    # -- IPv6 Address Space registry: the whole space, so every IPv6 address has a row -------------------
    RegistryRow("::/8", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("100::/8", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("200::/7", "Reserved by IETF", "RFC 4048", False, V6_SPACE),
    RegistryRow("400::/6", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("800::/5", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("1000::/4", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("2000::/3", "Global Unicast", "RFC 4291", True, V6_SPACE),
    RegistryRow("4000::/3", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("6000::/3", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("8000::/3", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("a000::/3", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("c000::/3", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("e000::/4", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("f000::/5", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("f800::/6", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("fe00::/9", "Reserved by IETF", "RFC 4291", False, V6_SPACE),
    RegistryRow("fec0::/10", "Reserved by IETF (deprecated site-local)", "RFC 3879", False, V6_SPACE),
    RegistryRow("ff00::/8", "Multicast", "RFC 4291", False, V6_SPACE),
    # -- forms that carry an IPv4 address, inside ::/8, rows of neither registry ------------------------
    RegistryRow(
        "::/96", "IPv4-compatible (deprecated)", "RFC 4291", False, NOT_REGISTERED, Carries.COMPATIBLE
    ),
    RegistryRow("::ffff:0:0:0/96", "IPv4-translated", "RFC 2765", False, NOT_REGISTERED, Carries.TRANSLATED),
)


@cache
def _parsed() -> tuple[tuple[IPNetwork, RegistryRow], ...]:
    """Most specific first, so the first row containing an address is the one that decides."""
    rows = [(ipaddress.ip_network(r.block), r) for r in REGISTRY]
    return tuple(sorted(rows, key=lambda nr: -nr[0].prefixlen))


def registry_row(ip: IPAddress) -> RegistryRow | None:
    """The most specific row containing ``ip``; None for an IPv4 address no row names (public)."""
    for net, row in _parsed():
        if net.version == ip.version and ip in net:
            return row
    return None


def _v4(value: int) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(value & 0xFFFFFFFF)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (and may reach through a translator or tunnel)."""
    row = registry_row(ip)
    carries = row.carries if row is not None else None
    value = int(ip)
    if carries in (Carries.MAPPED, Carries.TRANSLATED, Carries.COMPATIBLE, Carries.NAT64):
        return [_v4(value)]
    if carries is Carries.NAT64_LOCAL:
        # the prefix length inside 64:ff9b:1::/48 is the operator's: the /48 layout (bits 48-63 and
        # 72-87, around the u octet) and the /96 layout (the last 32 bits)
        in_48 = ((value >> 64) & 0xFFFF) << 16 | (value >> 40) & 0xFFFF
        return list(dict.fromkeys([_v4(in_48), _v4(value)]))
    if carries is Carries.SIX_TO_FOUR:
        return [_v4(value >> 80)]
    if carries is Carries.TEREDO:
        return [_v4(value >> 64), _v4(~value)]  # server, client (its bits inverted)
    return []


def address_permitted(ip: IPAddress, allowed: Sequence[IPNetwork] = ()) -> bool:
    """May a webhook connect to ``ip``? ``allowed``: networks an operator opened (local development:
    the local runtime opens 127.0.0.0/8); an IPv6 form is opened only through what it carries."""
    if any(ip.version == net.version and ip in net for net in allowed):
        return True
    row = registry_row(ip)
    if row is None:
        return isinstance(ip, ipaddress.IPv4Address)
    if isinstance(ip, ipaddress.IPv4Address):
        return row.globally_reachable is True
    carried = embedded_ipv4(ip)
    if row.carries is Carries.MAPPED:  # the socket connects to the IPv4 address itself
        return all(address_permitted(v4, allowed) for v4 in carried)
    if row.globally_reachable is False or (row.globally_reachable is None and not carried):
        return False
    return all(address_permitted(v4, allowed) for v4 in carried)
