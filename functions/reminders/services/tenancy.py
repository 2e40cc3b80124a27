"""Use case: who is calling, and for which accounts (grants cached briefly per function instance)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..domain.tenancy import ALL_ACCOUNTS, Caller, principal_names

GRANTS_CACHE_SECONDS = 15.0  # a revoke takes effect within this on every API instance


class Tenancy:
    def __init__(
        self, *, accounts_of: Callable[[str], set[str]], bootstrap_principal: str | None = None
    ) -> None:
        self.accounts_of = accounts_of
        self.bootstrap = bootstrap_principal or None
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def caller(self, user_arn: str | None) -> Caller:
        if not user_arn:
            return Caller(None)
        mono = time.monotonic()
        with self._lock:
            hit = self._cache.get(user_arn)
        if hit is not None and mono - hit[0] <= GRANTS_CACHE_SECONDS:
            return Caller(user_arn, hit[1])
        accounts: set[str] = set()
        for name in principal_names(user_arn):
            if self.bootstrap and name == self.bootstrap:
                accounts.add(ALL_ACCOUNTS)
            accounts |= self.accounts_of(name)
        frozen = frozenset(accounts)
        with self._lock:
            if len(self._cache) > 1000:
                self._cache.clear()
            self._cache[user_arn] = (mono, frozen)
        return Caller(user_arn, frozen)
