"""``/endpoints``: an account's webhook endpoints (their secrets, rates, health), with their models."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ... import runtime
from ...adapters.destinations import MAX_URL_LENGTH
from ...domain.endpoints import DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ROTATION_OVERLAP_SECONDS, Endpoint
from ...services.endpoints import EndpointChange, NewEndpoint
from .shared import (
    AccountId,
    ApiModel,
    EndpointId,
    as_json,
    caller,
    linked,
    links_to,
    number_problem,
    one_object_body,
    op_ref,
    responses,
    valid_text,
)

router = Router()


Url = Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]


def _storable(v: float) -> float:
    """A number DynamoDB holds (5e-324 is > 0, and below its smallest magnitude: it was a 500)."""
    problem = number_problem(v)
    if problem is not None:
        raise ValueError(problem)
    return v


Rate = Annotated[float, Field(gt=0, le=10_000), AfterValidator(_storable)]
Description = Annotated[str, StringConstraints(max_length=256)]


class CreateEndpoint(ApiModel):
    model_config = ConfigDict(extra="forbid")
    account_id: AccountId
    url: Url
    rate_per_second: Rate | None = None
    description: Description = ""
    #: Take the account's implicit endpoint of this URL's origin: bare-``url`` channels to that origin
    #: then sign with this endpoint's secret and share its rate.
    bare_urls: bool = False

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str) -> str:
        return valid_text(v, "description")


class PatchEndpoint(ApiModel):
    """Only the fields given change; ``rate_per_second: null`` returns to the default rate."""

    model_config = ConfigDict(extra="forbid")
    url: Url | None = None
    rate_per_second: Rate | None = None
    enabled: bool | None = None
    description: Description | None = None

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str | None) -> str | None:
        return v if v is None else valid_text(v, "description")


class RotateSecret(ApiModel):
    model_config = ConfigDict(extra="forbid")
    #: How long the previous secret keeps signing beside the new one (Standard Webhooks overlap).
    expires_in_seconds: int = Field(DEFAULT_ROTATION_OVERLAP_SECONDS, ge=0, le=MAX_ROTATION_OVERLAP_SECONDS)


class SigningKeyView(ApiModel):
    created_at: str
    expires_at: str | None  # None: the current secret


class EndpointHealthView(ApiModel):
    """The endpoint's health (issue 16): ``active`` | ``held`` (its deliveries parked, one probe at a
    time) | ``disabled`` (its deliveries dead-letter ``endpoint_disabled``; enable, then redrive)."""

    state: str
    why: str  # the reason class of the last transition ("" before any)
    since: str | None
    transitions: int
    recent_success_ratio: float | None  # over the sliding window (None: no recent send counted)
    backlog: int  # deliveries naming the endpoint that are not finished
    oldest_pending_age_seconds: float | None
    last_error_class: str
    next_probe_at: str | None


class EndpointView(ApiModel):
    """An endpoint as stored; never its secrets (only when each was made and until when it signs)."""

    id: str
    account_id: str
    url: str
    rate_per_second: float | None
    description: str
    enabled: bool
    created_at: str
    signing_keys: list[SigningKeyView]
    health: EndpointHealthView | None = None  # GET and enable/disable only


class EndpointSecretView(EndpointView):
    """Shown once, when the endpoint is created or its secret rotated: the new ``whsec_`` secret."""

    secret: str


def _endpoint_view(e: Endpoint, secret: str | None = None, with_health: bool = False) -> BaseModel:
    fields: dict[str, Any] = {
        "id": e.id,
        "account_id": e.account_id,
        "url": e.url,
        "rate_per_second": e.rate_per_second,
        "description": e.description,
        "enabled": e.enabled,
        "created_at": e.created_at,
        "signing_keys": [SigningKeyView(created_at=k.created_at, expires_at=k.expires_at) for k in e.keys],
    }
    if with_health:
        fields["health"] = _health_view(e.id, e.account_id)
    return EndpointSecretView(**fields, secret=secret) if secret is not None else EndpointView(**fields)


_TEXTS = {
    200: "the endpoint",
    201: "created; its secret is shown this once",
    404: "no such endpoint (or route)",
    409: "conflicts with what is stored (in use: the count of open deliveries)",
}


def _endpoint_doc(*statuses: int, secret: bool = False) -> dict[int, Any]:
    return responses(_TEXTS, *statuses, ok=EndpointSecretView if secret else EndpointView)


_ENDPOINT_LINKS = (
    links_to("/endpoints/{endpoint_id}", {"endpoint_id": "$response.body#/id"}, "get", "patch", "delete")
    | links_to("/endpoints/{endpoint_id}/enable", {"endpoint_id": "$response.body#/id"}, "post")
    | links_to("/endpoints/{endpoint_id}/disable", {"endpoint_id": "$response.body#/id"}, "post")
    | links_to("/endpoints/{endpoint_id}/rotate-secret", {"endpoint_id": "$response.body#/id"}, "post")
    | {
        "event_endpoint": {
            "operationRef": op_ref("/accounts/{account_id}/event-endpoint", "put"),
            "parameters": {"account_id": "$response.body#/account_id"},
            "requestBody": {"endpoint_id": "$response.body#/id"},
        }
    }
)


@router.post(
    "/endpoints", responses=linked(_endpoint_doc(201, 403, 409, 415, 422, secret=True), _ENDPOINT_LINKS, 201)
)
def create_endpoint(body: CreateEndpoint) -> Response[Any]:
    one_object_body()
    caller().require(body.account_id)
    endpoint, secret = runtime.endpoints_service().create(
        NewEndpoint(
            account_id=body.account_id,
            url=body.url,
            rate_per_second=body.rate_per_second,
            description=body.description,
            bare_urls=body.bare_urls,
        )
    )
    return as_json(201, _endpoint_view(endpoint, secret))


@router.get("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 422))
def get_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    endpoint = runtime.endpoints_service().get(endpoint_id, caller().sees)
    return as_json(200, _endpoint_view(endpoint, with_health=True))


def _health_view(endpoint_id: str, account_id: str) -> EndpointHealthView:
    from ...services.health import report

    r = report(runtime.endpoint_health(), runtime.endpoints_service(), endpoint_id, time.time(), account_id)

    def at(t: float | None) -> str | None:
        return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")

    return EndpointHealthView(
        state=r.state,
        why=r.why,
        since=at(r.since),
        transitions=r.transitions,
        recent_success_ratio=None if r.recent_success_ratio is None else round(r.recent_success_ratio, 4),
        backlog=r.backlog,
        oldest_pending_age_seconds=None
        if r.oldest_pending_age_seconds is None
        else round(r.oldest_pending_age_seconds, 3),
        last_error_class=r.last_error_class,
        next_probe_at=at(r.next_probe_at),
    )


def _set_endpoint_state(endpoint_id: str, state: str) -> Response[Any]:
    """Operator: enable (health reset to ``active``; redrive its ``endpoint_disabled`` dead letters
    then) or disable (``disabled``, ``why=operator``). Tenant-scoped like every endpoint route."""
    from ...domain.health import EndpointState

    endpoint = runtime.endpoints_service().get(endpoint_id, caller().sees)
    runtime.endpoint_health().set_state(endpoint.id, endpoint.account_id, EndpointState(state), time.time())
    return as_json(200, _endpoint_view(endpoint, with_health=True))


@router.post("/endpoints/<endpoint_id>/enable", responses=_endpoint_doc(200, 404, 422))
def enable_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    return _set_endpoint_state(endpoint_id, "active")


@router.post("/endpoints/<endpoint_id>/disable", responses=_endpoint_doc(200, 404, 422))
def disable_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    return _set_endpoint_state(endpoint_id, "disabled")


@router.patch("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 409, 415, 422))
def patch_endpoint(endpoint_id: Annotated[EndpointId, Path()], body: PatchEndpoint) -> Response[Any]:
    one_object_body()
    given = body.model_fields_set
    change = EndpointChange(
        url=body.url,
        rate_per_second=body.rate_per_second,
        clear_rate="rate_per_second" in given and body.rate_per_second is None,
        enabled=body.enabled,
        description=body.description,
    )
    return as_json(
        200, _endpoint_view(runtime.endpoints_service().change(endpoint_id, change, caller().sees))
    )


@router.delete("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 409, 422))
def delete_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    service, visible = runtime.endpoints_service(), caller().sees
    endpoint = service.get(endpoint_id, visible)
    service.delete(endpoint_id, visible)
    return as_json(200, _endpoint_view(endpoint))


@router.post(
    "/endpoints/<endpoint_id>/rotate-secret", responses=_endpoint_doc(200, 404, 409, 415, 422, secret=True)
)
def rotate_endpoint_secret(
    endpoint_id: Annotated[EndpointId, Path()], body: RotateSecret | None = None
) -> Response[Any]:
    if router.current_event.body:
        one_object_body()
    overlap = body.expires_in_seconds if body is not None else DEFAULT_ROTATION_OVERLAP_SECONDS
    endpoint, secret = runtime.endpoints_service().rotate_secret(endpoint_id, overlap, caller().sees)
    return as_json(200, _endpoint_view(endpoint, secret))
