"""The house spelling of every expression the DynamoDB store sends: the expression grammar's
keywords (SET, REMOVE, ADD, DELETE, AND, OR, NOT, BETWEEN, IN) in capitals, one canonical form a
reader can grep. DynamoDB, moto and dynalite all accept them in any case, so no behaviour pins the
spelling: this checks the requests themselves, as botocore is about to build them. Functions
(``attribute_exists``, ``if_not_exists``, ``size``…) are lower case by the grammar and are not
keywords; an attribute name can never be spelt like a keyword (keywords are reserved words)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from reminders.domain.states import DeliveryState

from tests.contract.test_store_contract import LEASE, T0, ikey, make, put

#: The keywords of DynamoDB's update, condition, key-condition and projection grammar.
KEYWORDS = frozenset({"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN"})
EXPRESSIONS = (
    "UpdateExpression",
    "ConditionExpression",
    "KeyConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
)
_WORD = re.compile(r"[#:]?[A-Za-z_][A-Za-z0-9_]*")


def keywords_of(expression: str) -> list[str]:
    """The words of ``expression`` that are grammar keywords in any case, as spelt (placeholders
    ``#name`` and ``:value`` are not words of the expression)."""
    return [w for w in _WORD.findall(expression) if w[0] not in "#:" and w.upper() in KEYWORDS]


@pytest.mark.parametrize(
    ("expression", "spelt"),
    [
        ("SET a = :a REMOVE b ADD n :one", ["SET", "REMOVE", "ADD"]),
        ("set a = :a", ["set"]),
        ("gpk = :pk And gsk between :lo AND :hi", ["And", "between", "AND"]),
        ("attribute_not_exists(#in) OR :or IN (:a)", ["OR", "IN"]),
        ("rid, acct, gpk, gsk, w", []),
    ],
)
def test_an_expressions_keywords_are_its_grammar_words_as_spelt(expression: str, spelt: list[str]) -> None:
    assert keywords_of(expression) == spelt


@pytest.fixture
def sent(store: Any) -> Iterator[list[tuple[str, str, str]]]:
    """(operation, parameter, expression) of every request the store builds while the test runs."""
    if not hasattr(store, "client"):
        pytest.skip("what a DynamoDB store sends")
    out: list[tuple[str, str, str]] = []

    def note(params: dict[str, Any], model: Any, **_: Any) -> None:
        out.extend((model.name, p, params[p]) for p in EXPRESSIONS if p in params)

    events = store.client.meta.events
    hook = "test-wire-keywords"
    events.register("before-parameter-build.dynamodb", note, unique_id=hook)
    try:
        yield out
    finally:
        events.unregister("before-parameter-build.dynamodb", unique_id=hook)


def test_every_expression_the_store_sends_spells_its_keywords_in_capitals(
    store: Any, sent: list[tuple[str, str, str]]
) -> None:
    r = put(store, make(channels=("webhook-0", "email-0"), version=2))  # PutItem's condition
    store.batch_get([r.id])
    claimed = store.claim(r.id, "webhook-0", 2, "w1", T0, T0 + LEASE)
    assert claimed.claimed
    store.claim(r.id, "email-0", 2, "w1", T0, T0 + LEASE, parked_lease="other")  # the parked branch
    later = T0 + 2 * LEASE
    taken = store.claim_expired(
        r.id, "webhook-0", claimed.reminder.deliveries["webhook-0"], "w2", later, later
    )
    assert taken.claimed
    d = replace(taken.reminder.deliveries["webhook-0"], state=DeliveryState.DELIVERED)
    assert store.save_delivery(r.id, d, d.rev, lease_owner="w2", version=2)  # and the attention keys
    now = store.get(r.id)
    expected = {"version": 2, **{cid: x.rev for cid, x in now.deliveries.items()}}
    assert store.save_reminder(replace(now, version=3), expected, ikey(now))  # SET … REMOVE …
    store.move_index(r.id, ikey(now, watch=True), version=3, from_sk=ikey(now).sk)
    store.query_index(ikey(now).pk, "", "~", 10)
    store.query_index(ikey(now).pk, ikey(now).sk, "~", 10)
    store.scan_index_entries("", 10)
    store.ensure_cursor(1, T0)
    cursor = store.acquire_cursor(1, "d1", T0, T0 + LEASE)
    assert cursor is not None
    store.save_cursor(cursor, release=True)
    store.set_controls({"paused": True, "drain": None})
    store.raise_shard_high_water(4)

    operations = {op for op, _, _ in sent}
    assert {"PutItem", "UpdateItem", "Query", "Scan"} <= operations
    spelt = [(op, p, e, keywords_of(e)) for op, p, e in sent]
    seen = {w.upper() for *_, words in spelt for w in words}
    assert {"SET", "REMOVE", "ADD", "AND", "OR", "BETWEEN", "IN"} <= seen  # every clause was sent
    lower = [f"{op} {p}: {e!r}" for op, p, e, words in spelt if any(w != w.upper() for w in words)]
    assert not lower, "keywords not in capitals:\n" + "\n".join(lower)
