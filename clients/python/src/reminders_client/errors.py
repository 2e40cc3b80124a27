"""The API's errors as exceptions: every 4xx/5xx body is ``{"message", "error"?, "field"?, "detail"?}``."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An answer other than success. ``field`` names the input at fault when the API says which."""

    def __init__(self, status: int, body: Any) -> None:
        doc = body if isinstance(body, dict) else {}
        self.status = status
        self.message = str(doc.get("message") or body or f"HTTP {status}")
        self.error: str | None = doc.get("error")
        self.field: str | None = doc.get("field")
        self.detail: list[dict[str, Any]] | None = doc.get("detail")
        self.retried = False  # this answer came to a repeated attempt of the call
        where = f" [{self.field}]" if self.field else ""
        super().__init__(f"{status}{where}: {self.message}")


class Forbidden(ApiError):
    """403: not signed (or badly), or the caller's principal may not use that account."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: e.g. the same key with another body, or a delivery is sending now."""


class PreconditionFailed(ApiError):
    """412: If-Match named a version that is no longer current; nothing was written. After a
    retried attempt, an earlier attempt of the same call may have been the one that applied it."""


class InvalidRequest(ApiError):
    """400/413/415/422: the request is wrong; ``field`` says where."""


class Throttled(ApiError):
    """429: slow down (retried by the client where the call is safe to repeat)."""


class Unavailable(ApiError):
    """5xx: the API could not answer now (503: producers paused)."""


def error_for(status: int, body: Any) -> ApiError:
    kind: type[ApiError]
    if status == 403:
        kind = Forbidden
    elif status == 404:
        kind = NotFound
    elif status == 409:
        kind = Conflict
    elif status == 412:
        kind = PreconditionFailed
    elif status == 429:
        kind = Throttled
    elif status >= 500:
        kind = Unavailable
    elif status >= 400:
        kind = InvalidRequest
    else:
        kind = ApiError
    return kind(status, body)
