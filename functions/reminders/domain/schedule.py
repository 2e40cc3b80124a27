"""The scheduling rule: SQS holds a message at most 900 s; later reminders wait in the due index.

The due index is time-bucketed (one bucket per minute) and sharded (``shard`` = a stable hash of the
reminder id), so a million reminders due in the same minute spread over ``shards`` partitions that
parallel dispatch workers drain.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections import Counter
from datetime import UTC, datetime, timedelta

from .ports import IndexKey

SQS_MAX_DELAY_SECONDS = 900
BUCKET_SECONDS = 60
#: The dispatcher publishes only what is due before ``now + window - margin``: a reminder created
#: just beyond the window may not be visible in the (eventually consistent) index yet.
INDEX_LAG_MARGIN_SECONDS = 120
#: The control item's field holding the highest shard count ever used: the dispatcher walks every
#: shard below it, so lowering ``due_shards`` never strands the reminders of the removed shards.
SHARD_HIGH_WATER = "due_shards_high_water"
#: A writer creates a shard's cursor this far before its own clock, so entries that writers with a
#: slightly different clock file at "now" are not behind the cursor.
CURSOR_CREATE_MARGIN_SECONDS = 600


def utc(dt: datetime) -> datetime:
    if dt.tzinfo is None:
        raise ValueError("naive datetime")
    return dt.astimezone(UTC)


def iso(dt: datetime) -> str:
    """Canonical UTC form used for storage and sort keys (fixed width, sorts lexically).

    Formatted by hand: ``strftime("%Y")`` does not zero-pad years before 1000 (glibc writes
    ``999-01-01``), which neither sorts nor parses back. One ``%`` over a tuple, not an f-string of
    seven format specs, and no conversion of a time already in UTC: half the CPU (issue 32 item 3:
    five to eleven calls per delivered record)."""
    d = dt if dt.tzinfo is UTC else utc(dt)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % (  # noqa: UP031 - the faster form, on purpose
        d.year,
        d.month,
        d.day,
        d.hour,
        d.minute,
        d.second,
        d.microsecond,
    )


def parse_iso(value: str) -> datetime:
    """The aware UTC time of an ISO 8601 string. ``fromisoformat`` reads a trailing ``Z`` itself
    (Python 3.11) and gives a UTC offset as ``UTC``: only another offset (or none: local time, as
    ``astimezone`` reads a naive time) is converted — half the CPU (issue 32 item 3: six calls per
    delivered record)."""
    dt = datetime.fromisoformat(value)
    return dt if dt.tzinfo is UTC else dt.astimezone(UTC)


#: The message attribute carrying the due time (a hint: the claim's condition is the guard).
DUE_ATTRIBUTE = "due"
#: The longest a consumer waits before it claims: the sub-second rest SQS's whole seconds leave.
PRE_CLAIM_WAIT_MAX_SECONDS = 1.0


def delay_seconds(due_at: datetime, now: datetime) -> int:
    """SQS DelaySeconds for a reminder due at ``due_at``: whole seconds rounded *down*, never
    negative. The message carries ``due_at`` (:func:`due_attributes`) and the consumer waits out the
    sub-second rest before it claims (``Deliverer``); the claim's condition ``due <= now`` makes
    an early send impossible either way (the specification allows this instead of rounding up)."""
    remaining = (due_at - now).total_seconds()
    return max(0, min(SQS_MAX_DELAY_SECONDS, math.floor(remaining)))


#: When the dispatcher can pick the moment of a send (the message is due at least
#: ``PHASE_MIN_AHEAD_SECONDS`` ahead), it sends so that the message turns visible between these two
#: leads before its due time. SQS counts ``DelaySeconds`` in whole seconds from when it receives the
#: send, so a send at a random instant leaves the consumer 0.5 s on average to wait before its claim:
#: billed Lambda time, and a lane held. The floor covers the send's own round trip.
SEND_LEAD_SECONDS = (0.05, 0.15)
#: A message due sooner than this is sent at once, without waiting for its phase.
PHASE_MIN_AHEAD_SECONDS = 2.0
_PHASE_EPSILON = 1e-6


def phase_wait(
    ahead: list[float], lead: tuple[float, float] = SEND_LEAD_SECONDS, *, snap: bool = True
) -> float:
    """Seconds to wait (0 <= wait < 1) before one send of messages due ``ahead`` seconds from now, so
    that the most of them turn visible within ``lead`` before their due time, with whole-second
    delays rounded down (:func:`delay_seconds`): a message sent ``w`` later turns visible
    ``frac(ahead - w)`` before it is due. The smallest wait that makes the most of them turn visible
    exactly ``lead[1]`` before due, even when sending now would land inside ``lead`` (``snap``, a
    pass's first send): every shard's dispatcher then turns the same second visible at the same
    instant, and the consumer receives it in one batch (sending at once inside the band cost the
    simulator's consumer 0.45 invocations per reminder instead of 0.37). Without ``snap`` (the
    pass's later sends, already in phase but for the sends' round trips), 0 when sending now
    lands inside ``lead`` for as many."""
    lo, hi = lead
    fractions = Counter(round(a % 1.0, 3) for a in ahead if a >= PHASE_MIN_AHEAD_SECONDS)
    if not fractions:
        return 0.0

    def covered(w: float) -> int:
        return sum(
            n for f, n in fractions.items() if lo - _PHASE_EPSILON <= (f - w) % 1.0 <= hi + _PHASE_EPSILON
        )

    best_wait, best = 0.0, -1 if snap else covered(0.0)
    for w in sorted({(f - hi) % 1.0 for f in fractions}):
        n = covered(w)
        if n > best:
            best_wait, best = w, n
    return best_wait


def due_attributes(due_at: datetime) -> dict[str, str]:
    """The message attributes of a delivery message for a reminder due at ``due_at``."""
    return {DUE_ATTRIBUTE: iso(due_at)}


def within_window(due_at: datetime, now: datetime, window_seconds: int = SQS_MAX_DELAY_SECONDS) -> bool:
    """True when SQS can hold the message until it is due (exactly the window counts)."""
    return (due_at - now).total_seconds() <= window_seconds


def bucket_of(when: datetime) -> str:
    """The minute bucket ``YYYYMMDDHHMM`` of an instant (years zero-padded, as in :func:`iso`)."""
    d = utc(when)
    return f"{d.year:04d}{d.month:02d}{d.day:02d}{d.hour:02d}{d.minute:02d}"


def bucket_start(bucket: str) -> datetime:
    # Sliced by hand: strptime costs ~50 µs and the dispatcher calls this per bucket per shard.
    b = bucket
    return datetime(int(b[0:4]), int(b[4:6]), int(b[6:8]), int(b[8:10]), int(b[10:12]), tzinfo=UTC)


def next_bucket(bucket: str) -> str:
    return bucket_of(bucket_start(bucket) + timedelta(seconds=BUCKET_SECONDS))


def shard_of(reminder_id: str, shards: int) -> int:
    return int.from_bytes(hashlib.blake2b(reminder_id.encode(), digest_size=4).digest(), "big") % shards


def index_pk(bucket: str, shard: int) -> str:
    return f"{bucket}#{shard:03d}"


#: Characters of an account's tag in the due index's sort key: base32 of 80 bits of its hash (issue 28,
#: helper h28t: the previous build's 40 bits were brute-forced to a collision in seconds, and a
#: colliding account's volume could cut another's preview). The entry's keys are attributes of the
#: reminder's row, which must stay under one write unit (1,018 B at worst with a receiver receipt).
ACCOUNT_TAG_LENGTH = 16
#: Characters of the previous build's tag (40 bits): its entries are read as they are and rewritten
#: by ``reminders backfill-tags``. This build's tag begins with it (:func:`account_tag`).
PREVIOUS_TAG_LENGTH = 8
_TAG_SECOND_HALF = b"account-tag-2"
_REMINDER_ID_PREFIX = "rem_"


def account_tag(account_id: str) -> str:
    """The account's fixed-width tag leading its due-index sort keys (issue 28 item 1): an account's
    entries of one partition are one key range, so its preview reads only its own entries.

    The previous build's 40-bit tag followed by 40 bits of a second, independent hash (blake2b
    personalised): 80 bits for a collision, and a rewrite of an entry from the previous build's form
    to this one moves it forward in its partition (the previous key is a prefix of the new one but
    for the due time, whose year's ``2``/``0`` sort before every base32 character after it), never
    behind a dispatcher's page; the previous build's preview range still holds this build's entries."""
    data = account_id.encode()
    digest = hashlib.blake2b(data, digest_size=5).digest()
    digest += hashlib.blake2b(data, digest_size=5, person=_TAG_SECOND_HALF).digest()
    return base64.b32encode(digest).decode().lower()


def index_sk(due_at: datetime, reminder_id: str, account_id: str) -> str:
    """``<account tag><due ISO>#<reminder id without rem_>``: fixed width. Inside one minute's
    partition the entries sort by account, then due time; the dispatcher and the watchdog read whole
    minutes. The entry's reminder id is its projected ``rid``; the sort key's copy only orders."""
    return tagged_sk(due_at, reminder_id, account_tag(account_id))


def tagged_sk(due_at: datetime, reminder_id: str, tag: str) -> str:
    return f"{tag}{iso(due_at)}#{reminder_id.removeprefix(_REMINDER_ID_PREFIX)}"


def account_range(account_id: str) -> tuple[str, str]:
    """(after, until) for ``query_index``: every entry of the account in one partition (of this
    build's tag: an entry of an older form sorts before ``after``, as its due time's ``20`` does)."""
    tag = account_tag(account_id)
    return tag, tag + "~"


def sk_tag_length(sort_key: str) -> int:
    """The tag's length in a sort key of any form the index holds: 0 (written before the tag:
    ``<due ISO>#<id>``), PREVIOUS_TAG_LENGTH (the previous build's), ACCOUNT_TAG_LENGTH, or another
    (a later build's, read after a rollback to this one: review rev28c). A tag is base32 (no dash)
    and the due time's year has four digits, so the first dash is the year's, four characters after
    the tag, whatever its length. A key with no dash: 0 (its due time does not parse: a bad row)."""
    return max(sort_key.find("-") - 4, 0)


def sk_due(sort_key: str) -> str:
    """The due ISO of a sort key (of any form: :func:`sk_tag_length`)."""
    return sort_key[sk_tag_length(sort_key) :].split("#", 1)[0]


def sk_tag(sort_key: str) -> str:
    """The account tag of a sort key ("" for an entry written before the tag; the previous build's
    8-character tag for one it wrote)."""
    return sort_key[: sk_tag_length(sort_key)]


def sk_current(sort_key: str) -> bool:
    """True when the entry carries this build's tag (``reminders backfill-tags`` leaves it)."""
    return sk_tag_length(sort_key) == ACCOUNT_TAG_LENGTH


#: The sort key above every entry of a partition: a whole minute.
WHOLE_BUCKET = "~"


def untagged_position(sort_key: str, reminder_id: str) -> str:
    """Where an entry of either form sits in the dispatcher's hand-over order inside its minute:
    ``<due ISO>#<reminder id>``, the sort key as written before the tag. A shard cursor's ``after``
    is such a position, so the code before the tag and this one read the same cursor."""
    return f"{sk_due(sort_key)}#{reminder_id}"


def position_upto(at: datetime) -> str:
    """The position after every entry due at or before ``at`` (an untagged key's form)."""
    return f"{iso(at)}#~"


def watch_key(reminder_id: str, shard: int, at: datetime, account_id: str) -> IndexKey:
    """A watchdog-only entry at ``at``: the watchdog judges the reminder once ``at + watch_lag`` passed."""
    return tagged_watch_key(reminder_id, shard, at, account_tag(account_id))


def tagged_watch_key(reminder_id: str, shard: int, at: datetime, tag: str) -> IndexKey:
    """:func:`watch_key` from the account's tag (an index entry's own, :func:`sk_tag`)."""
    return IndexKey(index_pk(bucket_of(at), shard), tagged_sk(at, reminder_id, tag), True)


def dispatch_horizon(now: datetime, window_seconds: int = SQS_MAX_DELAY_SECONDS) -> datetime:
    margin = min(INDEX_LAG_MARGIN_SECONDS, window_seconds // 4)
    return now + timedelta(seconds=window_seconds - margin)
