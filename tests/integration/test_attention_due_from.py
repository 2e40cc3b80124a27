"""The attention index's lower bound on due time (``ListQuery.due_from``: the account preview's read of
its recent dead letters, issue 28) on DynamoDB (moto, the real GSI's key condition) and on its
in-memory twin: the same entries, in the same order, over pages, and no other account's."""

from __future__ import annotations

from reminders import runtime
from reminders.adapters.memory import MemoryReminderStore
from reminders.adapters.memory_attention import MemoryAttentionIndex
from reminders.domain.listing import ListQuery

IDS = [f"rem_{i:032x}" for i in range(6)]
ENTRIES = [  # (account, state, due)
    ("acct-a", "dead_letter", "2026-12-01T08:00:00.000000Z"),
    ("acct-a", "dead_letter", "2026-12-01T10:00:00.000000Z"),
    ("acct-a", "dead_letter", "2026-12-01T10:00:00.000001Z"),
    ("acct-a", "retryable", "2026-12-01T09:00:00.000000Z"),
    ("acct-b", "dead_letter", "2026-12-01T11:00:00.000000Z"),
    ("acct-a", "dead_letter", "2026-12-01T12:00:00.000000Z"),
]


def _pages(index: object, q: ListQuery) -> list[str]:
    out: list[str] = []
    cursor = None
    while True:
        page, cursor = index.list(q, cursor)  # type: ignore[attr-defined]
        out += [x.reminder_id for x in page]
        if cursor is None:
            return out


def test_due_from_bounds_the_listing_below_on_dynamodb_and_its_twin_alike(aws: dict[str, str]) -> None:
    client = runtime._client("dynamodb")
    table = runtime.settings().table_name
    twin = MemoryReminderStore()
    for rid, (account, state, due) in zip(IDS, ENTRIES, strict=True):
        item = {"pk": f"R#{rid}", "sk": "R", "nx": account, "nxs": f"{state}#{due}#{rid}"}
        client.put_item(TableName=table, Item={k: {"S": v} for k, v in item.items()})
        twin.items[rid] = dict(item)
    q = ListQuery("acct-a", state="dead_letter", limit=1, due_from="2026-12-01T10:00:00.000000Z")
    dynamo = _pages(runtime.attention_index(), q)
    assert dynamo == [IDS[1], IDS[2], IDS[5]]  # from the bound on (inclusive), acct-a's only
    assert _pages(MemoryAttentionIndex(twin), q) == dynamo
    unbounded = ListQuery("acct-a", state="dead_letter", limit=2)
    assert _pages(runtime.attention_index(), unbounded) == [IDS[0], IDS[1], IDS[2], IDS[5]]
