"""Typed client of the Reminders API (SigV4) and a webhook receiver's helper (issue 31).

``generated`` is produced by openapi-python-client from the API's ``/openapi.json``
(``make client``); everything else wraps it thinly.
"""

from .client import RemindersClient
from .errors import (
    ApiError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PreconditionFailed,
    Throttled,
    Unavailable,
)
from .generated import models
from .receiver import ABORT, DISABLE, Delivery, InvalidSignature, Receiver

__all__ = [
    "ABORT",
    "DISABLE",
    "ApiError",
    "Conflict",
    "Delivery",
    "Forbidden",
    "InvalidRequest",
    "InvalidSignature",
    "NotFound",
    "PreconditionFailed",
    "Receiver",
    "RemindersClient",
    "Throttled",
    "Unavailable",
    "models",
]
