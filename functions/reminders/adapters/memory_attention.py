"""The attention index over the in-memory store's items (the twin of adapters/attention.py): a GSI, so
its queries read the items as an eventually consistent read sees them (the store's ``stale`` mode)."""

from __future__ import annotations

from ..domain.listing import Listed, ListQuery, decode_cursor, encode_cursor, in_range, parse_sk, sk_of
from .codec import ATTENTION_PK, ATTENTION_SK
from .memory import MemoryReminderStore


class MemoryAttentionIndex:
    def __init__(self, store: MemoryReminderStore) -> None:
        self.store = store

    def list(self, q: ListQuery, cursor: str | None) -> tuple[list[Listed], str | None]:
        after = decode_cursor(q, cursor) if cursor else ""
        with self.store.lock:
            keys = sorted(
                str(i[ATTENTION_SK])
                for i in self.store.eventual_items().values()
                if i.get(ATTENTION_PK) == q.account_id and ATTENTION_SK in i
            )
        found = [parse_sk(k) for k in keys if k > after and in_range(q, k)]
        page = found[: q.limit]
        return page, (encode_cursor(q, sk_of(page[-1])) if len(found) > q.limit else None)
