"""``reminders backfill-tags`` on DynamoDB (moto): the upgrade's step of issue 28 — entries written
before the account tag get their row's account's tag, page by page, resumable, and only once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reminders import runtime
from reminders.domain.ports import IndexKey
from reminders.domain.schedule import account_tag, bucket_of, index_pk, index_sk, iso, sk_due, sk_tag
from reminders_ops.cli import main

from tests.contract.test_store_contract import make


def _entries(store: Any) -> dict[str, tuple[str, bool]]:
    rows, after = [], ""
    while True:
        page, after = store.scan_index_entries(after, 100)
        rows += page
        if not after:
            return {r.reminder_id: (r.sk, r.watch) for r in rows}


def test_backfill_tags_cli_rewrites_untagged_entries_page_by_page_and_only_once(
    aws: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store = runtime.store()
    now = datetime.now(UTC)
    rs = [make(i, due=now + timedelta(days=1 + i)) for i in range(5)]
    near = make(9, due=now + timedelta(minutes=5))  # the dispatcher takes it as it is
    for r in [*rs, near]:
        store.put_new(r, IndexKey(index_pk(bucket_of(r.due_at), r.shard), f"{iso(r.due_at)}#{r.id}"))
    argv = ["backfill-tags", "--table", aws["TABLE_NAME"], "--page", "2"]
    first = main([*argv, "--max-pages", "1"])
    out = json.loads(capsys.readouterr().out)
    assert first == 1 and out["after"]
    assert main([*argv, "--after", out["after"]]) == 0
    rest = json.loads(capsys.readouterr().out)
    assert out["rewritten"] + rest["rewritten"] == 5 and rest["after"] == ""
    entries = _entries(store)
    assert all(sk_tag(entries[r.id][0]) == account_tag(r.account_id) for r in rs)
    assert sk_tag(entries[near.id][0]) == ""
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["rewritten"], again["changed"], again["near"]) == (0, 0, 1)


def test_backfill_tags_cli_rewrites_entries_of_the_previous_builds_tag_and_leaves_this_builds(
    aws: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.unit.test_previous_tag_form import previous_tag

    store = runtime.store()
    now = datetime.now(UTC)
    old = [make(20 + i, due=now + timedelta(days=1 + i)) for i in range(3)]
    current = make(29, due=now + timedelta(days=2))
    for r in old:
        key = f"{previous_tag(r.account_id)}{iso(r.due_at)}#{r.id.removeprefix('rem_')}"
        store.put_new(r, IndexKey(index_pk(bucket_of(r.due_at), r.shard), key))
    store.put_new(
        current,
        IndexKey(
            index_pk(bucket_of(current.due_at), current.shard),
            index_sk(current.due_at, current.id, current.account_id),
        ),
    )
    assert main(["backfill-tags", "--table", aws["TABLE_NAME"]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["rewritten"], out["changed"], out["near"]) == (3, 0, 0)
    entries = _entries(store)
    assert all(sk_tag(entries[r.id][0]) == account_tag(r.account_id) for r in [*old, current])
    assert all(sk_due(entries[r.id][0]) == iso(r.due_at) for r in old)
