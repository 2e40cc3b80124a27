"""Every operation of the API, as the adversarial-tenant sweep and the explorer act on it.

One entry per operation of ``/openapi.json``, keyed by ``(METHOD, path template)`` exactly as the
document spells them — never by handler, module or function name, so the catalogue survives the
handlers' reorganisation (routers per resource, the public routes in a function of their own). Each
entry says how the operation reaches stored data (``Reach``) and where a request carries a
reference to something stored (``Ref`` per location): the places an adversarial tenant puts
another account's ids, keys, tokens and endpoints.

``uncovered(document)`` lists the operations of a document the catalogue does not know: a new
route fails the sweep's test until it is described here and swept. ``stale(document)`` lists
entries the document no longer has. Pure: no I/O; the caller passes the document it fetched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

#: The methods an OpenAPI path item may hold operations under (other keys are not operations).
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class Reach(Enum):
    """How an operation reaches stored data, and so what another account must get from it."""

    STATIC = "static"  # no stored object: every caller gets the same answer (health, the document)
    BY_ID = "by_id"  # a stored object named in the path: another account's reads as missing (404)
    ACCOUNT = "account"  # acts for the account it names: one not granted is 403, as a missing one
    SIGNED = "signed"  # public (no IAM): its object is named inside a signed token or body


class Ref(Enum):
    """A kind of stored reference a request can carry."""

    ACCOUNT_ID = "account_id"
    REMINDER_ID = "reminder_id"
    BUSINESS_KEY = "business_key"  # (account, key) names a reminder; its id is a hash of the two
    ENDPOINT_ID = "endpoint_id"  # registered, or the implicit one of (account, origin) (a hash)
    LIST_CURSOR = "list_cursor"
    ADDRESS_HASH = "address_hash"  # a suppression entry
    UNSUBSCRIBE_TOKEN = "unsubscribe_token"
    RECEIPT = "receipt"  # (webhook id, reminder id) in a signed receiver receipt
    TEMPLATE_ID = "template_id"  # an account's own name for its template (as a business key)


@dataclass(frozen=True, slots=True)
class Route:
    method: str  # upper case, as in HTTP
    path: str  # the document's template, e.g. /reminders/{reminder_id}
    reach: Reach
    #: Where a request carries a reference, and its kind: ``path.<name>``, ``query.<name>``,
    #: ``body.<dotted field>`` (``[]`` a list item, ``<cid>`` a map key), ``header.<name>``.
    refs: tuple[tuple[str, Ref], ...] = ()
    writes: bool = False  # may change stored data (a refused call writes nothing)

    @property
    def key(self) -> tuple[str, str]:
        return (self.method, self.path)


_REMINDER = ("path.reminder_id", Ref.REMINDER_ID)
_ENDPOINT = ("path.endpoint_id", Ref.ENDPOINT_ID)
_ACCOUNT_IN_PATH = ("path.account_id", Ref.ACCOUNT_ID)
_ACCOUNT_IN_QUERY = ("query.account_id", Ref.ACCOUNT_ID)
_TEMPLATE = ("path.template_id", Ref.TEMPLATE_ID)

ROUTES: tuple[Route, ...] = (
    Route("GET", "/health", Reach.STATIC),
    Route("GET", "/openapi.json", Reach.STATIC),
    # -- reminders
    Route(
        "POST",
        "/reminders",
        Reach.ACCOUNT,
        (
            ("body.account_id", Ref.ACCOUNT_ID),
            ("body.key", Ref.BUSINESS_KEY),
            ("body.channels[].endpoint_id", Ref.ENDPOINT_ID),
            ("body.channels[].url", Ref.ENDPOINT_ID),  # an endpoint-shaped url names an endpoint
            ("body.template.id", Ref.TEMPLATE_ID),
        ),
        writes=True,
    ),
    Route(
        "GET",
        "/reminders",
        Reach.ACCOUNT,
        (_ACCOUNT_IN_QUERY, ("query.key", Ref.BUSINESS_KEY), ("query.cursor", Ref.LIST_CURSOR)),
    ),
    Route("GET", "/reminders/preview", Reach.ACCOUNT, (_ACCOUNT_IN_QUERY,)),
    Route("GET", "/reminders/{reminder_id}", Reach.BY_ID, (_REMINDER,)),
    Route(
        "PATCH",
        "/reminders/{reminder_id}",
        Reach.BY_ID,
        (_REMINDER, ("body.channels.<cid>.url", Ref.ENDPOINT_ID)),
        writes=True,
    ),
    Route("DELETE", "/reminders/{reminder_id}", Reach.BY_ID, (_REMINDER,), writes=True),
    # -- webhook endpoints
    Route("POST", "/endpoints", Reach.ACCOUNT, (("body.account_id", Ref.ACCOUNT_ID),), writes=True),
    Route("GET", "/endpoints/{endpoint_id}", Reach.BY_ID, (_ENDPOINT,)),
    Route("PATCH", "/endpoints/{endpoint_id}", Reach.BY_ID, (_ENDPOINT,), writes=True),
    Route("DELETE", "/endpoints/{endpoint_id}", Reach.BY_ID, (_ENDPOINT,), writes=True),
    Route("POST", "/endpoints/{endpoint_id}/enable", Reach.BY_ID, (_ENDPOINT,), writes=True),
    Route("POST", "/endpoints/{endpoint_id}/disable", Reach.BY_ID, (_ENDPOINT,), writes=True),
    Route("POST", "/endpoints/{endpoint_id}/rotate-secret", Reach.BY_ID, (_ENDPOINT,), writes=True),
    # -- the account's event endpoint
    Route("GET", "/accounts/{account_id}/event-endpoint", Reach.ACCOUNT, (_ACCOUNT_IN_PATH,)),
    Route(
        "PUT",
        "/accounts/{account_id}/event-endpoint",
        Reach.ACCOUNT,
        (_ACCOUNT_IN_PATH, ("body.endpoint_id", Ref.ENDPOINT_ID)),
        writes=True,
    ),
    Route("DELETE", "/accounts/{account_id}/event-endpoint", Reach.ACCOUNT, (_ACCOUNT_IN_PATH,), writes=True),
    # -- an account's email templates (issue 30)
    Route(
        "PUT",
        "/templates/{template_id}/versions/{version}",
        Reach.ACCOUNT,
        (("body.account_id", Ref.ACCOUNT_ID), _TEMPLATE),
        writes=True,
    ),
    Route("GET", "/templates/{template_id}/versions", Reach.ACCOUNT, (_ACCOUNT_IN_QUERY, _TEMPLATE)),
    Route(
        "GET", "/templates/{template_id}/versions/{version}", Reach.ACCOUNT, (_ACCOUNT_IN_QUERY, _TEMPLATE)
    ),
    Route(
        "POST",
        "/templates/{template_id}/versions/{version}/retire",
        Reach.ACCOUNT,
        (_ACCOUNT_IN_QUERY, _TEMPLATE),
        writes=True,
    ),
    Route(
        "POST",
        "/templates/{template_id}/versions/{version}/preview",
        Reach.ACCOUNT,
        (("body.account_id", Ref.ACCOUNT_ID), _TEMPLATE),
    ),
    # -- suppression list
    Route("GET", "/suppressions", Reach.ACCOUNT, (_ACCOUNT_IN_QUERY,)),
    Route(
        "DELETE",
        "/suppressions/{address_hash}",
        Reach.ACCOUNT,
        (_ACCOUNT_IN_QUERY, ("path.address_hash", Ref.ADDRESS_HASH)),
        writes=True,
    ),
    # -- public, signed
    Route(
        "POST", "/unsubscribe/{token}", Reach.SIGNED, (("path.token", Ref.UNSUBSCRIBE_TOKEN),), writes=True
    ),
    Route(
        "POST",
        "/inbound/receiver",
        Reach.SIGNED,
        (("body.webhook_id+body.reminder_id", Ref.RECEIPT),),
        writes=True,
    ),
)

CATALOGUE: Mapping[tuple[str, str], Route] = {r.key: r for r in ROUTES}


def operations(document: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Every ``(METHOD, path template)`` of an OpenAPI document."""
    return {
        (method.upper(), path)
        for path, item in (document.get("paths") or {}).items()
        for method in item
        if method in _METHODS
    }


def uncovered(
    document: Mapping[str, Any], known: Iterable[tuple[str, str]] = CATALOGUE
) -> list[tuple[str, str]]:
    """The document's operations that ``known`` (default: the catalogue) does not cover."""
    return sorted(operations(document) - set(known))


def stale(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Catalogue entries the document no longer has."""
    return sorted(set(CATALOGUE) - operations(document))
