"""Use cases of webhook endpoints: create, get, change, delete, rotate the secret; and the lookup the
webhook sender makes at every send (cached briefly per function instance).

The URL is checked by the SSRF guard at creation and on every change (and again at every send by
the sender). A delete is refused (409, with the count) while a delivery that is not terminal names
the endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..domain.endpoints import (
    DEFAULT_ROTATION_OVERLAP_SECONDS,
    Endpoint,
    EndpointStore,
    SigningKey,
    implicit_endpoint_id,
    is_endpoint_id,
    new_endpoint_id,
    new_secret,
    origin_of,
    rotate,
)
from ..domain.errors import ConflictError, NotFoundError, StoreConflictError, ValidationError
from ..domain.ports import Clock, ReminderStore, Telemetry
from ..domain.schedule import iso, parse_iso

WRITE_RETRIES = 3
ABANDONED_USE_SECONDS = 300.0  # a use whose reminder never appeared is forgotten after this
LOOKUP_CACHE_SECONDS = 5.0  # how long a sender trusts its copy of an endpoint (rotation, PATCH)


class EndpointInUseError(ConflictError):
    """The endpoint is named by deliveries that are not terminal."""

    def __init__(self, count: int) -> None:
        super().__init__(f"endpoint is used by {count} delivery(ies) not yet terminal; cancel them first")
        self.count = count


@dataclass(frozen=True, slots=True)
class NewEndpoint:
    account_id: str
    url: str
    rate_per_second: float | None = None
    description: str = ""
    bare_urls: bool = False  # take the implicit id of (account, origin): bare-url channels use it


@dataclass(frozen=True, slots=True)
class EndpointChange:
    url: str | None = None
    rate_per_second: float | None = None
    clear_rate: bool = False
    enabled: bool | None = None
    description: str | None = None


class Endpoints:
    def __init__(
        self,
        *,
        store: EndpointStore,
        reminders: ReminderStore,
        clock: Clock,
        telemetry: Telemetry,
        check_url: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.reminders = reminders
        self.clock = clock
        self.telemetry = telemetry
        self.check_url = check_url
        self._cache: dict[str, tuple[float, Endpoint | None]] = {}
        self._lock = threading.Lock()

    # -- the resource ------------------------------------------------------------------------
    def create(self, cmd: NewEndpoint) -> tuple[Endpoint, str]:
        """The new endpoint and its secret (the only time the secret is shown)."""
        if self.check_url is not None:
            self.check_url(cmd.url)
        now = self.clock.now()
        secret = new_secret()
        eid = implicit_endpoint_id(cmd.account_id, cmd.url) if cmd.bare_urls else new_endpoint_id()
        endpoint = Endpoint(
            id=eid,
            account_id=cmd.account_id,
            url=cmd.url,
            created_at=iso(now),
            rate_per_second=cmd.rate_per_second,
            description=cmd.description,
            keys=[SigningKey(secret, iso(now))],
        )
        if not self.store.put_new(endpoint):
            adopted = self._adopt(endpoint) if cmd.bare_urls else None
            if adopted is None:
                raise ConflictError(
                    "an endpoint for bare URLs of this origin already exists for this account"
                )
            return adopted
        self.telemetry.count("endpoint_created")
        self.telemetry.log("endpoint_created", endpoint_id=eid)
        return endpoint, secret

    def _adopt(self, wanted: Endpoint) -> tuple[Endpoint, str] | None:
        """The account registers the origin whose implicit endpoint the service made for its bare
        URLs: it becomes the account's own, with a new secret (shown now) — a rotation, so a secret
        it read before by ``rotate-secret`` keeps signing for the default overlap. None: the id is
        taken by an endpoint the account registered itself."""
        for _ in range(WRITE_RETRIES):
            current = self.store.get(wanted.id)
            if current is None or not current.implicit or current.account_id != wanted.account_id:
                return None
            rotated, secret = rotate(current, self.clock.now(), DEFAULT_ROTATION_OVERLAP_SECONDS)
            updated = replace(
                rotated,
                url=wanted.url,
                rate_per_second=wanted.rate_per_second,
                description=wanted.description,
                implicit=False,
            )
            if self.store.save(updated, current.rev):
                self._forget(wanted.id)
                self.telemetry.count("endpoint_created")
                self.telemetry.log("endpoint_created", endpoint_id=wanted.id)
                return updated, secret
        raise StoreConflictError("endpoint changed concurrently; retry")

    def get(self, endpoint_id: str, visible: Callable[[str], bool] = lambda _a: True) -> Endpoint:
        """The endpoint, if ``visible(account_id)``; else NotFound (no existence leak)."""
        endpoint = self.store.get(endpoint_id) if is_endpoint_id(endpoint_id) else None
        if endpoint is None or not visible(endpoint.account_id):
            raise NotFoundError(f"endpoint {endpoint_id} not found")
        return endpoint

    def change(
        self, endpoint_id: str, change: EndpointChange, visible: Callable[[str], bool] = lambda _a: True
    ) -> Endpoint:
        if change.url is not None and self.check_url is not None:
            self.check_url(change.url)
        for _ in range(WRITE_RETRIES):
            current = self.get(endpoint_id, visible)
            updated = replace(
                current,
                url=change.url if change.url is not None else current.url,
                rate_per_second=None
                if change.clear_rate
                else (
                    change.rate_per_second if change.rate_per_second is not None else current.rate_per_second
                ),
                enabled=change.enabled if change.enabled is not None else current.enabled,
                description=change.description if change.description is not None else current.description,
            )
            if self.store.save(updated, current.rev):
                self._forget(endpoint_id)
                self.telemetry.count("endpoint_changed")
                return updated
        raise StoreConflictError("endpoint changed concurrently; retry")

    def rotate_secret(
        self,
        endpoint_id: str,
        overlap_seconds: float = DEFAULT_ROTATION_OVERLAP_SECONDS,
        visible: Callable[[str], bool] = lambda _a: True,
    ) -> tuple[Endpoint, str]:
        for _ in range(WRITE_RETRIES):
            current = self.get(endpoint_id, visible)
            updated, secret = rotate(current, self.clock.now(), overlap_seconds)
            if self.store.save(updated, current.rev):
                self._forget(endpoint_id)
                self.telemetry.count("endpoint_secret_rotated")
                self.telemetry.log("endpoint_secret_rotated", endpoint_id=endpoint_id)
                return updated, secret
        raise StoreConflictError("endpoint changed concurrently; retry")

    def delete(self, endpoint_id: str, visible: Callable[[str], bool] = lambda _a: True) -> None:
        for _ in range(WRITE_RETRIES):
            current = self.get(endpoint_id, visible)
            live = self.open_uses(endpoint_id)
            if live:
                raise EndpointInUseError(live)
            if self.store.delete(endpoint_id, current.seq):
                self._forget(endpoint_id)
                self.telemetry.count("endpoint_deleted")
                return
        raise StoreConflictError("endpoint changed concurrently; retry")

    def open_uses(self, endpoint_id: str) -> int:
        """How many deliveries naming the endpoint are not terminal (finished uses are dropped)."""
        uses = self.store.uses(endpoint_id)
        if not uses:
            return 0
        rows = {r.id: r for r in self.reminders.batch_get(sorted({rid for rid, _, _ in uses}))}
        finished: list[tuple[str, str]] = []
        live = 0
        now = self.clock.now()
        for rid, cid, at in uses:
            r = rows.get(rid)
            d = r.deliveries.get(cid) if r else None
            if r is None:
                # Written just before its reminder: a create in flight counts; one that never wrote
                # its reminder (refused, paused) is dropped once it is older than any request.
                if at and (now - parse_iso(at)).total_seconds() > ABANDONED_USE_SECONDS:
                    finished.append((rid, cid))
                else:
                    live += 1
            elif d is None or d.state.terminal or d.destination != endpoint_id:
                finished.append((rid, cid))
            else:
                live += 1
        if finished:
            self.store.drop_uses(endpoint_id, finished)
        return live

    # -- reminders that name an endpoint -----------------------------------------------------
    def use(self, endpoint_id: str, account_id: str, reminder_id: str, channel_id: str) -> None:
        """Before a reminder naming ``endpoint_id`` is written: the endpoint exists, is the account's,
        and the use is on record (a delete counts it). 422 otherwise, naming the field."""
        endpoint = self.store.get(endpoint_id) if is_endpoint_id(endpoint_id) else None
        if endpoint is None or endpoint.account_id != account_id:
            raise ValidationError("channels.endpoint_id", "no such endpoint for this account")
        if not self.store.add_use(endpoint_id, reminder_id, channel_id, iso(self.clock.now())):
            raise ValidationError("channels.endpoint_id", "no such endpoint for this account")

    # -- the sender's lookup -----------------------------------------------------------------
    def for_send(self, account_id: str, destination: str) -> Endpoint | None:
        """The endpoint a webhook delivery sends through: the one it names, or the implicit endpoint
        of its account and URL origin when there is one (None: none; the sender's
        :meth:`signing_endpoint` makes a bare URL's, the receipts' check refuses)."""
        eid = destination if is_endpoint_id(destination) else implicit_endpoint_id(account_id, destination)
        mono = time.monotonic()
        with self._lock:
            hit = self._cache.get(eid)
        if hit is not None and mono - hit[0] <= LOOKUP_CACHE_SECONDS:
            return hit[1]
        endpoint = self.store.get(eid, consistent=False)
        if endpoint is not None and endpoint.account_id != account_id:
            endpoint = None  # never sign one account's reminder with another's endpoint
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[eid] = (mono, endpoint)
        return endpoint

    def signing_endpoint(self, account_id: str, destination: str) -> Endpoint | None:
        """The sender's lookup (issue 24): :meth:`for_send`, and for a bare URL whose account has no
        endpoint of that origin yet, the implicit one made now — its own secret under its own data
        key (one ``GenerateDataKey`` per account and origin, ever; opening it later is the cached
        data key of :class:`SecretSealer`, no ``Decrypt`` per send). None only for a named endpoint
        that is not the account's (or is gone): a webhook is never signed with a shared secret."""
        endpoint = self.for_send(account_id, destination)
        if endpoint is not None or is_endpoint_id(destination):
            return endpoint
        eid = implicit_endpoint_id(account_id, destination)
        now = self.clock.now()
        made = Endpoint(
            id=eid,
            account_id=account_id,
            url=origin_of(destination),
            created_at=iso(now),
            keys=[SigningKey(new_secret(), iso(now))],
            implicit=True,
        )
        if self.store.put_new(made):
            self.telemetry.count("implicit_endpoint_made")
            self.telemetry.log("endpoint_created", endpoint_id=eid)
            found: Endpoint | None = made
        else:  # made meanwhile (another consumer): the stored one
            found = self.store.get(eid)
            if found is not None and found.account_id != account_id:
                found = None
        self._forget(eid)
        return found

    def rate_of(self, endpoint_id: str) -> float | None:
        """The endpoint's own rate (None: none set, or no such endpoint), from the sender's cache."""
        mono = time.monotonic()
        with self._lock:
            hit = self._cache.get(endpoint_id)
        if hit is not None and mono - hit[0] <= LOOKUP_CACHE_SECONDS:
            endpoint = hit[1]
        else:
            endpoint = self.store.get(endpoint_id, consistent=False)
            with self._lock:
                self._cache[endpoint_id] = (mono, endpoint)
        return endpoint.rate_per_second if endpoint is not None else None

    def _forget(self, endpoint_id: str) -> None:
        with self._lock:
            self._cache.pop(endpoint_id, None)
