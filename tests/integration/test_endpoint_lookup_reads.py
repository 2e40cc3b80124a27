"""Issue 14, cost: the webhook sender's endpoint lookup is an eventually consistent read (half a read
unit) — its answer is trusted for ``LOOKUP_CACHE_SECONDS`` anyway — while the API's read-modify-write
paths keep strongly consistent reads (on moto, the real DynamoDB API)."""

from __future__ import annotations

from typing import Any

from reminders import runtime
from reminders.services.endpoints import NewEndpoint


def _consistency_of_get_items(client: Any) -> list[bool]:
    seen: list[bool] = []

    def before(params: dict[str, Any], **_: Any) -> None:
        seen.append(bool(params.get("ConsistentRead", False)))

    client.meta.events.register("provide-client-params.dynamodb.GetItem", before)
    return seen


def test_the_senders_lookup_reads_eventually_consistent_and_the_api_strongly(
    aws: dict[str, str], receiver: Any
) -> None:
    store = runtime.endpoint_store()
    seen = _consistency_of_get_items(store.client)
    service = runtime.endpoints_service()
    endpoint, _ = service.create(NewEndpoint(account_id="acct-1", url=receiver.url + "/a", bare_urls=True))
    seen.clear()
    found = service.for_send("acct-1", receiver.url + "/a/path")
    assert found is not None and found.id == endpoint.id
    assert seen == [False]  # the sender's lookup: eventually consistent
    assert service.for_send("acct-1", receiver.url + "/b") is not None
    assert seen == [False]  # then served from the instance's cache
    seen.clear()
    service.get(endpoint.id)
    assert seen and all(seen)  # the API's read: strongly consistent


def test_just_created_endpoint_read_stale_as_absent_on_moto_is_found_by_one_consistent_read(
    aws: dict[str, str], receiver: Any
) -> None:
    """Issue 25 item 8 on moto: the store's client serves eventually consistent reads as the item was
    up to 3 writes ago (moto itself is always consistent). "Not found" there is terminal for a
    delivery naming the endpoint, so it is read again consistently: one more read, on that path only."""
    from reminders.adapters.stale_reads import StaleReadsClient

    store = runtime.endpoint_store()
    store.client = StaleReadsClient(
        store.client, store.table, lambda item: {"pk": item["pk"], "sk": item["sk"]}, lag=3
    )
    service = runtime.endpoints_service()
    endpoint, _ = service.create(NewEndpoint(account_id="acct-1", url=receiver.url + "/a"))
    assert store.get(endpoint.id, consistent=False) is None  # what AWS may answer just after the create
    seen = _consistency_of_get_items(store.client)
    found = service.for_send("acct-1", endpoint.id)
    assert found is not None and found.id == endpoint.id
    assert seen == [False, True]  # the cheap read said "none"; the consistent one found it
    assert service.for_send("acct-1", endpoint.id) is not None and seen == [False, True]  # cached
