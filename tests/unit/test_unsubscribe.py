"""One-click unsubscribe (issue 19, RFC 8058): tokens are a pure function of the delivery and its
due time, signed and expiring; a click suppresses that address for that account and kind only,
idempotently; forged, tampered and expired tokens are refused with a clear 4xx error."""

from __future__ import annotations

from datetime import timedelta

import pytest
from reminders.domain.models import ChannelType
from reminders.domain.states import DeliveryState
from reminders.domain.suppression import SuppressionReason, address_hash
from reminders.domain.unsubscribe import (
    TOKEN_VALID_AFTER_DUE,
    ExpiredTokenError,
    InvalidTokenError,
    make_token,
    read_token,
)
from reminders.services.intents import ChannelSpec
from reminders.services.unsubscribe import Unsubscribe

from tests.unit.fakes import T0, World

KEY = b"unsubscribe-test-key-0123456789ab"
EMAIL = "user@example.com"
MAIL = (ChannelSpec(ChannelType.EMAIL, EMAIL),)


def _token(**over: object) -> str:
    args: dict[str, object] = dict(
        account_id="acct-1", kind="renewal", address_hash=address_hash(EMAIL), delivery_key="dlv_1", due_at=T0
    )
    args.update(over)
    return make_token(KEY, **args)  # type: ignore[arg-type]


@pytest.fixture
def w() -> World:
    return World()


def _unsub(w: World) -> Unsubscribe:
    return Unsubscribe(
        suppressions=w.suppressions,
        secret=lambda: KEY,
        clock=w.clock,
        telemetry=w.telemetry,
        base_url="https://x",
    )


def test_a_token_is_a_pure_function_of_the_delivery_and_its_due_time() -> None:
    assert _token() == _token()
    assert _token(due_at=T0 + timedelta(seconds=1)) != _token()
    claim = read_token([KEY], _token(), T0)
    assert (claim.account_id, claim.kind, claim.delivery_key) == ("acct-1", "renewal", "dlv_1")
    assert claim.expires_at == int((T0 + TOKEN_VALID_AFTER_DUE).timestamp())
    assert EMAIL not in _token()  # only the address's hash, which the suppression list keys by


def test_a_token_expires_relative_to_its_due_time_never_to_now() -> None:
    read_token([KEY], _token(), T0 + TOKEN_VALID_AFTER_DUE)  # still valid at the boundary
    with pytest.raises(ExpiredTokenError):
        read_token([KEY], _token(), T0 + TOKEN_VALID_AFTER_DUE + timedelta(seconds=1))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # signature altered
        lambda t: "x" + t[1:],  # payload altered
        lambda t: t.replace(".", ""),  # no separator
        lambda t: t + ".x",  # two separators
        lambda t: "",
        lambda t: "!!!.???",
        lambda t: "a" * 600,
        lambda t: make_token(
            b"another-key",
            account_id="acct-1",
            kind="renewal",
            address_hash="a_0",
            delivery_key="d",
            due_at=T0,
        ),
    ],
)
def test_forged_or_tampered_tokens_are_refused(mutate: object) -> None:
    with pytest.raises(InvalidTokenError):
        read_token([KEY], mutate(_token()), T0)  # type: ignore[operator]


def test_an_unsubscribe_click_suppresses_that_kind_for_that_account_only(w: World) -> None:
    u = _unsub(w)
    r = w.create("k1", channels=MAIL)
    w.poll("email")
    token = u.token(r, w.delivery(r.id, "email-0"))
    assert u.unsubscribe(token) == "unsubscribed"
    (entry,) = w.suppressions.list("acct-1")
    assert entry.reason is SuppressionReason.UNSUBSCRIBE and entry.scope == "renewal"
    assert entry.address_hash == address_hash(EMAIL)
    # the next reminder of that kind: suppressed, unsent; another kind or account: sent
    nxt = w.create("k2", channels=MAIL)
    assert [x.outcome for x in w.poll("email")] == ["suppressed"]
    assert w.delivery(nxt.id, "email-0").state is DeliveryState.DEAD_LETTER
    other_account = w.create("k3", channels=MAIL, account_id="acct-2")
    assert [x.outcome for x in w.poll("email")] == ["delivered"]
    assert w.delivery(other_account.id, "email-0").state is DeliveryState.DELIVERED


def test_unsubscribe_replay_is_idempotent(w: World) -> None:
    u = _unsub(w)
    token = _token()
    assert [u.unsubscribe(token) for _ in range(3)] == ["unsubscribed"] * 3
    assert len(w.suppressions.list("acct-1")) == 1
    assert w.telemetry.counts["unsubscribed"] == 1 and w.telemetry.counts["unsubscribe_repeated"] == 2


def test_a_forged_unsubscribe_writes_nothing(w: World) -> None:
    with pytest.raises(InvalidTokenError):
        _unsub(w).unsubscribe(_token()[:-3] + "AAA")
    assert w.suppressions.items == {}


def test_headers_are_identical_on_every_call_and_name_one_click_post(w: World) -> None:
    u = _unsub(w)
    r = w.create("k1", channels=MAIL)
    d = w.delivery(r.id, "email-0")
    first = u.headers(d, r)
    w.clock.advance(7200)
    assert u.headers(d, r) == first
    assert first["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert first["List-Unsubscribe"].startswith("<https://x/unsubscribe/")
    assert (
        Unsubscribe(suppressions=None, secret=lambda: KEY, clock=w.clock, telemetry=w.telemetry).headers(d, r)
        == {}
    )
