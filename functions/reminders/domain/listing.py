"""The support desk's listing of reminders that need a person: the query, its page cursor, and
the sort key of the sparse attention index ("<dead_letter|held|retryable>#<due ISO>#<reminder id>").

The cursor is opaque to clients: base64url of the query it belongs to and the last sort key, with a
check digest. It is validated, not secret: an edited, truncated or foreign cursor is a 422 naming
``cursor``; one replayed for another account, state or due_before is refused the same way (and the
index query is confined to the request's account by its key condition anyway).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass

from .errors import ValidationError

MAX_LIMIT = 100
#: The longest preview (``GET /reminders/preview?next_minutes=``), minutes. A preview reads one
#: due-index query per minute bucket and shard: an hour is at most 60 x shards queries, inside the
#: API's time limit (a day was 1,440 x shards: the fuzzer's 10 s read timeout on moto found it).
#: Longer horizons: the due index itself, not a request. Here, not in services/support.py (which
#: re-exports it), so declaring the route does not import the preview's code (issue 32.2).
MAX_PREVIEW_MINUTES = 60
_SK = re.compile(
    r"^(dead_letter|held|retryable)#(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)#(rem_[0-9a-f]{32})$"
)


@dataclass(frozen=True, slots=True)
class Listed:
    reminder_id: str
    attention: str
    due_at: str


@dataclass(frozen=True, slots=True)
class ListQuery:
    account_id: str
    state: str | None = None
    due_before: str | None = None  # ISO UTC, as stored ("2026-12-01T10:00:00.000000Z")
    limit: int = 50

    def bounds(self) -> tuple[str, str] | None:
        """The sort-key range (inclusive) of this query, or None for the whole account."""
        if self.state is None:
            return None  # across states, ``due_before`` filters each page (_in_range)
        hi = f"{self.state}#{self.due_before}" if self.due_before else f"{self.state}#\uffff"
        return f"{self.state}#", hi


def encode_cursor(q: ListQuery, last_sk: str) -> str:
    payload = json.dumps([q.account_id, q.state or "", q.due_before or "", last_sk], separators=(",", ":"))
    check = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return base64.urlsafe_b64encode(f"{check}{payload}".encode()).decode().rstrip("=")


def decode_cursor(q: ListQuery, cursor: str) -> str:
    """The last sort key of the previous page. A cursor that does not decode, was edited, or was made
    for another query is a ValidationError naming ``cursor`` (422)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        check, payload = raw[:16], raw[16:]
        fields = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the decoder's depth (review 29)
        raise ValidationError("cursor", "not a cursor this API issued") from None
    if hashlib.sha256(payload.encode()).hexdigest()[:16] != check or not (
        isinstance(fields, list) and len(fields) == 4 and all(isinstance(f, str) for f in fields)
    ):
        raise ValidationError("cursor", "not a cursor this API issued (altered)")
    account, state, due_before, last = fields
    if (account, state, due_before) != (q.account_id, q.state or "", q.due_before or ""):
        raise ValidationError("cursor", "was issued for a different account, state or due_before")
    if not _SK.match(last):
        raise ValidationError("cursor", "not a cursor this API issued")
    return str(last)


def parse_sk(sk: str) -> Listed:
    m = _SK.match(sk)
    if m is None:  # pragma: no cover - written only by attention_of
        raise ValueError(sk)
    return Listed(reminder_id=m.group(3), attention=m.group(1), due_at=m.group(2))


def in_range(q: ListQuery, sk: str) -> bool:
    state, due, _ = sk.split("#", 2)
    return (q.state is None or state == q.state) and (q.due_before is None or due < q.due_before)


def sk_of(x: Listed) -> str:
    return f"{x.attention}#{x.due_at}#{x.reminder_id}"
