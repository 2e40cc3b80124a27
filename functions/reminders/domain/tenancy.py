"""Tenant scoping: which accounts an API caller (its IAM principal) may act for. Pure.

Acting for an account the principal is not granted (creating a reminder or endpoint for it, looking
a key up in it) is a 403; a reminder or endpoint of another account reads as absent, a 404, so ids
leak nothing. The bootstrap principal (a deployment setting) may act for every account.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ForbiddenError, NotFoundError

ALL_ACCOUNTS = "*"
_ASSUMED_ROLE = re.compile(r"^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/[^/]+$")


def principal_names(user_arn: str) -> list[str]:
    """The names a grant may be held under: the caller's ARN and, for an assumed-role session, its
    role's ARN (``arn:aws:sts::A:assumed-role/R/s`` → ``arn:aws:iam::A:role/R``)."""
    names = [user_arn]
    m = _ASSUMED_ROLE.match(user_arn)
    if m:
        names.append(f"arn:{m.group(1)}:iam::{m.group(2)}:role/{m.group(3)}")
    return names


@dataclass(frozen=True, slots=True)
class Caller:
    principal: str | None
    accounts: frozenset[str] = frozenset()

    def may_act_for(self, account_id: str) -> bool:
        return ALL_ACCOUNTS in self.accounts or account_id in self.accounts

    def require(self, account_id: str) -> None:
        """Acting for ``account_id``: 403 unless granted."""
        if self.principal is None:
            raise ForbiddenError("no IAM principal on the request")
        if not self.may_act_for(account_id):
            raise ForbiddenError(f"the caller may not act for account {account_id}")

    def require_all(self) -> None:
        """Acting across every account (a preview of all of them): the bootstrap principal only."""
        if self.principal is None:
            raise ForbiddenError("no IAM principal on the request")
        if ALL_ACCOUNTS not in self.accounts:
            raise ForbiddenError("the caller may act for named accounts only: give account_id")

    def sees(self, account_id: str) -> bool:
        """A resource of ``account_id`` is visible (else it reads as not found)."""
        return self.principal is not None and self.may_act_for(account_id)

    def check_visible(self, account_id: str, what: str) -> None:
        if not self.sees(account_id):
            raise NotFoundError(f"{what} not found")
