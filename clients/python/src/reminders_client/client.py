"""``RemindersClient``: the generated API functions behind SigV4, typed results, errors as
exceptions, listings as iterators, and retries only where repeating a call is safe.

Which calls are retried (up to ``max_attempts``, exponential backoff with full jitter, honouring
``Retry-After``), and why:

* reads (``get``, ``find``, ``attention``, ``get_endpoint``): no effect to repeat;
* ``create``: idempotent by its business key — the same ``(account_id, key)`` and body answers 200
  with the reminder the first attempt created (another body: 409, never a second reminder);
* ``correct`` *with* ``if_match``: conditional — it cannot apply twice; if an earlier attempt did
  apply, the retry answers 412 and :class:`PreconditionFailed` says so (``get`` shows the result);
* ``cancel``: it cannot cancel twice; a cancel of a canceled reminder answers 409, so after a
  retry that 409 is checked with a read and the canceled reminder is answered;
* every other call (``correct`` without ``if_match``, endpoint changes, secret rotation) only when
  the API certainly did nothing: the connection was never made, or it answered 429.

Transport errors after the request left and 5xx answers are retried for the first four only. A
``Retry-After`` over :data:`MAX_RETRY_AFTER_SECONDS` is not waited for: the error is raised.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx

from .auth import SigV4
from .errors import ApiError, Conflict, PreconditionFailed, error_for
from .generated.api.default import (
    cancel_reminders_reminder_id_delete as _cancel,
)
from .generated.api.default import (
    create_endpoint_endpoints_post as _create_endpoint,
)
from .generated.api.default import (
    create_reminders_post as _create,
)
from .generated.api.default import (
    disable_endpoint_endpoints_endpoint_id_disable_post as _disable_endpoint,
)
from .generated.api.default import (
    enable_endpoint_endpoints_endpoint_id_enable_post as _enable_endpoint,
)
from .generated.api.default import (
    find_reminders_get as _find,
)
from .generated.api.default import (
    get_endpoint_endpoints_endpoint_id_get as _get_endpoint,
)
from .generated.api.default import (
    get_reminders_reminder_id_get as _get,
)
from .generated.api.default import (
    reschedule_reminders_reminder_id_patch as _correct,
)
from .generated.api.default import (
    rotate_endpoint_secret_endpoints_endpoint_id_rotate_secret_post as _rotate,
)
from .generated.client import Client
from .generated.models import (
    Correction,
    CreateEndpoint,
    CreateReminder,
    EndpointSecretView,
    EndpointView,
    ListedView,
    ListView,
    ReminderView,
    RotateSecret,
)
from .generated.types import UNSET, Response

T = TypeVar("T")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_REGION_IN_HOST = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com")
#: Answers after which the API did nothing: any call may be repeated.
_NOT_DONE = frozenset({429})
#: Answers worth repeating a safe call after.
_TRANSIENT = frozenset({429, 500, 502, 503, 504})
#: The longest wait before a retry (the AWS SDKs' cap): an answer asking for longer (``Retry-After``
#: of an hour, ``inf``, ``nan`` from a proxy or a hostile endpoint) is raised at once, not slept on.
MAX_RETRY_AFTER_SECONDS = 20.0


class RemindersClient:
    """``RemindersClient("https://<api>.execute-api.<region>.amazonaws.com")`` signs with the default
    boto3 credentials; pass ``session`` (a boto3 Session) or ``credentials`` to choose, ``region`` when
    the endpoint does not say it (a custom domain, the local runtime: us-east-1 by default)."""

    def __init__(
        self,
        endpoint: str,
        *,
        session: Any = None,
        credentials: Any = None,
        region: str | None = None,
        timeout_seconds: float = 10.0,
        max_attempts: int = 3,
        backoff_seconds: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        allow_plain_http: bool = False,
    ) -> None:
        """``allow_plain_http``: sign and send over ``http://`` to a host other than this machine (a
        signed request read on the wire can be replayed for 5 minutes); loopback needs no flag."""
        url = httpx.URL(endpoint)
        if url.scheme != "https" and not allow_plain_http and url.host not in _LOOPBACK:
            raise ValueError(f"endpoint {endpoint!r}: https, or http to this machine (127.0.0.1, localhost)")
        if credentials is None:
            if session is None:
                import botocore.session

                session = botocore.session.get_session()
            get = getattr(session, "get_credentials", None)
            credentials = get() if get else None
        found = _REGION_IN_HOST.search(endpoint)
        region = region or (found.group(1) if found else None) or getattr(session, "region_name", None)
        self.region = region or "us-east-1"
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff_seconds
        self._sleep = sleep
        self._api = Client(
            base_url=endpoint.rstrip("/"),
            timeout=httpx.Timeout(timeout_seconds),
            raise_on_unexpected_status=False,
            httpx_args={
                "auth": SigV4(credentials, self.region),
                **({"transport": transport} if transport else {}),
            },
        )

    # -- reminders ---------------------------------------------------------------------------------
    def create(self, reminder: CreateReminder | dict[str, Any]) -> ReminderView:
        body = reminder if isinstance(reminder, CreateReminder) else CreateReminder.from_dict(reminder)
        return self._call(lambda c: _create.sync_detailed(client=c, body=body), ReminderView, safe=True)

    def get(self, reminder_id: str) -> ReminderView:
        return self._call(lambda c: _get.sync_detailed(reminder_id, client=c), ReminderView, safe=True)

    def find(self, account_id: str, key: str) -> ReminderView:
        """The reminder of a business key."""
        return self._call(
            lambda c: _find.sync_detailed(client=c, account_id=account_id, key=key), ReminderView, safe=True
        )

    def correct(
        self, reminder_id: str, correction: Correction | dict[str, Any], *, if_match: int | None = None
    ) -> ReminderView:
        """PATCH: change what is not sent yet; ``if_match`` (the ``version`` you read) makes it
        conditional — and retryable."""
        body = correction if isinstance(correction, Correction) else Correction.from_dict(correction)
        headers = {"If-Match": f'"{if_match}"'} if if_match is not None else {}
        return self._call(
            lambda c: _correct.sync_detailed(reminder_id, client=c.with_headers(headers), body=body),
            ReminderView,
            safe=if_match is not None,
        )

    def cancel(self, reminder_id: str) -> ReminderView:
        try:
            return self._call(lambda c: _cancel.sync_detailed(reminder_id, client=c), ReminderView, safe=True)
        except Conflict as exc:
            if exc.retried and (now := self.get(reminder_id)).state == "canceled":
                return now  # an earlier attempt of this call canceled it
            raise

    def attention(
        self, account_id: str, *, state: str | None = None, page_size: int = 50
    ) -> Iterator[ListedView]:
        """Every reminder of the account that needs attention (dead letter, retryable, held), page
        after page (``next_cursor``), lazily."""
        cursor: str | None = None
        while True:
            page = self._call(
                lambda c, cursor=cursor: _find.sync_detailed(
                    client=c,
                    account_id=account_id,
                    state=state if state is not None else UNSET,  # type: ignore[arg-type]
                    limit=page_size,
                    cursor=cursor if cursor is not None else UNSET,
                ),
                ListView,
                safe=True,
            )
            yield from page.items
            following = page.next_cursor if isinstance(page.next_cursor, str) else None
            if not following:
                return
            if following == cursor:  # the page after this one is this one: it would never end
                raise ApiError(200, {"message": "the listing repeated its cursor", "field": "cursor"})
            cursor = following

    # -- endpoints ---------------------------------------------------------------------------------
    def create_endpoint(self, endpoint: CreateEndpoint | dict[str, Any]) -> EndpointSecretView:
        """Its ``secret`` is shown once: keep it for the receiver."""
        body = endpoint if isinstance(endpoint, CreateEndpoint) else CreateEndpoint.from_dict(endpoint)
        return self._call(lambda c: _create_endpoint.sync_detailed(client=c, body=body), EndpointSecretView)

    def get_endpoint(self, endpoint_id: str) -> EndpointView:
        return self._call(
            lambda c: _get_endpoint.sync_detailed(endpoint_id, client=c), EndpointView, safe=True
        )

    def rotate_secret(
        self, endpoint_id: str, *, old_expires_in_seconds: int | None = None
    ) -> EndpointSecretView:
        """A new secret; the old one keeps signing (beside it) for ``old_expires_in_seconds``."""
        body = (
            RotateSecret(expires_in_seconds=old_expires_in_seconds)
            if old_expires_in_seconds is not None
            else UNSET
        )
        return self._call(
            lambda c: _rotate.sync_detailed(endpoint_id, client=c, body=body), EndpointSecretView
        )

    def enable_endpoint(self, endpoint_id: str) -> EndpointView:
        return self._call(lambda c: _enable_endpoint.sync_detailed(endpoint_id, client=c), EndpointView)

    def disable_endpoint(self, endpoint_id: str) -> EndpointView:
        return self._call(lambda c: _disable_endpoint.sync_detailed(endpoint_id, client=c), EndpointView)

    # -- the one loop ------------------------------------------------------------------------------
    def _call(self, send: Callable[[Client], Response[Any]], expect: type[T], *, safe: bool = False) -> T:
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= self.max_attempts
            try:
                response = send(self._api)
            except httpx.TransportError as exc:
                never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if last or not (safe or never_sent):
                    raise
                self._pause(attempt, 0.0)
                continue
            status = int(response.status_code)
            if isinstance(response.parsed, expect) and status < 300:
                return response.parsed
            if not last and status in (_TRANSIENT if safe else _NOT_DONE):
                wait = _retry_after(response.headers.get("retry-after"))
                if wait is not None:
                    self._pause(attempt, wait)
                    continue
            error = error_for(status, _body(response))
            error.retried = attempt > 1
            if isinstance(error, PreconditionFailed) and attempt > 1:
                error.message += " (this call was retried: an earlier attempt may have applied it)"
            raise error

    def _pause(self, attempt: int, wait: float) -> None:
        self._sleep(max(wait, random.uniform(0, self.backoff * 2 ** (attempt - 1))))


def _retry_after(header: str | None) -> float | None:
    """Seconds to wait that ``Retry-After`` asks for (0 when it says nothing usable), or None when
    it asks for more than :data:`MAX_RETRY_AFTER_SECONDS` (or forever): then the call is not retried."""
    try:
        wait = float(header) if header else 0.0
    except ValueError:
        return 0.0
    if not math.isfinite(wait) or wait > MAX_RETRY_AFTER_SECONDS:
        return None
    return max(wait, 0.0)


def _body(response: Response[Any]) -> Any:
    import json

    try:
        return json.loads(response.content or b"null")
    except ValueError:
        return response.content.decode(errors="replace")


__all__ = ["ApiError", "RemindersClient"]
