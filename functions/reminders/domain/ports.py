"""Ports: what the services need from the outside world. Adapters implement these Protocols
(DynamoDB, SQS, SES, HTTP, Powertools) and in-memory twins implement them for tests and the simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from .models import Delivery, Reminder
from .retry import SendResult
from .templates import TemplateVersion

#: What decoding a malformed stored row raises (a value this code cannot read, a missing field, a
#: wrong type, a time at the end of the calendar, a number a decoder refuses). The dispatcher and
#: the watchdog skip such a row, count it and go on.
ROW_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
    ArithmeticError,  # an overflow; a decimal a decoder refuses (decimal.Rounded, Inexact)
)


class Clock(Protocol):
    def now(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One row of the sharded, time-bucketed due index (projected: version, channels, watch flag)."""

    reminder_id: str
    sort_key: str  # "<account tag><due ISO>#<id hex>" (domain/schedule.py index_sk; untagged before)
    version: int
    channels: tuple[str, ...]  # channel ids, e.g. ("webhook-0", "email-0")
    watch: bool = False  # a watchdog re-check entry, not a dispatch entry


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """A reminder row's due-index entry as a table scan reads it (the backfill of issue 28): the
    row's id and account, its entry's keys and watch flag."""

    reminder_id: str
    account_id: str
    pk: str
    sk: str
    watch: bool


@dataclass(frozen=True, slots=True)
class IndexKey:
    """Where a reminder sits in the due index: partition ``<bucket>#<shard>``, sort ``<tag><due>#<id hex>``.
    ``watch`` marks an entry for the watchdog only (already handed to SQS, or a re-check)."""

    pk: str
    sk: str
    watch: bool = False


@dataclass(slots=True)
class Cursor:
    """Per-shard progress through the due index, checkpointed per page."""

    shard: int
    bucket: str  # the lowest minute bucket not yet fully dispatched
    #: Inside ``bucket``, every entry whose untagged position ``<due ISO>#<reminder id>`` sorts at or
    #: before this was handed over ("" none). Always in the form the code before the account tag
    #: wrote as a sort key (``<due ISO>#~`` once a pass covered up to that instant), so both that
    #: code and this one read it (issue 28 item 3; services/dispatch.py).
    after: str = ""
    watch_bucket: str = ""
    watch_after: str = ""  # "" (whole minutes only since the tag; an untagged key before it)
    #: A dispatch pass in progress inside ``bucket``: ``<bucket>|<after>|<up to>|<last key read>``,
    #: valid only while bucket and after still match (the code before the tag does not write it).
    #: A run stopped by its time budget inside a part writes ``<after>><last key>><last position>``
    #: as the second field (what it handed over of the part, services/dispatch.py ``PART_MARK``):
    #: read as no pass in progress by the code before (it starts the pass again from ``after``).
    page: str = ""
    watch_page: str = ""  # ``<watch bucket>|<last key read>``: the watchdog's pass in progress
    lease_owner: str | None = None
    lease_until: str | None = None
    rev: int = 0

    def in_pass_done(self, sort_key: str, position: str) -> bool:
        """True when the dispatch pass in progress inside ``bucket`` has read this entry (its sort
        key, up to the last key read) and handed it over (its untagged position, in the pass's range)."""
        page = self.page.split("|", 3)
        if len(page) != 4 or page[:2] != [self.bucket, self.after]:
            return False
        return self.after < position <= page[2] and sort_key <= page[3]


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The outcome of the one conditional write that claims a delivery."""

    claimed: bool
    reminder: Reminder | None  # after the claim, or the current row when the claim lost
    lease_expired: bool = False


class ReminderStore(Protocol):
    """The reminder rows, the per-channel delivery ledger and the due index (DynamoDB)."""

    def put_new(self, reminder: Reminder, index: IndexKey) -> bool:
        """Conditional put (the row must not exist) with its due-index entry."""
        ...

    def get(self, reminder_id: str) -> Reminder | None: ...

    def batch_get(
        self, reminder_ids: Sequence[str], *, unreadable: list[str] | None = None
    ) -> list[Reminder]:
        """The rows that exist, in no particular order. A row that cannot be decoded raises, or, when
        ``unreadable`` is given, is left out and its id appended there."""
        ...

    def claim(
        self,
        reminder_id: str,
        channel_id: str,
        version: int,
        worker: str,
        now: datetime,
        lease_until: datetime,
        parked_lease: str | None = None,
    ) -> ClaimResult:
        """Claim a scheduled/queued/retryable delivery of ``version`` that is due (one conditional write)
        and not parked under a lease other than ``parked_lease`` (the one the message names): a row
        whose ``parked_until`` is ahead of ``now`` belongs to its parked message, a copy never takes it."""
        ...

    def claim_expired(
        self,
        reminder_id: str,
        channel_id: str,
        delivery: Delivery,
        worker: str,
        now: datetime,
        lease_until: datetime,
    ) -> ClaimResult:
        """Take over a ``sending`` delivery whose lease (as read in ``delivery``) has expired."""
        ...

    def save_delivery(
        self,
        reminder_id: str,
        delivery: Delivery,
        expected_rev: int,
        *,
        lease_owner: str | None = None,
        version: int | None = None,
    ) -> bool:
        """Write one delivery (its ``rev`` + 1) if its revision is still ``expected_rev`` (and the lease
        is still ``lease_owner``'s, and the reminder still has ``version``)."""
        ...

    def save_reminder(self, reminder: Reminder, expected: dict[str, int], index: IndexKey | None) -> bool:
        """Write the reminder fields and its deliveries if version and every delivery revision match.
        ``expected`` maps "version" and each channel id to the revision read."""
        ...

    def move_index(
        self, reminder_id: str, index: IndexKey, *, version: int | None = None, from_sk: str | None = None
    ) -> bool:
        """Move the reminder's index entry; with ``version``, only while the reminder still has the
        version read (a concurrent reschedule's own entry wins); with ``from_sk``, only while its
        entry is still that sort key with ``index.watch``'s flag (the backfill's rewrite: any other
        write since wins). False when refused or missing."""
        ...

    def scan_index_entries(self, after: str, limit: int) -> tuple[list[IndexedRow], str]:
        """One page of a scan of the table (at most ``limit`` items read): the due-index entries of
        the reminder rows in it, and where the next page starts ("": the scan is done). Operator
        tooling only (the backfill of issue 28)."""
        ...

    def query_index(self, pk: str, after: str, until: str, limit: int) -> tuple[list[IndexEntry], bool]:
        """Entries of one index partition with after < sort key <= until, in order; (entries, more)."""
        ...

    def acquire_cursor(self, shard: int, worker: str, now: datetime, lease_until: datetime) -> Cursor | None:
        """Lease the shard's cursor (created at the current bucket if missing); None when busy."""
        ...

    def ensure_cursor(self, shard: int, start: datetime) -> bool:
        """Create the shard's cursor (dispatch and watch) at ``start`` unless it exists (a conditional
        put); True when this call created it. Writers call it before their first entry in a shard."""
        ...

    def get_cursor(self, shard: int) -> Cursor | None: ...

    def save_cursor(self, cursor: Cursor, release: bool = False) -> bool:
        """Checkpoint, conditional on still holding the lease."""
        ...

    def reference_now(self) -> datetime | None:
        """The store's own clock, the reference every host is measured against (DynamoDB: the
        ``Date`` header of its latest response, advanced by the local monotonic clock since; in
        memory: the clock it was given), or None when unknown (no response yet, no header)."""
        ...

    def get_controls(self) -> dict[str, Any]: ...

    def set_controls(self, controls: dict[str, Any]) -> None: ...

    def raise_shard_high_water(self, shards: int) -> None:
        """Raise the control ``due_shards_high_water`` to ``shards``; never lowers it (conditional)."""
        ...


@dataclass(frozen=True, slots=True)
class OutMessage:
    """A delivery message: ids and version only, never content."""

    reminder_id: str
    channel_id: str
    version: int
    delay_seconds: int = 0
    attributes: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"reminder_id": self.reminder_id, "channel_id": self.channel_id, "version": self.version}


class Queues(Protocol):
    """The channel queues, their DLQs and the dispatch queue (SQS)."""

    def send(self, channel_type: str, messages: Sequence[OutMessage]) -> None:
        """Send in batches of 10; raises if any entry failed."""
        ...

    def change_visibility(self, channel_type: str, receipt_handle: str, seconds: int) -> None: ...

    def dead_letter(self, channel_type: str, message: OutMessage) -> None:
        """Put the delivery's message into the channel DLQ with reason/attempts as attributes."""
        ...

    def send_dispatch(self, shards: Sequence[int]) -> None: ...


@dataclass(frozen=True, slots=True)
class Rendered:
    """What is sent: a pure function of template version and data, identical on every retry."""

    subject: str
    body: str  # JSON for webhooks, text for email
    fingerprint: str
    html: str | None = None  # email rendered from an account's template (issue 30): the HTML part


class Sender(Protocol):
    """A provider adapter (webhook, SES, ...). Never raises for provider behaviour: classifies."""

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult: ...


class Telemetry(Protocol):
    """Metrics and structured logs, without content or personal data."""

    def count(self, name: str, value: float = 1, **dimensions: str) -> None: ...

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None: ...

    def log(self, action: str, **fields: Any) -> None: ...


class NullTelemetry:
    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        return None

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        return None

    def log(self, action: str, **fields: Any) -> None:
        return None


class TemplateStore(Protocol):
    """An account's template versions (issue 30): immutable once written, retired at most once,
    never deleted. Every call names the account: another account's template reads as absent."""

    def put_new(self, tv: TemplateVersion) -> bool:
        """Write the version unless it exists."""
        ...

    def get(
        self, account_id: str, template_id: str, version: int, *, consistent: bool = True
    ) -> TemplateVersion | None: ...

    def versions(self, account_id: str, template_id: str, limit: int) -> list[tuple[int, str, str | None]]:
        """(version, created at, retired at), oldest first."""
        ...

    def retire(self, account_id: str, template_id: str, version: int, at: str) -> str | None:
        """The retirement time (the first one, if retired before), or None when absent."""
        ...
