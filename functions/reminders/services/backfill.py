"""The backfill of the account-tagged due index (issue 28, review rev28): rewrite the due-index
entries written before the tag (``<due ISO>#<reminder id>``) and those of the previous build's
8-character tag (``<8-char tag><due ISO>#<id hex>``, helper h28t) into this build's form
(``<16-char account tag><due ISO>#<id hex>``), so that an account's preview, which reads only its
tag's key range, finds the reminders created before the upgrade. Either rewrite moves the entry
forward in its partition (``schedule.account_tag``).

A paged scan of the table (operator tooling, every account: each entry gets its own row's account's
tag). Only an entry (a dispatch or a watchdog one, which keeps its kind) in a minute that starts at
least a minute after the widest dispatch horizon (SQS's 900 s window) is rewritten: no dispatcher or
watchdog pass reads that minute yet, so an entry never changes its place under a pass in progress; a
nearer one is left (the dispatcher hands it over, the watchdog re-arms it, within minutes). A watch
entry must be rewritten too: a retry or deferral the build before the tag put on watch hours ahead is
promised by the preview only through it (review rev28b). Each rewrite is conditional on the row's
entry still being the one of an older form the scan read: a correction, a hand-over or a delete since
wins, and a rerun (or a lost answer's retry) rewrites nothing twice. Resumable from the position a
bounded run returns.

An entry of a tag of another length (a later build's, after a rollback to this one) is rewritten too,
so this build's preview finds it; that rewrite moves it backward in its partition (this build's key
sorts first), which the horizon guard keeps away from every pass (review rev28c). An entry whose key
holds no due time is counted ``bad`` and left, as the dispatcher leaves a bad row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..domain.ports import IndexKey, ReminderStore
from ..domain.schedule import (
    BUCKET_SECONDS,
    SQS_MAX_DELAY_SECONDS,
    account_tag,
    bucket_of,
    bucket_start,
    dispatch_horizon,
    parse_iso,
    sk_current,
    sk_due,
    tagged_sk,
)

#: Items read per scan page (a scan's Limit counts items read, matched or not).
SCAN_PAGE = 500


@dataclass(slots=True)
class BackfillReport:
    scanned: int = 0  # reminder rows with a due-index entry, read
    rewritten: int = 0  # entries of another form (untagged, 8-char tag) rewritten into this build's
    changed: int = 0  # refused: the row's entry moved since the scan read it (it wins)
    near: int = 0  # of an older form, due too soon to move (the dispatcher takes it as it is)
    bad: int = 0  # no due time in its key (the dispatcher's bad row): left, the scan goes on (rev28c)
    after: str = ""  # where to resume ("" once the scan is done)


def rewrite_entry(
    store: ReminderStore, reminder_id: str, account_id: str, pk: str, sk: str, *, watch: bool = False
) -> bool:
    """Rewrite one entry of an older form in place (same partition, same kind) with the account's
    tag, only while the row's entry is still ``sk`` of that kind (``watch``). False: refused."""
    new = tagged_sk(parse_iso(sk_due(sk)), reminder_id, account_tag(account_id))
    return store.move_index(reminder_id, IndexKey(pk, new, watch), from_sk=sk)


def far_enough(sk: str, now: datetime) -> bool:
    """The entry's minute starts at least a minute after the widest dispatch horizon."""
    minute = bucket_start(bucket_of(parse_iso(sk_due(sk))))
    return minute >= dispatch_horizon(now, SQS_MAX_DELAY_SECONDS) + timedelta(seconds=BUCKET_SECONDS)


def backfill_tags(
    store: ReminderStore,
    now: Callable[[], datetime],
    *,
    after: str = "",
    page: int = SCAN_PAGE,
    max_pages: int | None = None,
) -> BackfillReport:
    """Scan from ``after`` ("" from the start) for at most ``max_pages`` pages of ``page`` items
    (None: to the end) and rewrite each entry of an older form far enough ahead (module doc)."""
    report = BackfillReport(after=after)
    pages = 0
    while max_pages is None or pages < max_pages:
        rows, report.after = store.scan_index_entries(report.after, page)
        pages += 1
        for row in rows:
            report.scanned += 1
            if sk_current(row.sk):
                continue
            try:
                far = far_enough(row.sk, now())
            except ValueError:
                report.bad += 1
                continue
            if not far:
                report.near += 1
            elif rewrite_entry(store, row.reminder_id, row.account_id, row.pk, row.sk, watch=row.watch):
                report.rewritten += 1
            else:
                report.changed += 1
        if not report.after:
            break
    return report
