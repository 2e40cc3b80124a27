"""Use cases of an account's templates (issue 30): register a version, read it, list, retire,
preview; check a reminder against the version it names; the version a send renders.

Versions are immutable, so each instance keeps what it read (``VersionCache``, keyed by account,
template and version: every cached reference carries its account). Only the retirement mark can
change: a create or correction trusts a cached mark for at most ``RETIRED_FRESH_SECONDS``; a send
does not look at it (a retired version still renders what it always rendered).

Compatibility with reminders written before templates existed (they all name a template id and
version that were never registered): a reminder is checked against a template, and rendered from
it, only when its account has registered that template id. A reminder naming an id its account
never registered is accepted and sent as before (the generic text email). Once an account has
registered any version of an id, naming a version of it that does not exist is a 422. Another
account's template is, to this account, an id it never registered (the same answer as a missing
one). Whether an account has an id is cached: yes for good, no for ``UNKNOWN_ID_SECONDS``.

The window this leaves (issue 30 item d), stated and bounded: for at most ``UNKNOWN_ID_SECONDS``
(60 s) after an instance answered "no such id" for an account, a create or correction on that
instance naming a version of the id that another instance registered meanwhile is not checked; the
reminder records that the version was not its account's (``Reminder.template_registered``) and
every attempt sends the built-in email, never a mix. A register on the same instance ends it at
once. Closing it would cost a read on every create naming an id its account never registered (every
reminder written the way reminders were before templates), which this answer exists to spare.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..domain.errors import ConflictError, NotFoundError, ValidationError
from ..domain.ports import Clock, TemplateStore
from ..domain.schedule import iso
from ..domain.templates import MAX_VERSIONS, RenderError, TemplateVersion, new_version

RETIRED_FRESH_SECONDS = 60.0
UNKNOWN_ID_SECONDS = 60.0
CACHE_VERSIONS = 128  # per instance: at most ~128 x 300 KB of sources, usually a few KB each
#: (account, template id) pairs remembered: any create may name any id, so the memory is bounded.
CACHE_IDS = 10_000


class VersionConflictError(ConflictError):
    """409: the version exists with other content; ``field`` names the first part that differs."""

    code = "template_version_exists"

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def first_difference(stored: dict[str, Any], written: dict[str, Any]) -> str:
    """The first field (as a 422 names it) where two versions' contents differ."""
    for name in ("default_locale", "locales", "variables", "webhook_rendered"):
        a, b = stored.get(name), written.get(name)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if key not in a or key not in b:
                    return f"{name}.{key}"
                x, y = a[key], b[key]
                if x != y and isinstance(x, dict) and isinstance(y, dict):
                    part = next(p for p in sorted(set(x) | set(y)) if x.get(p) != y.get(p))
                    return f"{name}.{key}.{part}"
                if x != y:
                    return f"{name}.{key}"
        return name
    return "body"  # pragma: no cover - only called when the contents differ


class VersionCache:
    """(account, template, version) -> (version, monotonic time read): an LRU of immutable content."""

    def __init__(self, size: int = CACHE_VERSIONS, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.monotonic = monotonic
        self.items: OrderedDict[tuple[str, str, int], tuple[TemplateVersion, float]] = OrderedDict()
        self.known_ids: dict[tuple[str, str], float] = {}  # (account, id) -> when "no" was read; inf: yes
        self.lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> tuple[TemplateVersion, float] | None:
        with self.lock:
            hit = self.items.get(key)
            if hit is not None:
                self.items.move_to_end(key)
            return hit

    def put(self, tv: TemplateVersion) -> None:
        with self.lock:
            key = (tv.account_id, tv.template_id, tv.version)
            self.items[key] = (tv, self.monotonic())
            self.items.move_to_end(key)
            if len(self.known_ids) >= CACHE_IDS:
                self.known_ids.clear()
            self.known_ids[(tv.account_id, tv.template_id)] = float("inf")
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@dataclass(frozen=True, slots=True)
class VersionSummary:
    version: int
    created_at: str
    retired_at: str | None


class Templates:
    def __init__(self, *, store: TemplateStore, clock: Clock, cache: VersionCache | None = None) -> None:
        self.store = store
        self.clock = clock
        self.cache = cache or VersionCache()

    # -- the account's resource ------------------------------------------------------------------
    def register(
        self, account_id: str, template_id: str, version: int, body: dict[str, Any]
    ) -> tuple[TemplateVersion, bool]:
        """PUT: (the version, created). The same content again answers the stored version (a retry);
        other content under an existing number is a 409: versions are immutable."""
        tv = new_version(
            account_id,
            template_id,
            version,
            default_locale=body["default_locale"],
            locales=body["locales"],
            variables=body.get("variables") or {},
            webhook_rendered=bool(body.get("webhook_rendered", False)),
            created_at=iso(self.clock.now()),
        )
        from .templating import check_sources

        check_sources(tv)
        if self.store.put_new(tv):
            self.cache.put(tv)
            return tv, True
        existing = self.store.get(account_id, template_id, version)
        if existing is None:  # pragma: no cover - versions are never deleted
            raise ConflictError("template version changed concurrently; retry")
        if existing.encode() != tv.encode():
            field = first_difference(existing.content(), tv.content())
            raise VersionConflictError(
                f"{field}: version {version} of template {template_id} exists with other content:"
                " versions are immutable, write the next version",
                field,
            )
        return existing, False

    def get(self, account_id: str, template_id: str, version: int) -> TemplateVersion:
        tv = self.store.get(account_id, template_id, version)
        if tv is None:
            raise NotFoundError(f"template {template_id} version {version} not found")
        self.cache.put(tv)
        return tv

    def versions(self, account_id: str, template_id: str) -> list[VersionSummary]:
        found = self.store.versions(account_id, template_id, MAX_VERSIONS)
        if not found:
            raise NotFoundError(f"template {template_id} not found")
        return [VersionSummary(*row) for row in found]

    def retire(self, account_id: str, template_id: str, version: int) -> TemplateVersion:
        if self.store.retire(account_id, template_id, version, iso(self.clock.now())) is None:
            raise NotFoundError(f"template {template_id} version {version} not found")
        return self.get(account_id, template_id, version)

    def preview(
        self, account_id: str, template_id: str, version: int, data: dict[str, Any], locale: str | None
    ) -> Any:
        """The rendered subject, text and HTML (``templating.RenderedEmail``) for sample data."""
        from .templating import render_version

        tv = self.get(account_id, template_id, version)
        try:
            return render_version(tv, locale, data)
        except RenderError as exc:
            raise ValidationError("data", f"the template cannot be rendered with this data: {exc}") from None

    # -- reminders -------------------------------------------------------------------------------
    def _version(
        self, account_id: str, template_id: str, version: int, fresh: float | None
    ) -> TemplateVersion | None:
        hit = self.cache.get((account_id, template_id, version))
        if hit is not None and (fresh is None or self.cache.monotonic() - hit[1] <= fresh):
            return hit[0]
        tv = self.store.get(account_id, template_id, version, consistent=fresh is not None)
        if tv is not None:
            self.cache.put(tv)
        return tv

    def _has_id(self, account_id: str, template_id: str) -> bool:
        key = (account_id, template_id)
        seen = self.cache.known_ids.get(key)
        if seen is not None and (seen == float("inf") or self.cache.monotonic() - seen <= UNKNOWN_ID_SECONDS):
            return seen == float("inf")
        has = bool(self.store.versions(account_id, template_id, 1))
        with self.cache.lock:
            if len(self.cache.known_ids) >= CACHE_IDS:
                self.cache.known_ids.clear()  # forgetting costs one read per id, never a wrong answer
            self.cache.known_ids[key] = float("inf") if has else self.cache.monotonic()
        return has

    def check_reminder(
        self,
        account_id: str,
        template_id: str,
        version: int,
        data: dict[str, Any],
        locale: str | None,
        *,
        field: str = "template.version",
        allow_retired: bool = False,
    ) -> bool:
        """At create and correction: the version exists for the account (when the account has the
        template id), is not retired, and renders with ``data`` (each declared variable present with
        its type: a 422 naming ``data.<name>``; a render refused: a 422 naming ``data``).
        ``allow_retired``: a correction of a reminder already pinned to the version (it keeps it).

        Answers whether the version is the account's (checked): the reminder records it and every
        send renders by that record (``Reminder.template_registered``), False when the account never
        registered the template id (the built-in email, whatever is registered later)."""
        # The id first (cached: yes for good, no for UNKNOWN_ID_SECONDS): a create naming an id its
        # account never registered — every reminder before templates — reads nothing when warm.
        if not self._has_id(account_id, template_id):
            return False
        tv = self._version(account_id, template_id, version, RETIRED_FRESH_SECONDS)
        if tv is None:
            raise ValidationError(field, f"template {template_id} has no version {version}")
        if tv.retired_at is not None and not allow_retired:
            raise ValidationError(field, f"template {template_id} version {version} is retired")
        from .templating import render_version

        try:
            render_version(tv, locale, data)
        except RenderError as exc:
            raise ValidationError("data", f"the template cannot be rendered with this data: {exc}") from None
        return True

    def for_send(self, account_id: str, template_id: str, version: int) -> TemplateVersion | None:
        """The version a send renders (cached for good: content never changes), or None (an id the
        account never registered: the generic email)."""
        return self._version(account_id, template_id, version, None)

    def for_send_consistent(self, account_id: str, template_id: str, version: int) -> TemplateVersion | None:
        """``for_send`` read consistently: a reminder whose check found the version missed it on an
        eventually consistent read (written moments ago; versions are never deleted)."""
        return self._version(account_id, template_id, version, 0.0)
