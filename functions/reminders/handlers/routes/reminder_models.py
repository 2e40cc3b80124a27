"""The request and response models of ``/reminders`` (routes/reminders.py): what a reminder, a
correction, a listing and a preview look like on the wire, with their validation rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    field_validator,
    model_validator,
)

from ...adapters.destinations import MAX_URL_LENGTH, valid_email
from ...domain.corrections import Data, Destination, FieldChange, TemplateVersion
from ...domain.errors import ValidationError
from ...domain.localtime import MAX_ZONE_NAME_LENGTH, SendWindow, UnknownZoneError, parse_wall, zone
from ...domain.models import ChannelType
from ...domain.templates import canonical_locale
from ...services.intents import resolve_local
from .shared import AccountId, ApiModel, EndpointId, Instant, Key, Name, number_problem, valid_text

MAX_DATA_BYTES = 4096
MAX_CHANNELS = 10
#: The due-time range the API accepts (docs/api.md lists it): not before 2000, at most ten years ahead.
EARLIEST_DUE = datetime(2000, 1, 1, tzinfo=UTC)
MAX_DUE_AHEAD = timedelta(days=3653)


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


def _email_address(v: str) -> str:
    if not valid_email(v):
        raise ValueError("not a valid email address")
    return v


Url = Annotated[str, StringConstraints(min_length=8, max_length=MAX_URL_LENGTH)]
EmailAddress = Annotated[str, StringConstraints(max_length=254), AfterValidator(_email_address)]


class WebhookChannel(ApiModel):
    """A webhook: a bare ``url`` (its account's implicit endpoint for that origin), or a registered
    ``endpoint_id`` (its own secret and rate). Exactly one of the two."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["webhook"]
    url: Url | None = None
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
    to: EmailAddress


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


def resolve_due(due_at: datetime | None, due_local: str | None, time_zone: str | None) -> datetime:
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
DataMap = dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], Scalar]


def _valid_data(v: dict[str, Any]) -> dict[str, Any]:
    """The data map's rules (shared by create and correction): text, storable numbers, size."""
    for k, x in v.items():
        valid_text(k, "a key")
        if isinstance(x, str):
            valid_text(x, f"{k!r}")
        elif isinstance(x, list):
            for item in x:
                valid_text(item, f"{k!r}")
        elif isinstance(x, int | float) and not isinstance(x, bool):
            problem = number_problem(x)
            if problem:
                raise ValueError(f"{k!r}: {problem}")
    size = len(json.dumps(v, separators=(",", ":")).encode())
    if size > MAX_DATA_BYTES:
        raise ValueError(f"serialized data is {size} bytes; the limit is {MAX_DATA_BYTES}")
    return v


class _DueAndData(ApiModel):
    """The rules a create and a correction share, on the fields each declares (no field here, so
    each model keeps its own field order): due instants in range, a known zone, a wall time, the
    data map's rules."""

    @field_validator("due_at", "deliver_by", check_fields=False)
    @classmethod
    def _due(cls, v: datetime | None) -> datetime | None:
        return None if v is None else _due_in_range(v)

    @field_validator("time_zone", check_fields=False)
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        return _known_zone(v)

    @field_validator("due_local", check_fields=False)
    @classmethod
    def _local(cls, v: str | None) -> str | None:
        return _wall(v)

    @field_validator("data", check_fields=False)
    @classmethod
    def _small(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if v is None else _valid_data(v)


class CreateReminder(_DueAndData):
    model_config = ConfigDict(extra="forbid")
    key: Key
    account_id: AccountId
    kind: Name
    #: Exactly one of ``due_at`` (an instant with its offset) and ``due_local`` (a wall time in
    #: ``time_zone``; DST gaps read with the offset before the gap, overlaps at their first occurrence).
    due_at: Instant | None = None
    channels: list[Channel] = Field(min_length=1, max_length=MAX_CHANNELS)
    template: TemplateRef
    data: DataMap = Field(default_factory=dict)
    due_local: WallTime | None = None
    time_zone: ZoneName | None = None  # IANA name; also the send window's zone
    send_window: SendWindowIn | None = None
    deliver_by: Instant | None = None  # no attempt starts at or after it: deadline_passed
    locale: Annotated[str, StringConstraints(max_length=35)] | None = None  # BCP 47: the template's

    @field_validator("locale")
    @classmethod
    def _locale(cls, v: str | None) -> str | None:
        return None if v is None else canonical_locale(v)  # a ValueError names the field


ChannelId = Annotated[str, StringConstraints(pattern=r"^(webhook|email)-[0-9]{1,2}$")]


class WebhookTarget(ApiModel):
    model_config = ConfigDict(extra="forbid")
    url: Url


class EmailTarget(ApiModel):
    model_config = ConfigDict(extra="forbid")
    to: EmailAddress


class TemplateVersionRef(ApiModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class Correction(_DueAndData):
    """PATCH /reminders/{id}: any of these fields, applied together under one version bump. A field
    left out is unchanged; ``channels`` maps a channel id (``webhook-0``) to its new destination.
    At most one of ``due_at`` and ``due_local``; ``time_zone`` defaults to the reminder's own."""

    model_config = ConfigDict(extra="forbid")
    due_at: Instant | None = None
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
    tzdata_release: str | None = None  # the tzdata release due_local was resolved under (e.g. 2026a)
    generation: int = 0  # of its delivery keys (0: today's keys)
    expires_at: int | None = None  # epoch seconds after which the table's TTL may delete it
    locale: str | None = None  # BCP 47: the locale its template renders in (issue 30)


class ListedView(ApiModel):
    id: str
    state: str  # the most urgent attention state of its deliveries: dead_letter | held | retryable
    due_at: str


class ListView(ApiModel):
    """A page of an account's reminders that need attention, oldest due first within each state."""

    items: list[ListedView]
    next_cursor: str | None


AttentionState = Literal["dead_letter", "retryable", "held"]


class PreviewView(ApiModel):
    """What fires in the next minutes (support.preview). Every account's: the due index's entries
    counted (``counts_of: due_index_entries``). An account's (``counts_of: consumer_rules``): each
    attempt the consumer's rules foresee, when and why it moved (``attempts``), those a held
    endpoint may take (``may_attempt``), the certain dead letters (``not_attempted``)."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    until: str
    minutes: int
    account_id: str | None
    counts_of: str
    per_minute: dict[str, dict[str, int]]
    totals: dict[str, int]
    first_ids: list[str]
    queues: dict[str, dict[str, int]] | None = None  # every account's preview only: shared queues
    attempts: list[dict[str, str | None]] | None = None  # an account's only, and the three below
    may_attempt: list[dict[str, str | None]] | None = None
    not_attempted: list[dict[str, str | None]] | None = None
    truncated: bool | None = None  # the account's rows read stopped at the page limit
