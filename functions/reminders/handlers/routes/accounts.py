"""Account-level routes: the account's event endpoint (issue 16) and its suppression list (issue 19),
with their models."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ... import runtime
from ...domain.errors import NotFoundError
from .shared import (
    AccountId,
    ApiModel,
    EndpointId,
    as_json,
    caller,
    linked,
    links_to,
    one_object_body,
    responses,
)

router = Router()


# -- the account's event endpoint (issue 16: operational events) -----------------------------------
EventType = Literal[
    "reminder.delivered", "reminder.dead_lettered", "endpoint.held", "endpoint.resumed", "endpoint.disabled"
]


class PutEventEndpoint(ApiModel):
    model_config = ConfigDict(extra="forbid")
    #: One of the account's endpoints: the events are signed with its secret(s), sent at its rate.
    endpoint_id: EndpointId
    #: The event types to send (empty or absent: all of them).
    event_types: list[EventType] = Field(default_factory=list, max_length=5)


class EventEndpointView(ApiModel):
    """Where the account's operational events go, and which ones."""

    account_id: str
    endpoint_id: str
    event_types: list[str]
    registered_at: str


_EVENT_ENDPOINT_TEXT = {
    200: "the account's event endpoint",
    404: "the account has no event endpoint (or no such route)",
}


def _event_endpoint_doc(*statuses: int) -> dict[int, Any]:
    return responses(_EVENT_ENDPOINT_TEXT, *statuses, ok=EventEndpointView)


def _event_endpoint_view(account_id: str, endpoint_id: str, types: tuple[str, ...], at: str) -> BaseModel:
    return EventEndpointView(
        account_id=account_id, endpoint_id=endpoint_id, event_types=list(types), registered_at=at
    )


@router.put(
    "/accounts/<account_id>/event-endpoint",
    responses=linked(
        _event_endpoint_doc(200, 403, 415, 422),
        links_to(
            "/accounts/{account_id}/event-endpoint",
            {"account_id": "$response.body#/account_id"},
            "get",
            "delete",
        ),
        200,
    ),
)
def put_event_endpoint(account_id: Annotated[AccountId, Path()], body: PutEventEndpoint) -> Response[Any]:
    one_object_body()
    caller().require(account_id)
    r = runtime.opevents_service().register(account_id, body.endpoint_id, body.event_types)
    return as_json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


@router.get("/accounts/<account_id>/event-endpoint", responses=_event_endpoint_doc(200, 403, 404, 422))
def get_event_endpoint(account_id: Annotated[AccountId, Path()]) -> Response[Any]:
    caller().require(account_id)
    r = runtime.opevents_service().registration(account_id)
    return as_json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


@router.delete("/accounts/<account_id>/event-endpoint", responses=_event_endpoint_doc(200, 403, 404, 422))
def delete_event_endpoint(account_id: Annotated[AccountId, Path()]) -> Response[Any]:
    caller().require(account_id)
    r = runtime.opevents_service().unregister(account_id)
    return as_json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


# -- suppression list (issue 19) ---------------------------------------------------------------------
AddressHash = Annotated[
    str, StringConstraints(pattern=r"^[akt]_[0-9a-f]{32}$")
]  # keyed per account t_; deployment-keyed k_ and unkeyed a_ (before)
Scope = Annotated[str, StringConstraints(pattern=r"^(\*|[A-Za-z0-9:_.\-]{1,64})$")]


class SuppressionView(ApiModel):
    """One entry: the address's hash (the address itself is never stored), why, what added it."""

    account_id: str
    address_hash: str
    reason: str
    source: str
    at: str
    scope: str


class SuppressionsView(ApiModel):
    account_id: str
    entries: list[SuppressionView]


class SuppressionsRemoved(ApiModel):
    account_id: str
    address_hash: str
    removed: int


_SUPPRESSIONS = {200: "the entries", 404: "no such entry", 422: "invalid input, naming the field"}
_SUPPRESSION_DOC = responses(_SUPPRESSIONS, 200, 403, 422, ok=SuppressionsView)
_REMOVED_DOC = responses(
    {**_SUPPRESSIONS, 200: "entries removed"}, 200, 403, 404, 422, ok=SuppressionsRemoved
)


@router.get("/suppressions", responses=_SUPPRESSION_DOC)
def list_suppressions(
    account_id: Annotated[AccountId, Query()], limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> Response[Any]:
    caller().require(account_id)
    entries = [
        SuppressionView(
            account_id=e.account_id,
            address_hash=e.address_hash,
            reason=e.reason.value,
            source=e.source,
            at=e.at,
            scope=e.scope,
        )
        for e in runtime.suppressions().list(account_id, limit=limit)
    ]
    return as_json(200, SuppressionsView(account_id=account_id, entries=entries))


@router.delete("/suppressions/<address_hash>", responses=_REMOVED_DOC)
def remove_suppression(
    address_hash: Annotated[AddressHash, Path()],
    account_id: Annotated[AccountId, Query()],
    scope: Annotated[Scope | None, Query()] = None,
) -> Response[Any]:
    caller().require(account_id)
    removed = runtime.suppressions().remove(account_id, address_hash, scope)
    if not removed:
        raise NotFoundError("no suppression entry for this account and address hash")
    return as_json(
        200, SuppressionsRemoved(account_id=account_id, address_hash=address_hash, removed=removed)
    )
