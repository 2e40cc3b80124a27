"""The HTTP API: a Powertools resolver with pydantic validation and an OpenAPI document.

Domain exceptions map to HTTP here, so routes hold no try/except. Bad input gets a 4xx that names
the field; nothing is written.
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    field_validator,
    model_validator,
)

from .. import runtime
from ..adapters.destinations import MAX_URL_LENGTH, valid_email
from ..domain.corrections import Data, Destination, FieldChange, TemplateVersion
from ..domain.endpoints import DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ROTATION_OVERLAP_SECONDS, Endpoint
from ..domain.errors import (
    ConfigurationError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PreconditionFailedError,
    ProducersPausedError,
    StoreConflictError,
    ValidationError,
)
from ..domain.listing import MAX_LIMIT, ListQuery
from ..domain.localtime import MAX_ZONE_NAME_LENGTH, SendWindow, UnknownZoneError, parse_wall, zone
from ..domain.models import ChannelType, Delivery, Reminder, reminder_id
from ..domain.receipts import ReceiptRejectedError
from ..domain.retention import expires_at
from ..domain.schedule import iso
from ..domain.templates import canonical_locale
from ..domain.tenancy import Caller
from ..domain.unsubscribe import ExpiredTokenError, InvalidTokenError
from ..services import support
from ..services.endpoints import EndpointChange, EndpointInUseError, NewEndpoint
from ..services.intents import ChannelSpec, NewReminder, resolve_local
from ..services.support import MAX_PREVIEW_MINUTES
from . import coldstart

MAX_DATA_BYTES = 4096
MAX_CHANNELS = 10
CONCURRENT_RETRY_AFTER_SECONDS = 1  # Retry-After of a 409 concurrent_update (a request that lost a race)
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
EndpointId = Annotated[str, StringConstraints(pattern=r"^ep_[0-9a-f]{32}$")]


class ApiModel(BaseModel):
    """Every model of the API: its validation schema is built when a request first needs it
    (``defer_build``), not at import (~2 ms a model, 29 models, on every cold start of a function
    whose first request uses two or three of them)."""

    model_config = ConfigDict(defer_build=True)


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
    if _answered_digits(d) > NUMBER_DIGITS:
        return (
            f"DynamoDB would return it as {_answered_digits(d)} digits and boto3 reads at most "
            f"{NUMBER_DIGITS} (e.g. 1e38 and above with few significant digits: send it as text)"
        )
    return None


def _answered_digits(d: Decimal) -> int:
    """The significant digits of ``d`` as DynamoDB answers it: the full digit expansion without
    trailing fractional zeros (``1e125`` → 126 digits, ``1.5e-5`` → ``0.000015``: 2). boto3's
    decoder refuses more than 38 (issue 25 item 13)."""
    _, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    kept = len(digits)
    while kept > 1 and digits[kept - 1] == 0:
        kept, exponent = kept - 1, exponent + 1
    return kept + max(exponent, 0)


class WebhookChannel(ApiModel):
    """A webhook: a bare ``url`` (its account's implicit endpoint for that origin), or a registered
    ``endpoint_id`` (its own secret and rate). Exactly one of the two."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["webhook"]
    url: Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)] | None = None
    endpoint_id: EndpointId | None = None

    @model_validator(mode="after")
    def _one_target(self) -> WebhookChannel:
        if (self.url is None) == (self.endpoint_id is None):
            raise ValueError("a webhook channel names exactly one of url and endpoint_id")
        return self

    @property
    def destination(self) -> str:
        return self.endpoint_id or self.url or ""


class EmailChannel(ApiModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["email"]
    to: Annotated[str, StringConstraints(max_length=254)]

    @field_validator("to")
    @classmethod
    def _email(cls, v: str) -> str:
        if not valid_email(v):
            raise ValueError("not a valid email address")
        return v


class TemplateRef(ApiModel):
    model_config = ConfigDict(extra="forbid")
    id: Name
    version: int = Field(ge=1)


class SendWindowIn(ApiModel):
    """Local times of day (in the reminder's ``time_zone``, or UTC) at which attempts may start;
    ``start`` after ``end`` spans midnight."""

    model_config = ConfigDict(extra="forbid")
    start: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    end: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]

    def window(self) -> SendWindow:
        try:
            return SendWindow.parse(self.start, self.end)
        except ValueError as exc:
            raise ValidationError("send_window", str(exc)) from None


#: A local wall time without an offset, e.g. ``2027-03-28T09:00``.
WallTime = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")]
ZoneName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ZONE_NAME_LENGTH)]


def _known_zone(v: str | None) -> str | None:
    if v is not None:
        try:
            zone(v)
        except UnknownZoneError as exc:
            raise ValueError(str(exc)) from None
    return v


def _wall(v: str | None) -> str | None:
    if v is not None:
        parse_wall(v)  # a ValueError names the field (e.g. month 13)
    return v


def _resolve_due(due_at: datetime | None, due_local: str | None, time_zone: str | None) -> datetime:
    """The due instant of exactly one of ``due_at`` / ``due_local`` (+ ``time_zone``), in range."""
    if (due_at is None) == (due_local is None):
        raise ValidationError("due_at", "give exactly one of due_at (with offset) or due_local (+ time_zone)")
    if due_at is not None:
        return due_at
    assert due_local is not None
    if time_zone is None:
        raise ValidationError("time_zone", "required with due_local")
    instant, _ = resolve_local(due_local, time_zone)
    try:
        return _due_in_range(instant)
    except ValueError as exc:
        raise ValidationError("due_local", str(exc)) from None


Channel = Annotated[WebhookChannel | EmailChannel, Field(discriminator="type")]
Scalar = str | int | float | bool | list[str] | None  # a list of strings: issue 30's list variables


class CreateReminder(ApiModel):
    model_config = ConfigDict(extra="forbid")
    key: Key
    account_id: AccountId
    kind: Name
    #: Exactly one of ``due_at`` (an instant with its offset) and ``due_local`` (a wall time in
    #: ``time_zone``; DST gaps read with the offset before the gap, overlaps at their first occurrence).
    due_at: AwareDatetime | None = None
    channels: list[Channel] = Field(min_length=1, max_length=MAX_CHANNELS)
    template: TemplateRef
    data: dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], Scalar] = Field(
        default_factory=dict
    )
    due_local: WallTime | None = None
    time_zone: ZoneName | None = None  # IANA name; also the send window's zone
    send_window: SendWindowIn | None = None
    deliver_by: AwareDatetime | None = None  # no attempt starts at or after it: deadline_passed
    locale: Annotated[str, StringConstraints(max_length=35)] | None = None  # BCP 47: the template's

    @field_validator("locale")
    @classmethod
    def _locale(cls, v: str | None) -> str | None:
        return None if v is None else canonical_locale(v)  # a ValueError names the field

    @field_validator("due_at", "deliver_by")
    @classmethod
    def _due(cls, v: datetime | None) -> datetime | None:
        return None if v is None else _due_in_range(v)

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        return _known_zone(v)

    @field_validator("due_local")
    @classmethod
    def _local(cls, v: str | None) -> str | None:
        return _wall(v)

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
        elif isinstance(x, list):
            for item in x:
                _text(item, f"{k!r}")
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


class WebhookTarget(ApiModel):
    model_config = ConfigDict(extra="forbid")
    url: Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]


class EmailTarget(ApiModel):
    model_config = ConfigDict(extra="forbid")
    to: Annotated[str, StringConstraints(max_length=254)]

    @field_validator("to")
    @classmethod
    def _email(cls, v: str) -> str:
        if not valid_email(v):
            raise ValueError("not a valid email address")
        return v


class TemplateVersionRef(ApiModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class Correction(ApiModel):
    """PATCH /reminders/{id}: any of these fields, applied together under one version bump. A field
    left out is unchanged; ``channels`` maps a channel id (``webhook-0``) to its new destination.
    At most one of ``due_at`` and ``due_local``; ``time_zone`` defaults to the reminder's own."""

    model_config = ConfigDict(extra="forbid")
    due_at: AwareDatetime | None = None
    due_local: WallTime | None = None
    time_zone: ZoneName | None = None
    channels: dict[ChannelId, WebhookTarget | EmailTarget] | None = Field(
        default=None, max_length=MAX_CHANNELS
    )
    template: TemplateVersionRef | None = None
    data: DataMap | None = None
    #: Issue 25: after an attempt that may have been accepted a correction is refused (409
    #: ``correction_after_possible_acceptance``) unless this asks to send it again, as a new delivery
    #: generation with a new webhook-id / Message-ID (recorded as intentional).
    resend: StrictBool = False

    @field_validator("due_at")
    @classmethod
    def _due(cls, v: datetime | None) -> datetime | None:
        return None if v is None else _due_in_range(v)

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        return _known_zone(v)

    @field_validator("due_local")
    @classmethod
    def _local(cls, v: str | None) -> str | None:
        return _wall(v)

    @field_validator("data")
    @classmethod
    def _small(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _valid_data(v)

    def changes(self) -> list[FieldChange]:
        """The per-field change list, in a fixed order (issue 17's fields slot in here)."""
        out: list[FieldChange] = []  # the due time is resolved by the service (due_change)
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


class AttemptView(ApiModel):
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


class DeliveryView(ApiModel):
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
    #: What the provider reported after accepting (bounced | complained | rejected); state unchanged.
    feedback: str | None = None
    #: The receiver's standing receipt (``<p|r>|<event time>|<event id>``): order-insensitive merge.
    receiver_receipt: str | None = None
    #: Issue 25: intentional resends (each a new key) and whether an attempt of the current key, to
    #: any destination, may have been accepted (what refuses a correction without ``resend``).
    resends: int = 0
    may_have_been_accepted: bool = False


class ReminderView(ApiModel):
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
    #: Local time (when created or rescheduled with due_local): the wall time and zone; ``due_at``
    #: is the instant they resolved to.
    due_local: str | None = None
    time_zone: str | None = None
    send_window: dict[str, str] | None = None
    deliver_by: str | None = None
    generation: int = 0  # of its delivery keys (0: today's keys)
    expires_at: int | None = None  # epoch seconds after which the table's TTL may delete it
    locale: str | None = None  # BCP 47: the locale its template renders in (issue 30)


class ErrorView(ApiModel):
    """Every 4xx/5xx body: ``message`` always; ``error`` (a code) and ``field`` where they apply; for
    schema errors ``detail`` lists each problem. A route the API does not have answers as API Gateway
    does: ``{"message": "Not Found"}``."""

    message: str
    error: str | None = None
    field: str | None = None
    detail: list[dict[str, Any]] | None = None


_UNSUPPORTED_MEDIA_TEXT = "a body in a media type other than application/json, naming it; nothing was written"


def _doc(*statuses: int, ok: Any = None, ok_text: str = "the reminder") -> dict[int, Any]:
    """OpenAPI responses: every status an operation can return, each with its body's schema
    (``ok``: the 200 body's model when it is not a ReminderView)."""
    described = {
        200: (ok_text, ReminderView if ok is None else ok),
        201: ("created", ReminderView),
        403: ("the caller's IAM principal may not act for this account", ErrorView),
        404: ("no such reminder (or route)", ErrorView),
        409: ("conflicts with what is stored", ErrorView),
        412: ("If-Match names a version that is no longer current; nothing was written", ErrorView),
        415: (_UNSUPPORTED_MEDIA_TEXT, ErrorView),
        422: ("invalid input, naming the field; nothing was written", ErrorView),
        503: ("producers are paused by an operator", ErrorView),
    }
    return {
        code: {"description": text, "content": {"application/json": {"model": model}}}
        for code, (text, model) in ((c, described[c]) for c in statuses)
    }


# OpenAPI links (issue 24 item 10): what an answer's ids open next, so a stateful client (the
# suite's stateful fuzz run) follows create -> read -> correct -> delete.
def _op_ref(path: str, method: str) -> str:
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def _links(path: str, parameters: dict[str, str], *methods: str, **more: dict[str, Any]) -> dict[str, Any]:
    """A link per ``method`` of ``path``, its ``parameters`` runtime expressions of this answer."""
    links = {
        method + re.sub(r"[^A-Za-z0-9]+", "_", path).rstrip("_"): {
            "operationRef": _op_ref(path, method),
            "parameters": parameters,
        }
        for method in methods
    }
    return links | more


def _linked(responses: dict[int, Any], links: dict[str, Any], *statuses: int) -> dict[int, Any]:
    for status in statuses:
        responses[status]["links"] = links
    return responses


_REMINDER_LINKS = _links(
    "/reminders/{reminder_id}",
    {"reminder_id": "$response.body#/id"},
    "get",
    "patch",
    "delete",
    by_key={
        "operationRef": _op_ref("/reminders", "get"),
        "parameters": {"account_id": "$response.body#/account_id", "key": "$response.body#/key"},
    },
)


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
        feedback=d.feedback,
        receiver_receipt=d.receiver_receipt,
        resends=d.resend,
        may_have_been_accepted=d.may_have_been_accepted(),
    )


def view(r: Reminder, *, just_created: bool = False) -> ReminderView:
    states = runtime.reminders_service().effective_states(r, just_created=just_created)
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
        due_local=r.due_local,
        time_zone=r.time_zone,
        send_window={"start": r.send_window.start, "end": r.send_window.end} if r.send_window else None,
        deliver_by=iso(r.deliver_by) if r.deliver_by else None,
        generation=r.generation,
        expires_at=expires_at(r),
        locale=r.locale,
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

# -- routers of their own (issue 30: /templates) ---------------------------------------------------------
from .routes import templates as _templates  # noqa: E402

app.include_router(_templates.router)


def caller() -> Caller:
    """THE tenant check: the caller of this request (its IAM principal, from the HTTP API's
    ``requestContext.authorizer.iam.userArn``) and the accounts it may act for. Every IAM route calls
    it once: ``caller().require(account_id)`` before acting for an account (403), and
    ``caller().check_visible(resource.account_id, what)`` / ``visible=caller().sees`` for a resource
    read by id (another account's reads as absent: 404)."""
    event = app.current_event.raw_event
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {} if isinstance(authorizer, dict) else {}
    arn = iam.get("userArn") if isinstance(iam, dict) else None
    return runtime.tenancy().caller(arn if isinstance(arn, str) and arn else None)


def _visible_reminder(rid: str) -> Reminder:
    reminder = runtime.reminders_service().get(rid)
    caller().check_visible(reminder.account_id, f"reminder {rid}")
    return reminder


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


# -- request media types (issue 24 item 10) ---------------------------------------------------------
def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _path_pattern(path: str) -> re.Pattern[str]:
    """A documented path as it matches a request's: each ``{parameter}`` is one segment."""
    segments = (
        "[^/]+" if seg.startswith("{") and seg.endswith("}") else re.escape(seg) for seg in path.split("/")
    )
    return re.compile("^" + "/".join(segments) + "$")


@functools.cache
def _body_operations() -> tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]:
    """Each documented operation that takes a body: its method, its path as a pattern (a parameter
    is one segment) and the media types its ``requestBody`` lists. Built from the OpenAPI document
    on the first request that sends a body in another media type (never on the usual path)."""
    doc = json.loads(app.get_openapi_json_schema())
    return tuple(
        (
            method.upper(),
            _path_pattern(path),
            frozenset(_media_type(m) for m in op["requestBody"].get("content", {})),
        )
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if isinstance(op, dict) and "requestBody" in op
    )


def refuse_unsupported_media(event: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An operation with a body takes the media types its document lists (application/json, in
    any case, any parameters; no content-type is taken as JSON): any other is a 415 naming it,
    before Powertools parses the body (it would parse form and multipart bodies, and raise a 500
    on a multipart type without a boundary). Returns the event to resolve (its JSON content type
    spelled as Powertools matches it) and the refusal, if any."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    raw = str(headers.get("content-type") or "").strip()
    media = _media_type(raw)
    if not raw or (
        raw.startswith(content_types.APPLICATION_JSON) and media == content_types.APPLICATION_JSON
    ):
        return event, None
    http = (event.get("requestContext") or {}).get("http") or {}
    method, path = str(http.get("method") or "").upper(), str(event.get("rawPath") or "")
    for op_method, pattern, taken in _body_operations():
        if op_method == method and pattern.match(path):
            if media in taken:  # e.g. Application/JSON: as Powertools' parser spells it
                rest = raw.split(";", 1)[1:]
                fixed = ";".join([media, *rest])
                return {**event, "headers": {**headers, "content-type": fixed}}, None
            response = _unsupported_media(media, sorted(taken))
            return event, {
                "statusCode": response.status_code,
                "headers": {"Content-Type": content_types.APPLICATION_JSON},
                "body": response.body,
                "isBase64Encoded": False,
                "cookies": [],
            }
    return event, None


def _unsupported_media(media: str, taken: list[str]) -> Response[Any]:
    shown = media if len(media) <= 100 else media[:100] + "…"
    return _error(
        415,
        "unsupported_media_type",
        f"content-type {shown or '(none)'} is not accepted: the body must be {' or '.join(taken)}",
        "content-type",
    )


def _one_object_body() -> None:
    """Powertools' validation takes the first element of a JSON array as the body model (its list
    normalisation for multi-value parameters), silently dropping the rest: a body is one object."""
    if not isinstance(app.current_event.json_body, dict):
        raise ValidationError("body", "must be a single JSON object")


@app.post("/reminders", responses=_linked(_doc(201, 200, 403, 409, 415, 422, 503), _REMINDER_LINKS, 201, 200))
def create(body: CreateReminder) -> Response[Any]:
    _one_object_body()
    caller().require(body.account_id)
    due_at = _resolve_due(body.due_at, body.due_local, body.time_zone)
    due_local = (
        resolve_local(body.due_local, body.time_zone)[1] if body.due_local and body.time_zone else None
    )
    if body.deliver_by is not None and body.deliver_by <= due_at:
        raise ValidationError("deliver_by", "must be after the due time")
    cmd = NewReminder(
        account_id=body.account_id,
        key=body.key,
        kind=body.kind,
        due_at=due_at,
        channels=tuple(
            ChannelSpec(ChannelType.WEBHOOK, c.destination)
            if isinstance(c, WebhookChannel)
            else ChannelSpec(ChannelType.EMAIL, c.to)
            for c in body.channels
        ),
        template_id=body.template.id,
        template_version=body.template.version,
        data=dict(body.data),
        due_local=due_local,
        time_zone=body.time_zone,
        send_window=body.send_window.window() if body.send_window else None,
        deliver_by=body.deliver_by,
        locale=body.locale,
    )
    _use_endpoints(cmd)
    reminder, created = runtime.reminders_service().create(cmd)
    return _json(201 if created else 200, view(reminder, just_created=created))


class ListedView(ApiModel):
    id: str
    state: str  # the most urgent attention state of its deliveries: dead_letter | held | retryable
    due_at: str


class ListView(ApiModel):
    """A page of an account's reminders that need attention, oldest due first within each state."""

    items: list[ListedView]
    next_cursor: str | None


AttentionState = Literal["dead_letter", "retryable", "held"]


def _utc_iso(name: str, v: datetime) -> str:
    try:
        return iso(v.astimezone(UTC))
    except OverflowError:
        raise ValidationError(name, "outside the calendar once converted to UTC") from None


@app.get(
    "/reminders",
    responses=_doc(
        200,
        403,
        404,
        422,
        ok=ReminderView | ListView,
        ok_text="the reminder of that key, or a page of the listing",
    ),
)
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
    caller().require(account_id)
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


class PreviewView(ApiModel):
    """What fires in the next minutes (support.preview): read-only counts and the first ids."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    until: str
    minutes: int
    account_id: str | None
    per_minute: dict[str, dict[str, int]]
    totals: dict[str, int]
    first_ids: list[str]
    queues: dict[str, dict[str, int]] | None = None  # every account's preview only: shared queues


@app.get("/reminders/preview", responses=_doc(200, 403, 422, ok=PreviewView, ok_text="the preview"))
def preview(
    next_minutes: Annotated[int, Query(ge=1, le=MAX_PREVIEW_MINUTES)] = 30,
    account_id: Annotated[AccountId | None, Query()] = None,
) -> Response[Any]:
    """What fires in the next ``next_minutes``: counts per minute and channel from the due index
    (``email``/``webhook`` still to dispatch, ``…:in_sqs`` already handed to SQS) and the first ids
    of ``account_id``. Changes nothing. Without ``account_id``: every account's, and the channel
    queues' own counts (shared by every account), for a caller that may act for every account (the
    bootstrap principal); it reads the due index and the queues' attributes, no reminder row."""
    if account_id is not None:
        caller().require(account_id)
    else:
        caller().require_all()
    s = runtime.settings()
    result = support.preview(
        runtime.store(),
        datetime.now(UTC),
        next_minutes,
        s.due_shards,
        account_id=account_id,
        in_flight=runtime.queues().in_flight if account_id is None else None,
    )
    return _json(200, result)


@app.get("/reminders/<reminder_id>", responses=_doc(200, 404, 422))
def get(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    reminder = _visible_reminder(reminder_id)
    return _json(200, view(reminder), etag=reminder.version)


@app.patch("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 412, 415, 422))
def reschedule(reminder_id: Annotated[ReminderId, Path()], body: Correction) -> Response[Any]:
    """Correct a reminder in place (due_at, a channel's destination, template version, data) under
    an optional ``If-Match: <version>``. 409 while a delivery is sending, and 409
    ``correction_after_possible_acceptance`` after any attempt that may have been accepted unless the
    body asks ``resend: true`` (a new delivery generation with a new webhook-id)."""
    _one_object_body()
    _visible_reminder(reminder_id)
    if body.due_at is not None and body.due_local is not None:
        raise ValidationError("due_at", "give at most one of due_at (with offset) or due_local")
    service = runtime.reminders_service()
    changes = body.changes()
    if body.due_at is not None or body.due_local is not None:
        if body.due_local is not None:
            zone_name = (
                body.time_zone or service.get(reminder_id).time_zone
            )  # a local reschedule keeps the zone
            _resolve_due(None, body.due_local, zone_name)  # 422 naming the field, before anything is written
        due = service.due_change(reminder_id, body.due_at, due_local=body.due_local, time_zone=body.time_zone)
        changes.insert(0, due)
    elif body.time_zone is not None:
        raise ValidationError("time_zone", "changes only with due_at or due_local")
    if not changes:
        raise ValidationError("body", "names nothing to change (due_at, due_local, channels, template, data)")
    updated = service.correct(reminder_id, changes, if_match=_if_match(), resend=body.resend)
    return _json(200, view(updated), etag=updated.version)


@app.delete("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 422))
def cancel(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    _visible_reminder(reminder_id)
    return _json(200, view(runtime.reminders_service().cancel(reminder_id)))


# -- webhook endpoints ------------------------------------------------------------------------------
def _use_endpoints(cmd: NewReminder) -> None:
    """Channels naming an endpoint: it must be the account's; the use is recorded before the reminder
    is written (so a delete of the endpoint counts it)."""
    rid = reminder_id(cmd.account_id, cmd.key)
    counters: dict[str, int] = {}
    for ch in cmd.channels:
        n = counters.get(ch.type.value, 0)
        counters[ch.type.value] = n + 1
        if ch.type is ChannelType.WEBHOOK and ch.destination.startswith("ep_"):
            runtime.endpoints_service().use(ch.destination, cmd.account_id, rid, f"webhook-{n}")


Url = Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]


def _storable(v: float) -> float:
    """A number DynamoDB holds (5e-324 is > 0, and below its smallest magnitude: it was a 500)."""
    problem = _number_problem(v)
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
        return _text(v, "description")


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
        return v if v is None else _text(v, "description")


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


def _endpoint_doc(*statuses: int, secret: bool = False) -> dict[int, Any]:
    model = EndpointSecretView if secret else EndpointView
    described: dict[int, tuple[str, Any]] = {
        200: ("the endpoint", model),
        201: ("created; its secret is shown this once", model),
        403: ("the caller's IAM principal may not act for this account", ErrorView),
        404: ("no such endpoint (or route)", ErrorView),
        409: ("conflicts with what is stored (in use: the count of open deliveries)", ErrorView),
        415: (_UNSUPPORTED_MEDIA_TEXT, ErrorView),
        422: ("invalid input, naming the field; nothing was written", ErrorView),
    }
    return {
        code: {"description": text, "content": {"application/json": {"model": m}}}
        for code, (text, m) in ((c, described[c]) for c in statuses)
    }


_ENDPOINT_LINKS = (
    _links("/endpoints/{endpoint_id}", {"endpoint_id": "$response.body#/id"}, "get", "patch", "delete")
    | _links("/endpoints/{endpoint_id}/enable", {"endpoint_id": "$response.body#/id"}, "post")
    | _links("/endpoints/{endpoint_id}/disable", {"endpoint_id": "$response.body#/id"}, "post")
    | _links("/endpoints/{endpoint_id}/rotate-secret", {"endpoint_id": "$response.body#/id"}, "post")
    | {
        "event_endpoint": {
            "operationRef": _op_ref("/accounts/{account_id}/event-endpoint", "put"),
            "parameters": {"account_id": "$response.body#/account_id"},
            "requestBody": {"endpoint_id": "$response.body#/id"},
        }
    }
)


@app.post(
    "/endpoints", responses=_linked(_endpoint_doc(201, 403, 409, 415, 422, secret=True), _ENDPOINT_LINKS, 201)
)
def create_endpoint(body: CreateEndpoint) -> Response[Any]:
    _one_object_body()
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
    return _json(201, _endpoint_view(endpoint, secret))


@app.get("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 422))
def get_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    endpoint = runtime.endpoints_service().get(endpoint_id, caller().sees)
    return _json(200, _endpoint_view(endpoint, with_health=True))


def _health_view(endpoint_id: str, account_id: str) -> EndpointHealthView:
    from ..services.health import report

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
    from ..domain.health import EndpointState

    endpoint = runtime.endpoints_service().get(endpoint_id, caller().sees)
    runtime.endpoint_health().set_state(endpoint.id, endpoint.account_id, EndpointState(state), time.time())
    return _json(200, _endpoint_view(endpoint, with_health=True))


@app.post("/endpoints/<endpoint_id>/enable", responses=_endpoint_doc(200, 404, 422))
def enable_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    return _set_endpoint_state(endpoint_id, "active")


@app.post("/endpoints/<endpoint_id>/disable", responses=_endpoint_doc(200, 404, 422))
def disable_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    return _set_endpoint_state(endpoint_id, "disabled")


@app.patch("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 409, 415, 422))
def patch_endpoint(endpoint_id: Annotated[EndpointId, Path()], body: PatchEndpoint) -> Response[Any]:
    _one_object_body()
    given = body.model_fields_set
    change = EndpointChange(
        url=body.url,
        rate_per_second=body.rate_per_second,
        clear_rate="rate_per_second" in given and body.rate_per_second is None,
        enabled=body.enabled,
        description=body.description,
    )
    return _json(200, _endpoint_view(runtime.endpoints_service().change(endpoint_id, change, caller().sees)))


@app.delete("/endpoints/<endpoint_id>", responses=_endpoint_doc(200, 404, 409, 422))
def delete_endpoint(endpoint_id: Annotated[EndpointId, Path()]) -> Response[Any]:
    service, visible = runtime.endpoints_service(), caller().sees
    endpoint = service.get(endpoint_id, visible)
    service.delete(endpoint_id, visible)
    return _json(200, _endpoint_view(endpoint))


@app.post(
    "/endpoints/<endpoint_id>/rotate-secret", responses=_endpoint_doc(200, 404, 409, 415, 422, secret=True)
)
def rotate_endpoint_secret(
    endpoint_id: Annotated[EndpointId, Path()], body: RotateSecret | None = None
) -> Response[Any]:
    if app.current_event.body:
        _one_object_body()
    overlap = body.expires_in_seconds if body is not None else DEFAULT_ROTATION_OVERLAP_SECONDS
    endpoint, secret = runtime.endpoints_service().rotate_secret(endpoint_id, overlap, caller().sees)
    return _json(200, _endpoint_view(endpoint, secret))


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
    403: "the caller's IAM principal may not act for this account",
    404: "the account has no event endpoint (or no such route)",
    415: _UNSUPPORTED_MEDIA_TEXT,
    422: "invalid input, naming the field; nothing was written",
}


def _event_endpoint_doc(*statuses: int) -> dict[int, Any]:
    return {
        c: {
            "description": _EVENT_ENDPOINT_TEXT[c],
            "content": {"application/json": {"model": EventEndpointView if c == 200 else ErrorView}},
        }
        for c in statuses
    }


def _event_endpoint_view(account_id: str, endpoint_id: str, types: tuple[str, ...], at: str) -> BaseModel:
    return EventEndpointView(
        account_id=account_id, endpoint_id=endpoint_id, event_types=list(types), registered_at=at
    )


@app.put(
    "/accounts/<account_id>/event-endpoint",
    responses=_linked(
        _event_endpoint_doc(200, 403, 415, 422),
        _links(
            "/accounts/{account_id}/event-endpoint",
            {"account_id": "$response.body#/account_id"},
            "get",
            "delete",
        ),
        200,
    ),
)
def put_event_endpoint(account_id: Annotated[AccountId, Path()], body: PutEventEndpoint) -> Response[Any]:
    _one_object_body()
    caller().require(account_id)
    r = runtime.opevents_service().register(account_id, body.endpoint_id, body.event_types)
    return _json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


@app.get("/accounts/<account_id>/event-endpoint", responses=_event_endpoint_doc(200, 403, 404, 422))
def get_event_endpoint(account_id: Annotated[AccountId, Path()]) -> Response[Any]:
    caller().require(account_id)
    r = runtime.opevents_service().registration(account_id)
    return _json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


@app.delete("/accounts/<account_id>/event-endpoint", responses=_event_endpoint_doc(200, 403, 404, 422))
def delete_event_endpoint(account_id: Annotated[AccountId, Path()]) -> Response[Any]:
    caller().require(account_id)
    r = runtime.opevents_service().unregister(account_id)
    return _json(200, _event_endpoint_view(r.account_id, r.endpoint_id, r.event_types, r.registered_at))


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


_SUPPRESSION_DOC: dict[int, Any] = {
    200: {"description": "the entries", "content": {"application/json": {"model": SuppressionsView}}},
    403: {
        "description": "the caller's IAM principal may not act for this account",
        "content": {"application/json": {"model": ErrorView}},
    },
    422: {
        "description": "invalid input, naming the field",
        "content": {"application/json": {"model": ErrorView}},
    },
}
_REMOVED_DOC: dict[int, Any] = {
    200: {"description": "entries removed", "content": {"application/json": {"model": SuppressionsRemoved}}},
    403: {
        "description": "the caller's IAM principal may not act for this account",
        "content": {"application/json": {"model": ErrorView}},
    },
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
    return _json(200, SuppressionsView(account_id=account_id, entries=entries))


@app.delete("/suppressions/<address_hash>", responses=_REMOVED_DOC)
def remove_suppression(
    address_hash: Annotated[AddressHash, Path()],
    account_id: Annotated[AccountId, Query()],
    scope: Annotated[Scope | None, Query()] = None,
) -> Response[Any]:
    caller().require(account_id)
    removed = runtime.suppressions().remove(account_id, address_hash, scope)
    if not removed:
        raise NotFoundError("no suppression entry for this account and address hash")
    return _json(200, SuppressionsRemoved(account_id=account_id, address_hash=address_hash, removed=removed))


# -- one-click unsubscribe (issue 19; RFC 8058) -------------------------------------------------------
UnsubscribeToken = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]{1,480}\.[A-Za-z0-9_\-]{1,30}$")]


class UnsubscribedView(ApiModel):
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
class ReceiptAccepted(ApiModel):
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
            (401, "unsigned, badly signed, stale, or naming no webhook sent: one answer (Standard Webhooks)"),
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


@app.exception_handler(RequestUnsupportedContentType)
def _unsupported(exc: RequestUnsupportedContentType) -> Response[Any]:
    """Powertools' own refusal (a body route its document does not list): the same 415 shape."""
    raw = str(app.current_event.headers.get("content-type") or "")
    return _unsupported_media(_media_type(raw), [content_types.APPLICATION_JSON])


@app.exception_handler(UnicodeDecodeError)
def _not_text(exc: UnicodeDecodeError) -> Response[Any]:
    """A body that is not UTF-8 (API Gateway hands it over base64-encoded) is not JSON either."""
    return _error(422, "invalid", "body: not UTF-8 encoded JSON", "body")


@app.exception_handler(ValidationError)
def _invalid(exc: ValidationError) -> Response[Any]:
    return _error(422, "invalid", str(exc), exc.field)


@app.exception_handler(ForbiddenError)
def _forbidden(exc: ForbiddenError) -> Response[Any]:
    return _error(403, "forbidden", str(exc))


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
    if isinstance(exc, EndpointInUseError):
        body = {"error": "endpoint_in_use", "message": str(exc), "open_deliveries": exc.count}
        return Response(409, content_types.APPLICATION_JSON, json.dumps(body))
    return _error(409, exc.code, str(exc))


@app.exception_handler(PreconditionFailedError)
def _stale(exc: PreconditionFailedError) -> Response[Any]:
    return _error(412, "precondition_failed", str(exc), "If-Match")


@app.exception_handler(StoreConflictError)
def _busy(exc: StoreConflictError) -> Response[Any]:
    """Concurrent writes kept winning (a reminder changing, transactions conflicting on an endpoint):
    transient, so the same request can be sent again (``Retry-After``), never a 5xx."""
    resp = _error(409, "concurrent_update", str(exc))
    resp.headers["Retry-After"] = str(CONCURRENT_RETRY_AFTER_SECONDS)
    return resp


@app.exception_handler(ProducersPausedError)
def _paused(exc: ProducersPausedError) -> Response[Any]:
    return _error(503, "producers_paused", str(exc))


@coldstart.reported
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger, metrics = runtime.logger(), runtime.metrics()

    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        event, refused = refuse_unsupported_media(event)
        return refused if refused is not None else app.resolve(event, context)

    return run(event, context)
