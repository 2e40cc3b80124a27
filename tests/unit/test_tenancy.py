"""Tenant scoping, pure and as a use case (domain/tenancy.py, services/tenancy.py): which accounts a
caller may act for, what it is told when it may not, and how long a grant is cached."""

from __future__ import annotations

import pytest
from reminders.domain.errors import ForbiddenError, NotFoundError
from reminders.domain.tenancy import ALL_ACCOUNTS, Caller, principal_names
from reminders.services import tenancy as tenancy_service
from reminders.services.tenancy import GRANTS_CACHE_SECONDS, Tenancy

USER = "arn:aws:iam::111122223333:user/alice"
SESSION = "arn:aws:sts::111122223333:assumed-role/Support/alice-session"
ROLE = "arn:aws:iam::111122223333:role/Support"


# -- the names a grant is held under --------------------------------------------------------------------
def test_a_plain_principal_is_its_only_name_when_it_is_no_assumed_role() -> None:
    assert principal_names(USER) == [USER]
    assert principal_names(ROLE) == [ROLE]


def test_an_assumed_role_session_also_holds_its_roles_grants_when_named() -> None:
    assert principal_names(SESSION) == [SESSION, ROLE]


def test_the_partition_carries_over_when_the_session_is_in_another_partition() -> None:
    session = "arn:aws-cn:sts::111122223333:assumed-role/Ops/s1"
    assert principal_names(session) == [session, "arn:aws-cn:iam::111122223333:role/Ops"]


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:sts::11112222333:assumed-role/Support/s",  # 11 digits
        "arn:aws:sts::111122223333:assumed-role/Support",  # no session
        "arn:aws:sts::111122223333:assumed-role/Support/s/extra",
        "arn:aws:sts::111122223333:federated-user/alice",
        "xarn:aws:sts::111122223333:assumed-role/Support/s",
        "arn:aws:sts::111122223333:assumed-role//s",
    ],
)
def test_no_role_name_is_derived_when_the_arn_is_no_assumed_role_session(arn: str) -> None:
    assert principal_names(arn) == [arn]


# -- what a caller may do -------------------------------------------------------------------------------
def test_a_caller_acts_for_its_granted_accounts_only_when_not_bootstrap() -> None:
    c = Caller(USER, frozenset({"acct-a"}))
    assert c.may_act_for("acct-a") and not c.may_act_for("acct-b")
    assert c.sees("acct-a") and not c.sees("acct-b")
    c.require("acct-a")
    c.check_visible("acct-a", "reminder")


def test_acting_for_another_account_is_a_403_naming_it_when_not_granted() -> None:
    with pytest.raises(ForbiddenError) as e:
        Caller(USER, frozenset({"acct-a"})).require("acct-b")
    assert str(e.value) == "the caller may not act for account acct-b"


def test_another_accounts_object_reads_as_absent_when_not_visible() -> None:
    with pytest.raises(NotFoundError) as e:
        Caller(USER, frozenset({"acct-a"})).check_visible("acct-b", "reminder")
    assert str(e.value) == "reminder not found"


def test_a_request_without_principal_is_refused_and_sees_nothing_when_even_all_accounts_are_named() -> None:
    c = Caller(None, frozenset({ALL_ACCOUNTS}))
    assert c.may_act_for("acct-a")  # the grant alone: it is the missing principal that refuses
    assert not c.sees("acct-a")
    for act in (lambda: c.require("acct-a"), c.require_all):
        with pytest.raises(ForbiddenError) as e:
            act()
        assert str(e.value) == "no IAM principal on the request"
    with pytest.raises(NotFoundError):
        c.check_visible("acct-a", "endpoint")


def test_the_bootstrap_principal_acts_for_every_account_when_granted_all() -> None:
    c = Caller(USER, frozenset({ALL_ACCOUNTS}))
    assert ALL_ACCOUNTS == "*"
    assert c.may_act_for("acct-a") and c.may_act_for("anything") and c.sees("acct-z")
    c.require("acct-b")
    c.require_all()


def test_acting_across_every_account_is_a_403_when_only_named_accounts_are_granted() -> None:
    with pytest.raises(ForbiddenError) as e:
        Caller(USER, frozenset({"acct-a", "acct-b"})).require_all()
    assert str(e.value) == "the caller may act for named accounts only: give account_id"


# -- the use case: grants looked up, cached briefly ------------------------------------------------------
class Grants:
    def __init__(self, grants: dict[str, set[str]]) -> None:
        self.grants = grants
        self.calls: list[str] = []

    def __call__(self, name: str) -> set[str]:
        self.calls.append(name)
        return set(self.grants.get(name, set()))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(tenancy_service.time, "monotonic", lambda: now[0])
    return now


def test_a_request_without_principal_gets_no_accounts_when_none_is_named(clock: list[float]) -> None:
    grants = Grants({"": {"acct-a"}})
    t = Tenancy(accounts_of=grants, bootstrap_principal="")
    for arn in (None, ""):
        c = t.caller(arn)
        assert c.principal is None and c.accounts == frozenset()
    assert grants.calls == []


def test_a_session_holds_its_own_and_its_roles_grants_when_both_have_some(clock: list[float]) -> None:
    grants = Grants({SESSION: {"acct-s"}, ROLE: {"acct-r"}})
    c = Tenancy(accounts_of=grants).caller(SESSION)
    assert c == Caller(SESSION, frozenset({"acct-s", "acct-r"}))
    assert grants.calls == [SESSION, ROLE]


def test_the_bootstrap_principal_gets_every_account_when_it_calls(clock: list[float]) -> None:
    grants = Grants({USER: {"acct-a"}})
    t = Tenancy(accounts_of=grants, bootstrap_principal=USER)
    assert t.bootstrap == USER
    assert t.caller(USER).accounts == frozenset({ALL_ACCOUNTS, "acct-a"})
    assert Tenancy(accounts_of=grants, bootstrap_principal=ROLE).caller(SESSION).accounts == {ALL_ACCOUNTS}
    assert t.caller("arn:aws:iam::111122223333:user/bob").accounts == frozenset()


def test_no_caller_is_bootstrap_when_the_setting_is_empty(clock: list[float]) -> None:
    t = Tenancy(accounts_of=Grants({}), bootstrap_principal="")
    assert t.bootstrap is None
    assert t.caller(USER).accounts == frozenset()


def test_a_grant_is_cached_for_fifteen_seconds_when_asked_again(clock: list[float]) -> None:
    assert GRANTS_CACHE_SECONDS == 15.0
    grants = Grants({USER: {"acct-a"}})
    t = Tenancy(accounts_of=grants)
    assert t.caller(USER) == Caller(USER, frozenset({"acct-a"}))
    grants.grants[USER] = {"acct-b"}  # revoked and re-granted elsewhere
    clock[0] += GRANTS_CACHE_SECONDS  # the boundary: still cached
    assert t.caller(USER) == Caller(USER, frozenset({"acct-a"}))
    assert grants.calls == [USER]
    clock[0] += 0.001
    assert t.caller(USER) == Caller(USER, frozenset({"acct-b"}))
    assert grants.calls == [USER, USER]


def test_the_grants_cache_is_emptied_when_it_holds_more_than_a_thousand_callers(clock: list[float]) -> None:
    grants = Grants({})
    t = Tenancy(accounts_of=grants)
    users = [f"arn:aws:iam::111122223333:user/u{i}" for i in range(1002)]
    for u in users[:1001]:
        t.caller(u)
    t.caller(users[0])
    assert len(grants.calls) == 1001  # 1,001 cached: the first is still there
    t.caller(users[1001])  # more than 1,000 before it: emptied, then it is cached
    t.caller(users[0])
    assert len(grants.calls) == 1003
