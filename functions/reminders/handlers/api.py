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
from ..domain.corrections import Data, Destination, DueAt, FieldChange, TemplateVersion
from ..domain.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    ProducersPausedError,
    StoreConflictError,
    ValidationError,
)
from ..domain.listing import MAX_LIMIT, ListQuery
from ..domain.models import ChannelType, Delivery, Reminder
from ..domain.retention import expires_at
from ..domain.schedule import iso
from ..services import support
from ..services.intents import ChannelSpec, NewReminder
from ..services.support import MAX_PREVIEW_MINUTES
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
        return _valid_data(v)


def _valid_data(v: dict[str, Any]) -> dict[str, Any]:
    """The data map's rules (shared by create and correction): text, storable numbers, size."""
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


ChannelId = Annotated[str, StringConstraints(pattern=r"^(webhook|email)-[0-9]{1,2}$")]
DataMap = dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], Scalar]


class WebhookTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]


class EmailTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: Annotated[str, StringConstraints(max_length=254)]

    @field_validator("to")
    @classmethod
    def _email(cls, v: str) -> str:
        if not valid_email(v):
            raise ValueError("not a valid email address")
        return v


class TemplateVersionRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class Correction(BaseModel):
    """PATCH /reminders/{id}: any of these fields, applied together under one version bump. A field
    left out is unchanged; ``channels`` maps a channel id (``webhook-0``) to its new destination."""

    model_config = ConfigDict(extra="forbid")
    due_at: AwareDatetime | None = None
    channels: dict[ChannelId, WebhookTarget | EmailTarget] | None = Field(
        default=None, max_length=MAX_CHANNELS
    )
    template: TemplateVersionRef | None = None
    data: DataMap | None = None

    @field_validator("due_at")
    @classmethod
    def _due(cls, v: datetime | None) -> datetime | None:
        return None if v is None else _due_in_range(v)

    @field_validator("data")
    @classmethod
    def _small(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _valid_data(v)

    def changes(self) -> list[FieldChange]:
        """The per-field change list, in a fixed order (issue 17's fields slot in here)."""
        out: list[FieldChange] = []
        if self.due_at is not None:
            out.append(DueAt(self.due_at))
        for cid, target in sorted((self.channels or {}).items()):
            if isinstance(target, WebhookTarget):
                out.append(Destination(cid, ChannelType.WEBHOOK, target.url))
            else:
                out.append(Destination(cid, ChannelType.EMAIL, target.to))
        if self.template is not None:
            out.append(TemplateVersion(self.template.version))
        if self.data is not None:
            out.append(Data(dict(self.data)))
        return out


def _if_match() -> int | None:
    """``If-Match: <version>`` (also ``"3"``, ``W/"3"``; ``*`` matches any): optional. Without it the
    correction applies to the current version; with a stale one the answer is 412."""
    raw = (app.current_event.headers or {}).get("if-match")
    if raw is None:
        return None
    text = raw.strip().removeprefix("W/").strip('"')
    if text == "*":
        return None
    if not text.isdigit() or len(text) > 12:
        raise ValidationError("If-Match", "must be the reminder's version, e.g. If-Match: 3")
    return int(text)


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
    lease_owner: str | None = None  # the worker holding a ``sending`` delivery (a worker id)
    lease_until: str | None = None


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
    generation: int = 0  # of its delivery keys (0: today's keys)
    expires_at: int | None = None  # epoch seconds after which the table's TTL may delete it


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
        412: ("If-Match names a version that is no longer current; nothing was written", ErrorView),
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
        lease_owner=d.lease_owner,
        lease_until=d.lease_until,
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
        generation=r.generation,
        expires_at=expires_at(r),
    )


def _json(status: int, body: BaseModel | dict[str, Any], etag: int | None = None) -> Response[Any]:
    payload = body.model_dump(mode="json", exclude_none=False) if isinstance(body, BaseModel) else body
    headers = {"ETag": f'"{etag}"'} if etag is not None else None
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(payload),
        headers=headers,
    )


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


class ListedView(BaseModel):
    id: str
    state: str  # the most urgent attention state of its deliveries: dead_letter | held | retryable
    due_at: str


class ListView(BaseModel):
    """A page of an account's reminders that need attention, oldest due first within each state."""

    items: list[ListedView]
    next_cursor: str | None


AttentionState = Literal["dead_letter", "retryable", "held"]


def _utc_iso(name: str, v: datetime) -> str:
    try:
        return iso(v.astimezone(UTC))
    except OverflowError:
        raise ValidationError(name, "outside the calendar once converted to UTC") from None


@app.get("/reminders", responses=_doc(200, 404, 422))
def find(
    account_id: Annotated[AccountId, Query()],
    key: Annotated[Key | None, Query()] = None,
    state: Annotated[AttentionState | None, Query()] = None,
    due_before: Annotated[AwareDatetime | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response[Any]:
    """With ``key``: the one reminder of that business key (404 if none). Without it: the account's
    reminders that need attention (``state`` dead_letter | retryable | held, ``due_before``), paged
    by the opaque ``cursor`` of the previous page (an altered or foreign cursor is a 422)."""
    if key is not None:
        if state is not None or due_before is not None or cursor is not None:
            raise ValidationError("key", "a lookup by key takes no state, due_before or cursor")
        return _json(200, view(runtime.reminders_service().find(account_id, key)))
    q = ListQuery(
        account_id=account_id,
        state=state,
        due_before=_utc_iso("due_before", due_before) if due_before is not None else None,
        limit=limit,
    )
    page, next_cursor = runtime.attention_index().list(q, cursor)
    items = [ListedView(id=x.reminder_id, state=x.attention, due_at=x.due_at) for x in page]
    return _json(200, ListView(items=items, next_cursor=next_cursor))


@app.get("/reminders/preview", responses=_doc(200, 422))
def preview(
    next_minutes: Annotated[int, Query(ge=1, le=MAX_PREVIEW_MINUTES)] = 30,
    account_id: Annotated[AccountId | None, Query()] = None,
) -> Response[Any]:
    """What fires in the next ``next_minutes``: counts per minute and channel from the due index
    (``email``/``webhook`` still to dispatch, ``…:in_sqs`` already handed to SQS), the first ids,
    and the channel queues' own counts. Changes nothing."""
    s = runtime.settings()
    result = support.preview(
        runtime.store(),
        datetime.now(UTC),
        next_minutes,
        s.due_shards,
        account_id=account_id,
        in_flight=runtime.queues().in_flight,
    )
    return _json(200, result)


@app.get("/reminders/<reminder_id>", responses=_doc(200, 404, 422))
def get(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    reminder = runtime.reminders_service().get(reminder_id)
    return _json(200, view(reminder), etag=reminder.version)


@app.patch("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 412, 422))
def reschedule(reminder_id: Annotated[ReminderId, Path()], body: Correction) -> Response[Any]:
    """Correct a reminder in place (due_at, a channel's destination, template version, data) under
    an optional ``If-Match: <version>``. 409 while a delivery is sending or after an ambiguous
    last attempt."""
    _one_object_body()
    changes = body.changes()
    if not changes:
        raise ValidationError("body", "names nothing to change (due_at, channels, template, data)")
    updated = runtime.reminders_service().correct(reminder_id, changes, if_match=_if_match())
    return _json(200, view(updated), etag=updated.version)


@app.delete("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 422))
def cancel(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    return _json(200, view(runtime.reminders_service().cancel(reminder_id)))


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


@app.exception_handler(NotFoundError)
def _not_found(exc: NotFoundError) -> Response[Any]:
    return _error(404, "not_found", str(exc))


@app.exception_handler(ConflictError)
def _conflict(exc: ConflictError) -> Response[Any]:
    return _error(409, "conflict", str(exc))


@app.exception_handler(PreconditionFailedError)
def _stale(exc: PreconditionFailedError) -> Response[Any]:
    return _error(412, "precondition_failed", str(exc), "If-Match")


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
