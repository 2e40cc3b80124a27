"""One exception tree. Whether an error is transient is a property of its class."""

from __future__ import annotations

from collections.abc import Sequence


class ReminderError(Exception):
    """Root of every error this package raises on purpose."""

    transient = False


class ValidationError(ReminderError):
    """Input that names a field and what is wrong with it; nothing was written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFoundError(ReminderError):
    """The reminder (or delivery) does not exist."""


class ConflictError(ReminderError):
    """The request contradicts what is stored (different body for a key, nothing left to change)."""

    code = "conflict"  # the API's ``error`` field


class PossibleAcceptanceError(ConflictError):
    """A correction refused because an earlier attempt may have been accepted (issue 25): the
    receiver may hold the old payload under the same key; only an explicit resend sends again."""

    code = "correction_after_possible_acceptance"


class ProducersPausedError(ReminderError):
    """Operators paused producers: new reminders are rejected until resumed."""

    transient = True


class StoreConflictError(ReminderError):
    """A conditional write lost: someone else changed the row first."""

    transient = True


class ConfigurationError(ReminderError):
    """Our own configuration is wrong (missing secret, SES paused): hold the channel, raise an alarm."""

    transient = True


class MalformedMessageError(ReminderError):
    """A queue message that cannot be parsed: poison, left for maxReceiveCount to isolate."""


class ForbiddenError(ReminderError):
    """The caller acts for an account its IAM principal is not granted (403)."""


class PreconditionFailedError(ReminderError):
    """An ``If-Match`` version that is no longer the reminder's version (HTTP 412)."""


#: The parts of a request a schema error's location starts with (Powertools' ``loc``).
REQUEST_PARTS = frozenset({"body", "query", "path", "header", "headers", "cookie"})


def field_name(loc: Sequence[object]) -> str:
    """A schema error's field as our own checks name it (issue 28 item 5): its dotted path inside
    the body or the query, without the part (``due_local``, ``send_window.start``, ``next_minutes``);
    ``body`` when the body itself is at fault."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in REQUEST_PARTS:
        parts = parts[1:]
    return ".".join(parts) or "body"
