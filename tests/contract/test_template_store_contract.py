"""Template versions (issue 30, ``pk=TPL#<account>#<template>, sk=V#<n>``): the DynamoDB store and
its in-memory twin behave alike: a version is written once, read back whole, listed in order,
retired once; the key carries the account, so another account's template reads as absent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from reminders.adapters.templates_store import DynamoTemplateStore, MemoryTemplateStore
from reminders.domain.templates import TemplateVersion, new_version

from tests.contract.conftest import STORE_BACKENDS, create_table, dynamodb_resource, low_level_client


@pytest.fixture(params=STORE_BACKENDS)
def ts(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryTemplateStore()
        return
    ddb = dynamodb_resource(request, request.param)
    table = create_table(ddb)
    yield DynamoTemplateStore(low_level_client(ddb), table.name)
    table.delete()


def tv(account: str = "acct-a", version: int = 1, subject: str = "Hi {{ name }}") -> TemplateVersion:
    return new_version(
        account,
        "renewal",
        version,
        default_locale="en",
        locales={
            "en": {"subject": subject, "text": "Hello {{ name }} ✓", "html": "<p>{{ name }}</p>"},
            "fr": {"subject": "Salut", "text": "Bonjour {{ name }}", "html": "<p>{{ name }}</p>"},
        },
        variables={"name": "string"},
        created_at="2026-12-02T06:00:00Z",
    )


def test_a_version_is_written_once_and_read_back_whole(ts: Any) -> None:
    assert ts.put_new(tv())
    assert not ts.put_new(tv(subject="Other"))  # immutable: the first write stays
    got = ts.get("acct-a", "renewal", 1)
    assert got is not None and got.encode() == tv().encode()
    assert (got.created_at, got.retired_at, got.locales["en"].subject) == (
        "2026-12-02T06:00:00Z",
        None,
        "Hi {{ name }}",
    )
    assert ts.get("acct-a", "renewal", 2) is None


def test_another_accounts_template_reads_as_absent_when_it_names_the_same_id(ts: Any) -> None:
    assert ts.put_new(tv("acct-a"))
    assert ts.get("acct-b", "renewal", 1) is None
    assert ts.versions("acct-b", "renewal", 10) == []
    assert ts.retire("acct-b", "renewal", 1, "2026-12-02T07:00:00Z") is None
    assert ts.get("acct-a", "renewal", 1).retired_at is None  # B's retire touched nothing of A's


def test_versions_are_listed_in_order_and_a_retire_keeps_its_first_time(ts: Any) -> None:
    for n in (3, 1, 12):
        assert ts.put_new(tv(version=n))
    assert [v for v, _, _ in ts.versions("acct-a", "renewal", 10)] == [1, 3, 12]
    assert [v for v, _, _ in ts.versions("acct-a", "renewal", 2)] == [1, 3]
    assert ts.retire("acct-a", "renewal", 3, "2026-12-02T07:00:00Z") == "2026-12-02T07:00:00Z"
    assert ts.retire("acct-a", "renewal", 3, "2026-12-02T08:00:00Z") == "2026-12-02T07:00:00Z"
    assert ts.versions("acct-a", "renewal", 10)[1] == (3, "2026-12-02T06:00:00Z", "2026-12-02T07:00:00Z")
    retired = ts.get("acct-a", "renewal", 3)
    assert retired.retired_at == "2026-12-02T07:00:00Z" and retired.encode() == tv(version=3).encode()
    assert ts.retire("acct-a", "renewal", 4, "2026-12-02T07:00:00Z") is None
