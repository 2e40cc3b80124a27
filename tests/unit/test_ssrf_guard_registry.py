"""Issue 24 item 5: the SSRF guard decides by an explicit table of the IANA special-purpose address
registries (IPv4 and IPv6) and the IPv6 address space, not by Python's ``ipaddress`` tables, and
judges every IPv6 form that carries an IPv4 address by that address too.

Every registry row has a sample address (inside the row and inside no more specific row) checked
twice: as a literal in the URL and as the DNS answer for a name. The rows here are written from the
registries themselves, independently of the guard's table; a test checks that the two list the
same blocks, so a row cannot be added to the guard untested.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from typing import NamedTuple

import pytest
from reminders.adapters.destinations import DestinationPolicy, InvalidDestinationError


class Row(NamedTuple):
    block: str
    name: str
    rfc: str
    reachable: bool | None  # the registry's "Globally Reachable" column; None: N/A
    sample: str  # an address inside the block and inside no more specific row
    permitted: bool  # the guard's verdict on the sample


# IANA IPv4 Special-Purpose Address Registry (iana-ipv4-special-registry), and multicast from the IPv4
# address space registry (not a unicast destination).
IPV4 = [
    Row("0.0.0.0/8", "This network", "RFC 791", False, "0.1.2.3", False),
    Row("0.0.0.0/32", "This host on this network", "RFC 1122", False, "0.0.0.0", False),
    Row("10.0.0.0/8", "Private-Use", "RFC 1918", False, "10.1.2.3", False),
    Row("100.64.0.0/10", "Shared Address Space", "RFC 6598", False, "100.64.0.1", False),
    Row("127.0.0.0/8", "Loopback", "RFC 1122", False, "127.0.0.1", False),
    Row("169.254.0.0/16", "Link Local", "RFC 3927", False, "169.254.169.254", False),
    Row("172.16.0.0/12", "Private-Use", "RFC 1918", False, "172.16.5.4", False),
    Row("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", False, "192.0.0.100", False),
    Row("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False, "192.0.0.1", False),
    Row("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False, "192.0.0.8", False),
    Row("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True, "192.0.0.9", True),
    Row("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True, "192.0.0.10", True),
    Row("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", False, "192.0.0.170", False),
    Row("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", False, "192.0.0.171", False),
    Row("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False, "192.0.2.45", False),
    Row("192.31.196.0/24", "AS112-v4", "RFC 7535", True, "192.31.196.1", True),
    Row("192.52.193.0/24", "AMT", "RFC 7450", True, "192.52.193.1", True),
    Row("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None, "192.88.99.1", False),
    Row("192.168.0.0/16", "Private-Use", "RFC 1918", False, "192.168.1.1", False),
    Row("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True, "192.175.48.6", True),
    Row("198.18.0.0/15", "Benchmarking", "RFC 2544", False, "198.19.0.1", False),
    Row("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False, "198.51.100.7", False),
    Row("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False, "203.0.113.9", False),
    Row("240.0.0.0/4", "Reserved", "RFC 1112", False, "240.1.2.3", False),
    Row("255.255.255.255/32", "Limited Broadcast", "RFC 8190", False, "255.255.255.255", False),
    Row("224.0.0.0/4", "Multicast", "RFC 5771", False, "224.0.0.1", False),
]

# IANA IPv6 Special-Purpose Address Registry (iana-ipv6-special-registry). Rows that carry an IPv4
# address have a public sample here and refused ones in EMBEDDED below.
IPV6 = [
    Row("::1/128", "Loopback Address", "RFC 4291", False, "::1", False),
    Row("::/128", "Unspecified Address", "RFC 4291", False, "::", False),
    Row("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False, "::ffff:93.184.216.34", True),
    Row("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True, "64:ff9b::5db8:d822", True),
    Row("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", False, "64:ff9b:1::5db8:d822", False),
    Row("100::/64", "Discard-Only Address Block", "RFC 6666", False, "100::1", False),
    Row("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False, "100:0:0:1::1", False),
    Row("2001::/23", "IETF Protocol Assignments", "RFC 2928", False, "2001:100::1", False),
    # Teredo: server 93.184.216.34, client 93.184.216.35 (its bits inverted in the last 32)
    Row("2001::/32", "TEREDO", "RFC 4380", None, "2001:0:5db8:d822::a247:27dc", True),
    Row("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True, "2001:1::1", True),
    Row("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True, "2001:1::2", True),
    Row("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True, "2001:1::3", True),
    Row("2001:2::/48", "Benchmarking", "RFC 5180", False, "2001:2::1", False),
    Row("2001:3::/32", "AMT", "RFC 7450", True, "2001:3::1", True),
    Row("2001:4:112::/48", "AS112-v6", "RFC 7535", True, "2001:4:112::1", True),
    Row("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None, "2001:10::1", False),
    Row("2001:20::/28", "ORCHIDv2", "RFC 7343", True, "2001:20::1", True),
    Row(
        "2001:30::/28",
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        "RFC 9374",
        True,
        "2001:30::1",
        True,
    ),
    Row("2001:db8::/32", "Documentation", "RFC 3849", False, "2001:db8::1", False),
    Row("2002::/16", "6to4", "RFC 3056", None, "2002:5db8:d822::1", True),
    Row("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True, "2620:4f:8000::1", True),
    Row("3fff::/20", "Documentation", "RFC 9637", False, "3fff::1", False),
    Row("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False, "5f00::1", False),
    Row("fc00::/7", "Unique-Local", "RFC 4193", False, "fd00:ec2::254", False),
    Row("fe80::/10", "Link-Local Unicast", "RFC 4291", False, "fe80::1", False),
]

# IANA IPv6 Address Space registry (ipv6-address-space): only 2000::/3 is global unicast; the rest is
# reserved by the IETF or scoped (the special-purpose rows above are more specific and win).
IPV6_SPACE = [
    Row("::/8", "Reserved by IETF", "RFC 4291", False, "::1:0:0:1", False),
    Row("100::/8", "Reserved by IETF", "RFC 4291", False, "1ff::1", False),
    Row("200::/7", "Reserved by IETF", "RFC 4048", False, "200::1", False),
    Row("400::/6", "Reserved by IETF", "RFC 4291", False, "400::1", False),
    Row("800::/5", "Reserved by IETF", "RFC 4291", False, "800::1", False),
    Row("1000::/4", "Reserved by IETF", "RFC 4291", False, "1000::1", False),
    Row("2000::/3", "Global Unicast", "RFC 4291", True, "2606:4700::1111", True),
    Row("4000::/3", "Reserved by IETF", "RFC 4291", False, "4000::1", False),
    Row("6000::/3", "Reserved by IETF", "RFC 4291", False, "6000::1", False),
    Row("8000::/3", "Reserved by IETF", "RFC 4291", False, "8000::1", False),
    Row("a000::/3", "Reserved by IETF", "RFC 4291", False, "a000::1", False),
    Row("c000::/3", "Reserved by IETF", "RFC 4291", False, "c000::1", False),
    Row("e000::/4", "Reserved by IETF", "RFC 4291", False, "e000::1", False),
    Row("f000::/5", "Reserved by IETF", "RFC 4291", False, "f000::1", False),
    Row("f800::/6", "Reserved by IETF", "RFC 4291", False, "f800::1", False),
    Row("fe00::/9", "Reserved by IETF", "RFC 4291", False, "fe00::1", False),
    Row("fec0::/10", "Reserved by IETF (deprecated site-local)", "RFC 3879", False, "fec0::1", False),
    Row("ff00::/8", "Multicast", "RFC 4291", False, "ff02::1", False),
    # forms outside both registries that carry an IPv4 address (inside ::/8): refused as a whole
    Row("::/96", "IPv4-compatible (deprecated)", "RFC 4291", False, "::5db8:d822", False),
    Row("::ffff:0:0:0/96", "IPv4-translated", "RFC 2765", False, "::ffff:0:5db8:d822", False),
]

ROWS = IPV4 + IPV6 + IPV6_SPACE


def _resolver(mapping: dict[str, Sequence[str]]) -> Callable[[str, int], Sequence[str]]:
    def resolve(host: str, port: int) -> Sequence[str]:
        return mapping[host]

    return resolve


def _url(address: str) -> str:
    return f"https://[{address}]/hooks" if ":" in address else f"https://{address}/hooks"


def _verdicts(address: str, policy_args: dict[str, object] | None = None) -> tuple[bool, bool]:
    """(permitted as a literal, permitted as the DNS answer of a name)."""
    out = []
    for url, resolver in (
        (_url(address), _resolver({})),
        ("https://hooks.example.test/hooks", _resolver({"hooks.example.test": [address]})),
    ):
        policy = DestinationPolicy(resolver=resolver, **(policy_args or {}))  # type: ignore[arg-type]
        try:
            policy.resolve(url)
        except InvalidDestinationError:
            out.append(False)
        else:
            out.append(True)
    return out[0], out[1]


def _param(row: Row) -> object:
    return pytest.param(row, id=f"{row.block} {row.name}")


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_each_registry_row_decides_its_addresses_as_a_literal_and_as_a_dns_answer(row: Row) -> None:
    assert ipaddress.ip_address(row.sample) in ipaddress.ip_network(row.block)
    assert _verdicts(row.sample) == (row.permitted, row.permitted)


#: (form, IPv6 address, the IPv4 address it carries): each carried address is one the guard refuses.
EMBEDDED = [
    (form, address, ipv4)
    for ipv4 in ("127.0.0.1", "169.254.169.254", "10.1.2.3")
    for form, address in (
        ("IPv4-mapped ::ffff:0:0/96", f"::ffff:{ipv4}"),
        ("IPv4-translated ::ffff:0:0:0/96", f"::ffff:0:{ipv4}"),
        ("IPv4-compatible ::/96", f"::{ipv4}"),
        ("NAT64 64:ff9b::/96", f"64:ff9b::{ipv4}"),
        ("NAT64 local-use 64:ff9b:1::/48", f"64:ff9b:1::{ipv4}"),
        ("6to4 2002::/16", "2002:{:02x}{:02x}:{:02x}{:02x}::1".format(*ipaddress.IPv4Address(ipv4).packed)),
        (
            "Teredo 2001::/32 (client)",
            str(
                ipaddress.IPv6Address(
                    (0x20010000 << 96) | (0x5DB8D822 << 64) | (~int(ipaddress.IPv4Address(ipv4)) & 0xFFFFFFFF)
                )
            ),
        ),
        (
            "Teredo 2001::/32 (server)",
            str(
                ipaddress.IPv6Address(
                    (0x20010000 << 96) | (int(ipaddress.IPv4Address(ipv4)) << 64) | 0xA24727DC
                )
            ),
        ),
    )
]


@pytest.mark.parametrize(("form", "address", "ipv4"), EMBEDDED, ids=[f"{e[0]} {e[2]}" for e in EMBEDDED])
def test_every_form_carrying_a_refused_ipv4_is_refused_as_a_literal_and_as_a_dns_answer(
    form: str, address: str, ipv4: str
) -> None:
    assert _verdicts(address) == (False, False)


@pytest.mark.parametrize(("form", "address", "ipv4"), EMBEDDED, ids=[f"{e[0]} {e[2]}" for e in EMBEDDED])
def test_the_ipv4_address_every_translation_form_carries_is_extracted(
    form: str, address: str, ipv4: str
) -> None:
    from reminders.domain.special_addresses import embedded_ipv4

    assert ipaddress.IPv4Address(ipv4) in embedded_ipv4(ipaddress.IPv6Address(address))


@pytest.mark.parametrize("ipv4", ["127.0.0.1", "169.254.169.254", "10.0.0.7"])
def test_ssrf_guard_refuses_ipv4_translated_loopback_literal_and_dns_answer(ipv4: str) -> None:
    assert _verdicts(f"::ffff:0:{ipv4}") == (False, False)
    # the local runtime's allowance for 127.0.0.0/8 opens IPv4 loopback, not this IPv6 form of it
    local = {"allowed_networks": ["127.0.0.0/8"], "allow_http": True}
    assert _verdicts(f"::ffff:0:{ipv4}", local) == (False, False)


@pytest.mark.parametrize("address", ["fec0::1", "fec0:ec2::254", "5f00::1", "3fff::1", "3fff:fff::1"])
def test_ssrf_guard_refuses_site_local_srv6_and_ipv6_documentation_literal_and_dns_answer(
    address: str,
) -> None:
    assert _verdicts(address) == (False, False)


def test_ssrf_guard_decides_without_pythons_ipaddress_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's table changes between versions (3.11 and 3.13 disagree on 2001::/23's sub-blocks):
    the guard consults none of it, so a table that called everything global changes nothing."""
    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        monkeypatch.setattr(cls, "is_global", property(lambda self: True))
        for name in ("is_private", "is_loopback", "is_link_local", "is_reserved", "is_multicast"):
            monkeypatch.setattr(cls, name, property(lambda self: False))
    for row in ROWS:
        assert _verdicts(row.sample) == (row.permitted, row.permitted), row


def test_the_guards_table_lists_exactly_the_registry_rows_tested_here() -> None:
    from reminders.domain.special_addresses import REGISTRY

    assert sorted((r.block, r.rfc, r.globally_reachable) for r in REGISTRY) == sorted(
        (r.block, r.rfc, r.reachable) for r in ROWS
    )


def test_the_local_development_allowance_opens_loopback_only() -> None:
    """ALLOW_DESTINATION_NETWORKS=127.0.0.0/8 (the local runtime) opens loopback and its IPv4-mapped
    form, plain http included, and nothing else: not 10.x, not 127.x behind a refused IPv6 form."""
    local = DestinationPolicy.from_env({"ALLOW_DESTINATION_NETWORKS": "127.0.0.0/8"})
    assert local.resolve("http://127.0.0.1:8080/h").address == "127.0.0.1"
    assert local.resolve("https://[::ffff:127.0.0.1]/h").address == "::ffff:7f00:1"
    for refused in ("http://10.1.2.3/h", "https://[::ffff:10.1.2.3]/h", "https://[64:ff9b::10.1.2.3]/h"):
        with pytest.raises(InvalidDestinationError):
            local.resolve(refused)
