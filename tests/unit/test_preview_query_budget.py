"""An account's preview while a shard's dispatcher lags (issue 28, review suspicion): it reads the due
index from where the cursor is, one query per minute and shard, so six hours behind at 16 shards is
~6,000 queries (~48 s at 8 ms a query, bench/LATENCY_MODEL.md), past API Gateway's 29 s. The work per
preview is bounded by a query budget; the answer says ``truncated`` when it stopped there, and still
holds what the window itself promises."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reminders.domain.schedule import bucket_of
from reminders.services import support

from tests.unit.fakes import World

SHARDS = 16
#: ~16 s of queries at 8 ms each: under API Gateway's 29 s with room for the rest of the request.
QUERIES_UNDER_29_S = 2000


class CountingStore:
    """The world's store, counting due-index queries (everything else passes through)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.queries = 0

    def query_index(self, *args: Any, **kwargs: Any) -> Any:
        self.queries += 1
        return self._store.query_index(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _lagging(w: World, seconds: float) -> None:
    """Every shard's dispatcher and watchdog ``seconds`` behind now (a paused rule)."""
    at = bucket_of(w.clock.now() - timedelta(seconds=seconds))
    for shard in range(w.shards):
        c = w.store.acquire_cursor(shard, "paused", w.clock.now(), w.clock.now() + timedelta(seconds=1))
        assert c is not None
        c.bucket = c.watch_bucket = at
        c.after = c.watch_after = c.page = c.watch_page = ""
        assert w.store.save_cursor(c, release=True)


def _ids(out: dict[str, Any]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}


def test_a_preview_reads_past_api_gateways_timeout_when_the_dispatcher_lags_six_hours() -> None:
    w = World(shards=SHARDS)
    w.run_shards()
    soon = w.create("soon", due_in=600, account_id="acct-1")  # inside the preview's window
    _lagging(w, 6 * 3600)
    counting = CountingStore(w.store)
    out = support.preview(counting, w.clock.now(), 60, SHARDS, account_id="acct-1")  # type: ignore[arg-type]
    assert counting.queries <= QUERIES_UNDER_29_S, counting.queries
    assert out["truncated"]  # it stopped before reading every minute behind: it says so
    assert soon.id in _ids(out)  # what the window promises comes first


def test_a_preview_reads_every_minute_behind_and_is_whole_when_the_lag_fits_the_budget() -> None:
    w = World(shards=SHARDS)
    w.run_shards()
    overdue = w.create("overdue", due_in=1500, account_id="acct-1")  # in the index, not handed over
    _lagging(w, 60)
    w.clock.advance(1500 + 600)  # 10 minutes overdue; every cursor 45 minutes behind
    soon = w.create("soon", due_in=600, account_id="acct-1")
    counting = CountingStore(w.store)
    out = support.preview(counting, w.clock.now(), 60, SHARDS, account_id="acct-1")  # type: ignore[arg-type]
    assert counting.queries <= QUERIES_UNDER_29_S, counting.queries
    assert not out["truncated"]
    assert _ids(out) == {overdue.id, soon.id}
