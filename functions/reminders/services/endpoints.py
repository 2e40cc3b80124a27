"""Use cases of webhook endpoints: create, get, change, delete, rotate the secret; and the lookup the
webhook sender makes at every send (cached briefly per function instance).

Every reference to an endpoint is (account, endpoint) (issue 24): the sender's cache is keyed by
both, so one account's lookup (its "no such endpoint", or another's endpoint) never answers
another's; the rate limiter's lookup by id alone fills only the owner's entry; a reminder may name
only its own account's endpoint, at create and at correction alike (:meth:`Endpoints.use`); the
endpoint's health item is owned by the account that created the endpoint, from its creation.

The URL is checked by the SSRF guard at creation and on every change (and again at every send by
the sender). A delete is refused (409, with the count) while a delivery that is not terminal names
the endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

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


class HealthOwner(Protocol):
    def own(self, endpoint_id: str, account_id: str) -> None:
        """The endpoint's health item belongs to ``account_id`` from now on (its creation)."""
        ...


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
        health: HealthOwner | None = None,
    ) -> None:
        self.store = store
        self.reminders = reminders
        self.clock = clock
        self.telemetry = telemetry
        self.check_url = check_url
        self.health = health
        #: (account, endpoint id) -> (when read, the endpoint if it is that account's, else None)
        self._cache: dict[tuple[str, str], tuple[float, Endpoint | None]] = {}
        #: endpoint id -> (when read, its rate): the limiter's lookup, which knows no account
        self._rates: dict[str, tuple[float, float | None]] = {}
        #: endpoint id -> when a read found no endpoint of that id at all (true for every account)
        self._absent: dict[str, float] = {}
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
        if not self.store.put_new(endpoint) and not self._own_put(endpoint, secret):
            adopted = self._adopt(endpoint) if cmd.bare_urls else None
            if adopted is None:
                raise ConflictError(
                    "an endpoint for bare URLs of this origin already exists for this account"
                )
            return adopted
        if self.health is not None:
            self.health.own(eid, cmd.account_id)  # no other account's outcomes ever count in it
        self._forget(eid)  # an absence this instance remembers (a bare URL's implicit endpoint)
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
            # the secret shown now is the account's own, sealed (the implicit one's derived key
            # keeps signing through the overlap)
            rotated, secret = rotate(current, self.clock.now(), DEFAULT_ROTATION_OVERLAP_SECONDS)
            updated = replace(
                rotated,
                url=wanted.url,
                rate_per_second=wanted.rate_per_second,
                description=wanted.description,
                implicit=False,
            )
            if self._save(updated, current.rev):
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
            if self._save(updated, current.rev):
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
            now = self.clock.now()
            # An implicit endpoint's new key is derived too (a new salt): still no KMS request to
            # open it; a registered endpoint's is a random secret of its own, sealed.
            fresh = (
                self.store.derived_key(current.account_id, current.id, iso(now)) if current.implicit else None
            )
            updated, secret = rotate(current, now, overlap_seconds, fresh)
            if self._save(updated, current.rev):
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
            # False with the endpoint gone: our delete landed and its answer was lost (botocore's
            # retry found nothing to delete), or a concurrent delete won: deleted either way.
            if self.store.delete(endpoint_id, current.seq) or self.store.get(endpoint_id) is None:
                self._forget(endpoint_id)
                self.telemetry.count("endpoint_deleted")
                return
        raise StoreConflictError("endpoint changed concurrently; retry")

    # -- a write whose answer was lost ----------------------------------------------------------
    # botocore retried the conditional write and the retry failed its own condition: the write is
    # there. Recognised by what only this request wrote (a fresh secret, our revision and fields).
    def _own_put(self, endpoint: Endpoint, secret: str) -> bool:
        stored = self.store.get(endpoint.id)
        own = (
            stored is not None
            and stored.account_id == endpoint.account_id
            and [(k.secret, k.created_at) for k in stored.keys] == [(secret, endpoint.keys[0].created_at)]
        )
        if own:
            self.telemetry.count("own_write_recognised")
        return own

    def _save(self, updated: Endpoint, expected_rev: int) -> bool:
        if self.store.save(updated, expected_rev):
            return True
        stored = self.store.get(updated.id)
        written = replace(updated, rev=expected_rev + 1)
        own = stored is not None and replace(stored, seq=updated.seq) == written
        if own:
            updated.rev = expected_rev + 1
            self.telemetry.count("own_write_recognised")
        return own

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
    def use(
        self,
        endpoint_id: str,
        account_id: str,
        reminder_id: str,
        channel_id: str,
        field: str = "channels.endpoint_id",
    ) -> None:
        """Before a reminder naming ``endpoint_id`` is written (created or corrected): the endpoint
        exists, is the account's, and the use is on record (a delete counts it). Otherwise a 422
        naming ``field``, the same for another account's endpoint as for a missing one."""
        endpoint = self.store.get(endpoint_id) if is_endpoint_id(endpoint_id) else None
        if endpoint is None or endpoint.account_id != account_id:
            raise ValidationError(field, "no such endpoint for this account")
        if not self.store.add_use(endpoint_id, reminder_id, channel_id, iso(self.clock.now())):
            raise ValidationError(field, "no such endpoint for this account")

    # -- the sender's lookup -----------------------------------------------------------------
    def for_send(self, account_id: str, destination: str) -> Endpoint | None:
        """The endpoint a webhook delivery sends through: the one it names, or the implicit endpoint
        of its account and URL origin when there is one (None: none — the sender's
        :meth:`signing_endpoint` makes a bare URL's, the receipts' check refuses —; or another
        account's, which is no endpoint of this one)."""
        eid = destination if is_endpoint_id(destination) else implicit_endpoint_id(account_id, destination)
        key = (account_id, eid)
        mono = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            absent = self._fresh(self._absent.get(eid), mono)
        if hit is not None and mono - hit[0] <= LOOKUP_CACHE_SECONDS:
            endpoint = hit[1]
            if endpoint is None:
                return None  # another account's endpoint (its owner never changes)
        else:
            endpoint = None if absent else self._read(eid, mono)
        if (endpoint is None and is_endpoint_id(destination)) or (
            endpoint is not None and not endpoint.enabled
        ):
            # Terminal for the delivery (endpoint_not_found, endpoint_disabled): never on a cached or
            # eventually consistent answer, which may predate the endpoint's creation or re-enable
            # (issue 25 item 8). One consistent read, on this path only.
            endpoint = self._read(eid, mono, consistent=True)
        if endpoint is not None and endpoint.account_id != account_id:
            self._remember(key, mono, None)  # never sign one account's reminder with another's endpoint
            return None
        return endpoint

    def signing_endpoint(self, account_id: str, destination: str) -> Endpoint | None:
        """The sender's lookup (issue 24): :meth:`for_send`, and for a bare URL whose account has no
        endpoint of that origin yet, the implicit one made now — its own secret, derived from the
        deployment's sealed key, the account, the endpoint and a stored salt (no KMS request per
        endpoint or send: the deployment key is unwrapped once per instance). None only for a named
        endpoint that is not the account's (or is gone): a webhook is never signed with a shared
        secret."""
        endpoint = self.for_send(account_id, destination)
        if endpoint is not None and _sealed_and_never_shown(endpoint):
            return self._rederive(endpoint)
        if endpoint is not None or is_endpoint_id(destination):
            return endpoint
        eid = implicit_endpoint_id(account_id, destination)
        now = self.clock.now()
        made = Endpoint(
            id=eid,
            account_id=account_id,
            url=origin_of(destination),
            created_at=iso(now),
            keys=[self.store.derived_key(account_id, eid, iso(now))],
            implicit=True,
        )
        if self.store.put_new(made):
            if self.health is not None:
                self.health.own(eid, account_id)  # the owner is fixed at creation (issue 24 item 1)
            self.telemetry.count("implicit_endpoint_made")
            self.telemetry.log("endpoint_created", endpoint_id=eid)
            found: Endpoint | None = made
        else:  # made meanwhile (another consumer): the stored one
            found = self.store.get(eid)
            if found is not None and found.account_id != account_id:
                found = None
        self._forget(eid)
        return found

    def _rederive(self, endpoint: Endpoint) -> Endpoint:
        """An implicit endpoint stored before its secrets were derived, whose one sealed secret was
        never shown (no receiver holds it): replaced by a derived key now, once, so its sends stop
        paying ``Decrypt``. Lost to a concurrent write: sent as read (the next send tries again)."""
        fresh = self.store.derived_key(endpoint.account_id, endpoint.id, endpoint.keys[0].created_at)
        updated = replace(endpoint, keys=[fresh])
        if not self._save(updated, endpoint.rev):
            return endpoint
        self._forget(endpoint.id)
        self.telemetry.count("implicit_endpoint_rederived")
        return updated

    def rate_of(self, endpoint_id: str) -> float | None:
        """The endpoint's own rate (None: none set, or no such endpoint). The limiter asks by id alone:
        its read fills the owner's entry of the sender's cache, or the "no such endpoint at all"."""
        mono = time.monotonic()
        with self._lock:
            hit = self._rates.get(endpoint_id)
            absent = self._fresh(self._absent.get(endpoint_id), mono)
        if hit is not None and mono - hit[0] <= LOOKUP_CACHE_SECONDS:
            return hit[1]
        if absent:
            return None
        endpoint = self._read(endpoint_id, mono)
        return endpoint.rate_per_second if endpoint is not None else None

    def _read(self, endpoint_id: str, mono: float, consistent: bool = False) -> Endpoint | None:
        """One read, remembered as what it is for everyone: the endpoint under its owner's key (and its
        rate), or the absence of any endpoint of that id (the same answer for every account)."""
        endpoint = self.store.get(endpoint_id, consistent=consistent)
        with self._lock:
            if len(self._cache) + len(self._absent) + len(self._rates) > 30_000:
                self._cache.clear()
                self._absent.clear()
                self._rates.clear()
            if endpoint is None:
                self._absent[endpoint_id] = mono
            else:
                self._cache[(endpoint.account_id, endpoint_id)] = (mono, endpoint)
                self._rates[endpoint_id] = (mono, endpoint.rate_per_second)
        return endpoint

    @staticmethod
    def _fresh(at: float | None, mono: float) -> bool:
        return at is not None and mono - at <= LOOKUP_CACHE_SECONDS

    def _remember(self, key: tuple[str, str], mono: float, endpoint: Endpoint | None) -> None:
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[key] = (mono, endpoint)

    def _forget(self, endpoint_id: str) -> None:
        with self._lock:
            for key in [k for k in self._cache if k[1] == endpoint_id]:
                del self._cache[key]
            self._rates.pop(endpoint_id, None)
            self._absent.pop(endpoint_id, None)


def _sealed_and_never_shown(e: Endpoint) -> bool:
    """An implicit endpoint's first key, sealed (stored before derivation): never shown, since only
    a rotation or a registration shows a secret, and both add a newer key."""
    return (
        e.implicit
        and len(e.keys) == 1
        and e.keys[0].salt is None
        and e.keys[0].expires_at is None
        and e.keys[0].created_at == e.created_at
    )
