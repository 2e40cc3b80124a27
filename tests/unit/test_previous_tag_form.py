"""Issue 28's last cross-tenant residual (helper h28t): the account tag grew from the previous build's
8 base32 characters (40 bits: a collision was brute-forced in seconds) to 16 (80 bits). The due index
then holds entries of three forms: untagged (before the tag), the previous build's 8-character tag,
and this build's. Every reader takes all three; ``reminders backfill-tags`` rewrites the two old ones."""

from __future__ import annotations

import base64
import hashlib

from reminders.domain.ports import IndexKey
from reminders.domain.schedule import account_tag, sk_tag
from reminders.services import support

from tests.unit.fakes import World
from tests.unit.test_review28_hostile import COLLIDING

PREVIOUS_LENGTH = 8  # characters of the previous build's tag


def previous_tag(account_id: str) -> str:
    """The tag the previous build gave an account: base32 of a 40-bit blake2b of its id."""
    digest = hashlib.blake2b(account_id.encode(), digest_size=5).digest()
    return base64.b32encode(digest).decode().lower()


def retag_previous(w: World, rid: str) -> str:
    """Rewrite a row's due-index entry (same partition, same kind) as the previous build wrote it:
    ``<8-char tag><due ISO>#<id hex>``. Returns the new sort key."""
    item = w.store.items[rid]
    sk, watch = str(item["gsk"]), bool(item.get("w", False))
    hex_id = rid.removeprefix("rem_")
    due = sk[: -len(hex_id) - 1][-len("2026-11-29T12:00:00.000000Z") :]
    key = f"{previous_tag(str(item['acct']))}{due}#{hex_id}"
    assert w.store.move_index(rid, IndexKey(str(item["gpk"]), key, watch), from_sk=sk)
    return key


def _ids(out: dict[str, object]) -> set[str]:
    return {a["reminder_id"] for a in out["attempts"]}  # type: ignore[attr-defined]


def test_the_previous_builds_colliding_pair_shares_no_tag() -> None:
    a, b = COLLIDING
    assert previous_tag(a) == previous_tag(b)  # the 40-bit collision found by a birthday search
    assert account_tag(a) != account_tag(b)


def test_backfill_rewrites_an_entry_of_the_previous_builds_tag_to_the_accounts_tag() -> None:
    w = World(shards=1)
    w.run_shards()
    r = w.create("tagged-by-the-previous-build", due_in=7200, account_id="acct-old")
    old = retag_previous(w, r.id)
    from reminders.services.backfill import backfill_tags

    out = backfill_tags(w.store, w.clock.now)
    new = str(w.store.items[r.id]["gsk"])
    assert out.rewritten == 1 and new != old
    assert sk_tag(new) == account_tag(r.account_id) and len(sk_tag(new)) == 16
    preview = support.preview(w.store, w.clock.now(), 130, w.shards, account_id=r.account_id)
    assert r.id in _ids(preview)
