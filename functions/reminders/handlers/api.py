"""The HTTP API: a Powertools resolver with pydantic validation and an OpenAPI document.

Domain exceptions map to HTTP here, so routes hold no try/except. Bad input gets a 4xx that names
the field; nothing is written.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, field_validator

from .. import runtime
from ..adapters.destinations import MAX_URL_LENGTH, valid_email
from ..domain.errors import (
    ConfigurationError,
    ConflictError,
    NotFoundError,
    ProducersPausedError,
    StoreConflictError,
    ValidationError,
)
from ..domain.models import ChannelType, Delivery, Reminder
from ..domain.receipts import ReceiptRejectedError
from ..domain.schedule import iso
from ..domain.unsubscribe import ExpiredTokenError, InvalidTokenError
from ..services.intents import ChannelSpec, NewReminder
from . import coldstart

MAX_DATA_BYTES = 4096
MAX_CHANNELS = 10
#: The due-time range the API accepts (the README lists it): not before 2000, at most ten years ahead.
EARLIEST_DUE = datetime(2000, 1, 1, tzinfo=UTC)
MAX_DUE_AHEAD = timedelta(days=3653)
#: What a DynamoDB number holds exactly: 38 significant digits, magnitude 1e-130 .. <1e126; boto3's
#: own context starts at 1e-128 for 38 digits, so that is the floor here.
NUMBER_DIGITS = 38
NUMBER_MIN_EXPONENT = -128
NUMBER_MAX_EXPONENT = 125

Key = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,256}$")]
AccountId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,128}$")]
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,64}$")]
ReminderId = Annotated[str, StringConstraints(pattern=r"^rem_[0-9a-f]{32}$")]


def _due_in_range(v: datetime) -> datetime:
    try:
        utc = v.astimezone(UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-23:59 is in the year 10000 in UTC
        raise ValueError("outside the calendar once converted to UTC") from None
    if utc < EARLIEST_DUE:
        raise ValueError("must not be before 2000-01-01T00:00:00Z")
    if utc > datetime.now(UTC) + MAX_DUE_AHEAD:
        raise ValueError("must not be more than 10 years ahead")
    return v


def _text(v: str, what: str) -> str:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (a lone surrogate)") from None
    return v


def _number_problem(v: int | float) -> str | None:
    """Why DynamoDB cannot store ``v`` exactly (or boto3 refuses to send it), or None."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN and Infinity cannot be stored"
    if isinstance(v, int):
        if len(str(abs(v))) > NUMBER_DIGITS:
            return f"integers have at most {NUMBER_DIGITS} digits"
        return None
    d = Decimal(str(v))  # what the store writes
    if d == 0:
        return None
    if len(d.as_tuple().digits) > NUMBER_DIGITS:  # pragma: no cover - a float's repr has <= 17
        return f"at most {NUMBER_DIGITS} significant digits"
    if not NUMBER_MIN_EXPONENT <= d.adjusted() <= NUMBER_MAX_EXPONENT:
        return "numbers must lie between 1e-128 and 1e126 in magnitude (or be 0)"
    return None


class WebhookChannel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["webhook"]
    url: Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]


class EmailChannel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["email"]
    to: Annotated[str, StringConstraints(max_length=254)]

    @field_validator("to")
    @classmethod
    def _email(cls, v: str) -> str:
        if not valid_email(v):
            raise ValueError("not a valid email address")
        return v


class TemplateRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Name
    version: int = Field(ge=1)


Channel = Annotated[WebhookChannel | EmailChannel, Field(discriminator="type")]
Scalar = str | int | float | bool | None


class CreateReminder(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: Key
    account_id: AccountId
    kind: Name
    due_at: AwareDatetime
    channels: list[Channel] = Field(min_length=1, max_length=MAX_CHANNELS)
    template: TemplateRef
    data: dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], Scalar] = Field(
        default_factory=dict
    )

    @field_validator("due_at")
    @classmethod
    def _due(cls, v: datetime) -> datetime:
        return _due_in_range(v)

    @field_validator("data")
    @classmethod
    def _small(cls, v: dict[str, Any]) -> dict[str, Any]:
        for k, x in v.items():
            _text(k, "a key")
            if isinstance(x, str):
                _text(x, f"{k!r}")
            elif isinstance(x, int | float) and not isinstance(x, bool):
                problem = _number_problem(x)
                if problem:
                    raise ValueError(f"{k!r}: {problem}")
        size = len(json.dumps(v, separators=(",", ":")).encode())
        if size > MAX_DATA_BYTES:
            raise ValueError(f"serialized data is {size} bytes; the limit is {MAX_DATA_BYTES}")
        return v


class Reschedule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    due_at: AwareDatetime

    @field_validator("due_at")
    @classmethod
    def _due(cls, v: datetime) -> datetime:
        return _due_in_range(v)


class AttemptView(BaseModel):
    at: str
    event: str
    outcome: str | None = None
    status: int | None = None
    decision: str | None = None
    delay_seconds: float | None = None
    policy_version: str | None = None
    receipt: str | None = None
    fingerprint: str | None = None
    detail: str | None = None
    repeat: int | None = None  # consecutive identical throttles folded into this line


class DeliveryView(BaseModel):
    channel_id: str
    type: str
    destination: str
    key: str
    state: str
    attempts: int
    throttles: int
    cycle: int
    last_error: dict[str, Any] | None
    next_attempt_at: str | None
    delivered_at: str | None
    receipt: str | None
    dead_letter_reason: str | None
    history: list[AttemptView]
    #: Lines dropped from the middle of a long history, counted by outcome (first 2 and last 8 kept).
    history_dropped: dict[str, int] = {}
    #: What the provider reported after accepting (bounced | complained | rejected); state unchanged.
    feedback: str | None = None
    #: The receiver's standing receipt (``<p|r>|<event time>|<event id>``): order-insensitive merge.
    receiver_receipt: str | None = None


class ReminderView(BaseModel):
    id: str
    key: str
    account_id: str
    kind: str
    due_at: str
    version: int
    state: str
    created_at: str
    template: dict[str, Any]
    data: dict[str, Any]
    deliveries: list[DeliveryView]


class ErrorView(BaseModel):
    """Every 4xx/5xx body: ``message`` always; ``error`` (a code) and ``field`` where they apply; for
    schema errors ``detail`` lists each problem. A route the API does not have answers as API Gateway
    does: ``{"message": "Not Found"}``."""

    message: str
    error: str | None = None
    field: str | None = None
    detail: list[dict[str, Any]] | None = None


def _doc(*statuses: int) -> dict[int, Any]:
    """OpenAPI responses: every status an operation can return, each with its body's schema."""
    described = {
        200: ("the reminder", ReminderView),
        201: ("created", ReminderView),
        404: ("no such reminder (or route)", ErrorView),
        409: ("conflicts with what is stored", ErrorView),
        422: ("invalid input, naming the field; nothing was written", ErrorView),
        503: ("producers are paused by an operator", ErrorView),
    }
    return {
        code: {"description": text, "content": {"application/json": {"model": model}}}
        for code, (text, model) in ((c, described[c]) for c in statuses)
    }


def _delivery_view(d: Delivery, state: str) -> DeliveryView:
    return DeliveryView(
        channel_id=d.channel_id,
        type=d.type.value,
        destination=d.destination,
        key=d.key,
        state=state,
        attempts=d.attempts,
        throttles=d.throttles,
        cycle=d.cycle,
        last_error=d.last_error,
        next_attempt_at=d.next_attempt_at,
        delivered_at=d.delivered_at,
        receipt=d.receipt,
        dead_letter_reason=d.dead_letter_reason,
        history=[AttemptView(**a.to_dict()) for a in d.history],
        history_dropped=dict(d.dropped),
        feedback=d.feedback,
        receiver_receipt=d.receiver_receipt,
    )


def view(r: Reminder) -> ReminderView:
    states = runtime.reminders_service().effective_states(r)
    return ReminderView(
        id=r.id,
        key=r.key,
        account_id=r.account_id,
        kind=r.kind,
        due_at=iso(r.due_at),
        version=r.version,
        state=r.state,
        created_at=iso(r.created_at),
        template={"id": r.template_id, "version": r.template_version},
        data=r.data,
        deliveries=[_delivery_view(d, states[cid]) for cid, d in r.deliveries.items()],
    )


def _json(status: int, body: BaseModel | dict[str, Any]) -> Response[Any]:
    payload = body.model_dump(mode="json", exclude_none=False) if isinstance(body, BaseModel) else body
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=json.dumps(payload))


app = APIGatewayHttpResolver(enable_validation=True)


@app.not_found
def _route_not_found(exc: Exception) -> Response[Any]:
    """As API Gateway HTTP APIs answer a route they do not have."""
    return Response(404, content_types.APPLICATION_JSON, json.dumps({"message": "Not Found"}))


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@app.get("/openapi.json")
def openapi() -> Response[Any]:
    return Response(
        200, content_types.APPLICATION_JSON, app.get_openapi_json_schema(title="Reminders API", version="1")
    )


def _one_object_body() -> None:
    """Powertools' validation takes the first element of a JSON array as the body model (its list
    normalisation for multi-value parameters), silently dropping the rest: a body is one object."""
    if not isinstance(app.current_event.json_body, dict):
        raise ValidationError("body", "must be a single JSON object")


@app.post("/reminders", responses=_doc(201, 200, 409, 422, 503))
def create(body: CreateReminder) -> Response[Any]:
    _one_object_body()
    cmd = NewReminder(
        account_id=body.account_id,
        key=body.key,
        kind=body.kind,
        due_at=body.due_at,
        channels=tuple(
            ChannelSpec(ChannelType.WEBHOOK, c.url)
            if isinstance(c, WebhookChannel)
            else ChannelSpec(ChannelType.EMAIL, c.to)
            for c in body.channels
        ),
        template_id=body.template.id,
        template_version=body.template.version,
        data=dict(body.data),
    )
    reminder, created = runtime.reminders_service().create(cmd)
    return _json(201 if created else 200, view(reminder))


@app.get("/reminders", responses=_doc(200, 404, 422))
def find(account_id: Annotated[AccountId, Query()], key: Annotated[Key, Query()]) -> Response[Any]:
    return _json(200, view(runtime.reminders_service().find(account_id, key)))


@app.get("/reminders/<reminder_id>", responses=_doc(200, 404, 422))
def get(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    return _json(200, view(runtime.reminders_service().get(reminder_id)))


@app.patch("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 422))
def reschedule(reminder_id: Annotated[ReminderId, Path()], body: Reschedule) -> Response[Any]:
    _one_object_body()
    due: datetime = body.due_at
    return _json(200, view(runtime.reminders_service().reschedule(reminder_id, due)))


@app.delete("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 422))
def cancel(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    return _json(200, view(runtime.reminders_service().cancel(reminder_id)))


# -- suppression list (issue 19) ---------------------------------------------------------------------
AddressHash = Annotated[str, StringConstraints(pattern=r"^a_[0-9a-f]{32}$")]
Scope = Annotated[str, StringConstraints(pattern=r"^(\*|[A-Za-z0-9:_.\-]{1,64})$")]


class SuppressionView(BaseModel):
    """One entry: the address's hash (the address itself is never stored), why, what added it."""

    account_id: str
    address_hash: str
    reason: str
    source: str
    at: str
    scope: str


class SuppressionsView(BaseModel):
    account_id: str
    entries: list[SuppressionView]


class SuppressionsRemoved(BaseModel):
    account_id: str
    address_hash: str
    removed: int


_SUPPRESSION_DOC: dict[int, Any] = {
    200: {"description": "the entries", "content": {"application/json": {"model": SuppressionsView}}},
    422: {
        "description": "invalid input, naming the field",
        "content": {"application/json": {"model": ErrorView}},
    },
}
_REMOVED_DOC: dict[int, Any] = {
    200: {"description": "entries removed", "content": {"application/json": {"model": SuppressionsRemoved}}},
    404: {"description": "no such entry", "content": {"application/json": {"model": ErrorView}}},
    422: {
        "description": "invalid input, naming the field",
        "content": {"application/json": {"model": ErrorView}},
    },
}


@app.get("/suppressions", responses=_SUPPRESSION_DOC)
def list_suppressions(
    account_id: Annotated[AccountId, Query()], limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> Response[Any]:
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
    return _json(200, SuppressionsView(account_id=account_id, entries=entries))


@app.delete("/suppressions/<address_hash>", responses=_REMOVED_DOC)
def remove_suppression(
    address_hash: Annotated[AddressHash, Path()],
    account_id: Annotated[AccountId, Query()],
    scope: Annotated[Scope | None, Query()] = None,
) -> Response[Any]:
    removed = runtime.suppressions().remove(account_id, address_hash, scope)
    if not removed:
        raise NotFoundError("no suppression entry for this account and address hash")
    return _json(200, SuppressionsRemoved(account_id=account_id, address_hash=address_hash, removed=removed))


# -- one-click unsubscribe (issue 19; RFC 8058) -------------------------------------------------------
UnsubscribeToken = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{1,480}\.[A-Za-z0-9_\-]{1,30}$")]


class UnsubscribedView(BaseModel):
    """The same answer for every valid token, first click or repeat: nothing about the address."""

    status: Literal["unsubscribed"]


_UNSUBSCRIBE_DOC: dict[int, Any] = {
    200: {
        "description": "unsubscribed (idempotent)",
        "content": {"application/json": {"model": UnsubscribedView}},
    },
    400: {"description": "not an unsubscribe token", "content": {"application/json": {"model": ErrorView}}},
    410: {"description": "the link has expired", "content": {"application/json": {"model": ErrorView}}},
    422: {"description": "malformed token", "content": {"application/json": {"model": ErrorView}}},
    503: {
        "description": "the signing secret is unavailable",
        "content": {"application/json": {"model": ErrorView}},
    },
}


@app.post("/unsubscribe/<token>", responses=_UNSUBSCRIBE_DOC)
def one_click_unsubscribe(token: Annotated[UnsubscribeToken, Path()]) -> Response[Any]:
    """Public (no login): mail clients POST ``List-Unsubscribe=One-Click`` here; the body is ignored."""
    return _json(200, UnsubscribedView(status=runtime.unsubscribe().unsubscribe(token)))  # type: ignore[arg-type]


# -- receiver receipts (issue 19; MISSION §5) ---------------------------------------------------------
class ReceiptAccepted(BaseModel):
    status: Literal["accepted"]


_RECEIPT_DOC: dict[int, Any] = {
    202: {
        "description": "stored; merged asynchronously",
        "content": {"application/json": {"model": ReceiptAccepted}},
    },
    **{
        code: {"description": text, "content": {"application/json": {"model": ErrorView}}}
        for code, text in (
            (400, "a verified body that is malformed, naming the field"),
            (401, "unsigned, badly signed or stale (Standard Webhooks)"),
            (404, "no such endpoint or delivery"),
            (409, "this event id was already received: nothing new written"),
            (413, "body over 256 KiB"),
            (422, "a body that is not UTF-8"),
            (503, "the signing secret is unavailable"),
        )
    },
}


@app.post("/inbound/receiver", responses=_RECEIPT_DOC)
def inbound_receipt() -> Response[Any]:
    """Public (no IAM): a receiver's signed ``processed``/``rejected`` receipt for a ``webhook-id``."""
    event = app.current_event
    body = event.decoded_body or ""
    raw = body.encode("utf-8", "surrogateescape") if isinstance(body, str) else bytes(body)
    runtime.receipt_inbox().accept(raw, dict(event.headers or {}))
    return _json(202, ReceiptAccepted(status="accepted"))


@app.exception_handler(ReceiptRejectedError)
def _receipt_refused(exc: ReceiptRejectedError) -> Response[Any]:
    return _error(exc.status, exc.code, str(exc), exc.field)


def _error(status: int, code: str, message: str, field: str | None = None) -> Response[Any]:
    body: dict[str, Any] = {"error": code, "message": message}
    if field:
        body["field"] = field
    return Response(status, content_types.APPLICATION_JSON, json.dumps(body))


@app.exception_handler(RequestValidationError)
def _request_invalid(exc: RequestValidationError) -> Response[Any]:
    """Schema errors: every problem with its location and message (never the offending input)."""
    detail = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()
    ] or [{"loc": ["body"], "msg": "invalid request", "type": "invalid"}]
    field = ".".join(str(p) for p in detail[0]["loc"])
    body = {"error": "invalid", "field": field, "message": f"{field}: {detail[0]['msg']}", "detail": detail}
    return Response(422, content_types.APPLICATION_JSON, json.dumps(body))


@app.exception_handler(UnicodeDecodeError)
def _not_text(exc: UnicodeDecodeError) -> Response[Any]:
    """A body that is not UTF-8 (API Gateway hands it over base64-encoded) is not JSON either."""
    return _error(422, "invalid", "body: not UTF-8 encoded JSON", "body")


@app.exception_handler(ValidationError)
def _invalid(exc: ValidationError) -> Response[Any]:
    return _error(422, "invalid", str(exc), exc.field)


@app.exception_handler(ConfigurationError)
def _our_configuration(exc: ConfigurationError) -> Response[Any]:
    """Our own configuration is missing (a signing secret): a 503 naming it, never a 500."""
    return _error(503, "unavailable", str(exc))


@app.exception_handler(InvalidTokenError)
def _bad_token(exc: InvalidTokenError) -> Response[Any]:
    return _error(400, "invalid_token", str(exc), "token")


@app.exception_handler(ExpiredTokenError)
def _expired_token(exc: ExpiredTokenError) -> Response[Any]:
    return _error(410, "expired_token", str(exc), "token")


@app.exception_handler(NotFoundError)
def _not_found(exc: NotFoundError) -> Response[Any]:
    return _error(404, "not_found", str(exc))


@app.exception_handler(ConflictError)
def _conflict(exc: ConflictError) -> Response[Any]:
    return _error(409, "conflict", str(exc))


@app.exception_handler(StoreConflictError)
def _busy(exc: StoreConflictError) -> Response[Any]:
    return _error(409, "concurrent_update", str(exc))


@app.exception_handler(ProducersPausedError)
def _paused(exc: ProducersPausedError) -> Response[Any]:
    return _error(503, "producers_paused", str(exc))


@coldstart.reported
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return app.resolve(event, context)

    return run(event, context)
