"""``reminders rewind-dispatch`` (issue 28 item 3): the operator's step after rolling forward from a
rollback to the code before the account-tagged due index."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from reminders_ops.cli import main
from reminders_ops.cli.dispatch_cursors import rewind

from tests.unit.fakes import World
from tests.unit.test_dispatch_tagged_index import _old_code_ran_past


def test_rewind_takes_every_shard_ever_used_back_and_the_stranded_reminder_goes_out() -> None:
    w = World(shards=2)
    w.run_shards()  # raises the shard high-water mark to 2
    rolled_back_at = w.clock.now()
    r = w.create("k", due_in=1000)
    _old_code_ran_past(w, 30)  # shard 0's cursor only: the helper's shard
    c1 = w.store.acquire_cursor(1, "old", w.clock.now(), w.clock.now() + timedelta(seconds=1))
    assert c1 is not None
    c1.bucket = c1.watch_bucket = w.store.get_cursor(0).bucket  # type: ignore[union-attr]
    assert w.store.save_cursor(c1, release=True)
    w.clock.advance(1800)
    out = rewind(w.store, rolled_back_at, w.clock.now())
    assert (out["shards"], out["rewound"], out["busy"]) == (2, [0, 1], [])
    w.run_shards()
    assert Counter(m["reminder_id"] for m in w.queued()) == Counter([r.id])


@pytest.mark.parametrize("bad", ["2026-12-02T10:00:00", "yesterday"])
def test_rewind_refuses_an_instant_without_an_offset(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rewind-dispatch", "--to", bad, "--endpoint-url", "http://127.0.0.1:9"]) == 2
    assert "ISO-8601 instant with an offset" in capsys.readouterr().err
