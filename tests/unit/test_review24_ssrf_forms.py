"""Hostile review of issue 24 item 5 (review24): host forms the registry test does not spell out.

Passing guards: numeric host names the system resolver expands (decimal, hex, octal, short forms;
``getaddrinfo`` parses them locally, no DNS query), IPv6 literals with a zone id, and a DNS answer
that mixes a public address with a refused one.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from reminders.adapters.destinations import (
    DestinationPolicy,
    DestinationUnresolvedError,
    InvalidDestinationError,
)


def _refused(url: str, policy: DestinationPolicy) -> bool:
    """Refused for its address (not merely unresolved: that would pass a broken resolver too)."""
    try:
        policy.resolve(url)
    except DestinationUnresolvedError:
        return False
    except InvalidDestinationError as exc:
        return "address" in str(exc)
    return False


@pytest.mark.parametrize(
    "host",
    ["2130706433", "0x7f.1", "0177.0.0.1", "127.1", "0", "0x0", "2852039166", "0xa9fea9fe", "012.0.0.1"],
)
def test_ssrf_guard_refuses_a_numeric_host_name_the_resolver_reads_as_a_refused_ipv4(host: str) -> None:
    assert _refused(f"https://{host}/hooks", DestinationPolicy())


@pytest.mark.parametrize(
    "literal",
    ["::ffff:127.0.0.1%25eth0", "::ffff:0:a9fe:a9fe%251", "fe80::1%25lo", "::%25eth0", "::1%252"],
)
def test_ssrf_guard_refuses_an_ipv6_literal_with_a_zone_id_when_its_address_is_refused(literal: str) -> None:
    assert _refused(f"https://[{literal}]/hooks", DestinationPolicy())


@pytest.mark.parametrize("bad", ["169.254.169.254", "::ffff:0:10.0.0.1", "64:ff9b::7f00:1", "fd00::1"])
def test_ssrf_guard_refuses_a_dns_answer_mixing_a_public_address_with_a_refused_one(bad: str) -> None:
    def resolver(host: str, port: int) -> Sequence[str]:
        return ["93.184.216.34", bad] if host == "hooks.example.test" else []

    assert _refused("https://hooks.example.test/hooks", DestinationPolicy(resolver=resolver))
    answers = [bad, "2606:2800:220:1:248:1893:25c8:1946"]
    assert _refused("https://hooks.example.test/hooks", DestinationPolicy(resolver=lambda h, p: answers))
