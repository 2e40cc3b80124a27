"""``/reminders``: create, find by key or list what needs attention, preview what fires next, read,
correct, cancel. Models in reminder_models.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from ... import runtime
from ...domain.errors import ValidationError
from ...domain.listing import MAX_LIMIT, MAX_PREVIEW_MINUTES, ListQuery
from ...domain.models import ChannelType, Delivery, Reminder, reminder_id
from ...domain.retention import expires_at
from ...domain.retry import RetryPolicy
from ...domain.schedule import iso
from ...services.intents import ChannelSpec, NewReminder, resolve_local
from .reminder_models import (
    AttemptView,
    AttentionState,
    Correction,
    CreateReminder,
    DeliveryView,
    ListedView,
    ListView,
    PreviewView,
    ReminderView,
    WebhookChannel,
    resolve_due,
)
from .shared import (
    AccountId,
    Instant,
    Key,
    ReminderId,
    as_json,
    caller,
    linked,
    links_to,
    one_object_body,
    op_ref,
    responses,
)

router = Router()


def _if_match() -> int | None:
    """``If-Match: <version>`` (also ``"3"``, ``W/"3"``; ``*`` matches any): optional. Without it the
    correction applies to the current version; with a stale one the answer is 412."""
    raw = (router.current_event.headers or {}).get("if-match")
    if raw is None:
        return None
    text = raw.strip().removeprefix("W/").strip('"')
    if text == "*":
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 12:  # '²'.isdigit() (review 29)
        raise ValidationError("If-Match", "must be the reminder's version, e.g. If-Match: 3")
    return int(text)


_TEXTS = {
    201: "created",
    404: "no such reminder (or route)",
    409: "conflicts with what is stored",
    412: "If-Match names a version that is no longer current; nothing was written",
    503: "producers are paused by an operator",
}


def _doc(*statuses: int, ok: Any = ReminderView, ok_text: str = "the reminder") -> dict[int, Any]:
    """OpenAPI responses: every status an operation can return, each with its body's schema
    (``ok``: the 2xx body's model when it is not a ReminderView)."""
    return responses({**_TEXTS, 200: ok_text}, *statuses, ok=ok)


_REMINDER_LINKS = links_to(
    "/reminders/{reminder_id}",
    {"reminder_id": "$response.body#/id"},
    "get",
    "patch",
    "delete",
    by_key={
        "operationRef": op_ref("/reminders", "get"),
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
        tzdata_release=r.tz_rules,
        generation=r.generation,
        expires_at=expires_at(r),
        locale=r.locale,
    )


def _visible_reminder(rid: str) -> Reminder:
    reminder = runtime.reminders_service().get(rid)
    caller().check_visible(reminder.account_id, f"reminder {rid}")
    return reminder


@router.post(
    "/reminders", responses=linked(_doc(201, 200, 403, 409, 415, 422, 503), _REMINDER_LINKS, 201, 200)
)
def create(body: CreateReminder) -> Response[Any]:
    one_object_body()
    caller().require(body.account_id)
    due_at = resolve_due(body.due_at, body.due_local, body.time_zone)
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
    return as_json(201 if created else 200, view(reminder, just_created=created))


def _utc_iso(name: str, v: datetime) -> str:
    try:
        return iso(v.astimezone(UTC))
    except OverflowError:
        raise ValidationError(name, "outside the calendar once converted to UTC") from None


@router.get(
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
    due_before: Annotated[Instant | None, Query()] = None,
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
        return as_json(200, view(runtime.reminders_service().find(account_id, key)))
    q = ListQuery(
        account_id=account_id,
        state=state,
        due_before=_utc_iso("due_before", due_before) if due_before is not None else None,
        limit=limit,
    )
    page, next_cursor = runtime.attention_index().list(q, cursor)
    items = [ListedView(id=x.reminder_id, state=x.attention, due_at=x.due_at) for x in page]
    return as_json(200, ListView(items=items, next_cursor=next_cursor))


@router.get("/reminders/preview", responses=_doc(200, 403, 422, ok=PreviewView, ok_text="the preview"))
def preview(
    next_minutes: Annotated[int, Query(ge=1, le=MAX_PREVIEW_MINUTES)] = 30,
    account_id: Annotated[AccountId | None, Query()] = None,
) -> Response[Any]:
    """What fires in the next ``next_minutes``. With ``account_id``: what the consumer's rules will
    attempt for it, when, and why (page-limited). Without: every account's due-index entries counted
    per minute and channel (``email``/``webhook`` still to dispatch, ``…:in_sqs`` already handed to
    SQS) and the channel queues' own counts (shared by every account), for a caller that may act for
    every account (the bootstrap principal); it reads the due index and the queues' attributes, no
    reminder row. Changes nothing."""
    from ...services import support  # only here: its imports (~20 ms) are no other route's (issue 32.2)

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
        max_age_seconds=RetryPolicy.from_env().max_age_seconds,
        watch_lag_seconds=s.watch_lag_seconds,
        health=runtime.endpoint_health() if account_id is not None else None,
    )
    return as_json(200, result)


@router.get("/reminders/<reminder_id>", responses=_doc(200, 404, 422))
def get(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    reminder = _visible_reminder(reminder_id)
    return as_json(200, view(reminder), etag=reminder.version)


@router.patch("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 412, 415, 422))
def reschedule(reminder_id: Annotated[ReminderId, Path()], body: Correction) -> Response[Any]:
    """Correct a reminder in place (due_at, a channel's destination, template version, data) under
    an optional ``If-Match: <version>``. 409 while a delivery is sending, and 409
    ``correction_after_possible_acceptance`` after any attempt that may have been accepted unless the
    body asks ``resend: true`` (a new delivery generation with a new webhook-id)."""
    one_object_body()
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
            resolve_due(None, body.due_local, zone_name)  # 422 naming the field, before anything is written
        due = service.due_change(reminder_id, body.due_at, due_local=body.due_local, time_zone=body.time_zone)
        changes.insert(0, due)
    elif body.time_zone is not None:
        raise ValidationError("time_zone", "changes only with due_at or due_local")
    if not changes:
        raise ValidationError("body", "names nothing to change (due_at, due_local, channels, template, data)")
    updated = service.correct(reminder_id, changes, if_match=_if_match(), resend=body.resend)
    return as_json(200, view(updated), etag=updated.version)


@router.delete("/reminders/<reminder_id>", responses=_doc(200, 404, 409, 422))
def cancel(reminder_id: Annotated[ReminderId, Path()]) -> Response[Any]:
    _visible_reminder(reminder_id)
    return as_json(200, view(runtime.reminders_service().cancel(reminder_id)))


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
