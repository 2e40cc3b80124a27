"""The reminders table's stream for operational events (issue 16; issue 26: the explorer never ran it).

``TableStream(sim)`` taps the in-memory twins' writes the way DynamoDB's stream
(``NEW_AND_OLD_IMAGES``) sees them: after every write of a reminder item that changed it, a
``MODIFY`` record with its old and new images; after every write of an endpoint health item that
changed what an event is made of (``st``, ``tv``, ``acct``, ``since``, ``why``), an ``INSERT`` or
``MODIFY`` record. These are the records OpEventsFunction's mapping filters let by (a reminder's
``INSERT`` is filtered out; a health write that changes only the window's counters carries no event
and is left out here to keep runs short). The tap observes: every write still goes through the
twin's own conditional logic, a lost answer included (the write landed: its record is there).

``run(order)`` hands the pending records to the product's stream handler
(``reminders.handlers.opevents.handler``, the real ``process_partial_response`` and OpEvents use
case on the world's stores), in batches of the mapping's size: in order, reversed (out of order) or
every record twice (replayed, the stream's at-least-once). A batch item failure keeps that record and
every later one for the next run (the mapping's checkpoint), as Lambda retries from it.

``check_event(sim, account, doc, where)``: ``event_crossed_accounts`` — an operational event of an
account (its event reminder's data, or the body a receiver got) names only that account and its
own objects: the reminder it is about, the endpoint it is about.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

from .violation import Violation

#: OpEventsFunction's batch size (infra/opevents.py BATCH_SIZE).
BATCH_SIZE = 100
#: Reminder store writes that may change an item (``put_new`` is an INSERT: filtered out).
REMINDER_WRITES = ("claim", "claim_expired", "save_delivery", "save_reminder", "move_index", "put_new")
HEALTH_WRITES = ("own", "record", "transition", "take_probe", "probe_failed")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TableStream:
    def __init__(self, sim: Any) -> None:
        from boto3.dynamodb.types import TypeSerializer

        self.sim = sim
        self.records: list[dict[str, Any]] = []  # the stream's records no invocation has taken yet
        self.images: dict[str, dict[str, Any]] = {}  # item key -> its last image (stream form)
        self.seq = 0
        self.applied = 0  # records handed to the handler (replays counted)
        self.retried = 0  # batch item failures
        self._ser = TypeSerializer()
        for name in REMINDER_WRITES:
            self._tap(sim.store, name, self._reminder_key, self._reminder_image, emit=name != "put_new")
        for name in HEALTH_WRITES:
            self._tap(sim.world.health_store, name, self._health_key, self._health_image, emit=True)

    # -- the tap ----------------------------------------------------------------------------------
    def _tap(self, store: Any, name: str, key_of: Any, image_of: Any, *, emit: bool) -> None:
        real = getattr(store, name)

        @functools.wraps(real)
        def write(*args: Any, **kwargs: Any) -> Any:
            key = key_of(args[0] if args else next(iter(kwargs.values())))
            try:
                return real(*args, **kwargs)
            finally:
                self._written(key, image_of(key), emit=emit)

        setattr(store, name, write)  # the instance's: every caller of this store (a wrapper too)

    def _reminder_key(self, arg: Any) -> str:
        return arg if isinstance(arg, str) else str(arg.id)

    def _health_key(self, arg: Any) -> str:
        return "E#" + (arg if isinstance(arg, str) else str(arg.endpoint_id))

    def _reminder_image(self, rid: str) -> dict[str, Any] | None:
        item = self.sim.store.items.get(rid)
        return {k: self._ser.serialize(v) for k, v in item.items()} if item is not None else None

    def _health_image(self, key: str) -> dict[str, Any] | None:
        h = self.sim.world.health_store.items.get(key.removeprefix("E#"))
        if h is None:
            return None
        image: dict[str, Any] = {
            "pk": {"S": key},
            "sk": {"S": "H"},
            "st": {"S": h.state.value},
            "tv": {"N": str(h.tv)},
        }
        if h.account_id:
            image["acct"] = {"S": h.account_id}
        if h.since is not None:
            image["since"] = {"S": _iso(h.since)}
        if h.why:
            image["why"] = {"S": h.why}
        return image

    def _written(self, key: str, new: dict[str, Any] | None, *, emit: bool) -> None:
        old = self.images.get(key)
        if new is None or new == old:
            return
        self.images[key] = new
        if not emit:
            return
        self.seq += 1
        self.records.append(
            {
                "eventID": f"rec-{self.seq}",
                "eventName": "MODIFY" if old is not None else "INSERT",
                "eventSource": "aws:dynamodb",
                "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/explorer/stream/x",
                "dynamodb": {
                    "Keys": {"pk": new["pk"], "sk": new["sk"]},
                    "NewImage": new,
                    **({"OldImage": old} if old is not None else {}),
                    "SequenceNumber": str(self.seq).rjust(21, "0"),
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
            }
        )

    # -- OpEventsFunction ------------------------------------------------------------------------
    def run(self, order: str = "in_order") -> None:
        """The mapping invokes the handler on every pending record (``order``: see the module)."""
        from reminders.handlers import opevents

        from .sim import context

        records, self.records = self.records, []
        if order == "reversed":
            records.reverse()
        elif order == "replayed":
            records = records + records
        while records:
            batch, records = records[:BATCH_SIZE], records[BATCH_SIZE:]
            self.applied += len(batch)
            answer = opevents.handler({"Records": batch}, context())
            failed = {f["itemIdentifier"] for f in (answer or {}).get("batchItemFailures", [])}
            if failed:  # the checkpoint: from the first failed record on, retried by the next run
                self.retried += 1
                first = next(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed)
                self.records = batch[first:] + records + self.records
                return


# -- the check ---------------------------------------------------------------------------------------
def _crossed(detail: str) -> Exception:
    return Violation("event_crossed_accounts", detail)


def event_reminder_of(sim: Any, key: str) -> Any:
    """The event reminder whose delivery has ``key`` (an event's body carries no reminder id)."""
    from reminders.domain.opevents import EVENT_KIND

    for rid, item in list(sim.store.items.items()):
        if item.get("kind") == EVENT_KIND and any(d.get("k") == key for d in item["dl"].values()):
            return sim.store.get(rid)
    return None


def check_event(sim: Any, account: str, doc: Any, where: str) -> None:
    """``event_crossed_accounts``: ``doc`` (an event document) names only ``account`` and its own."""
    from reminders.domain.endpoints import is_endpoint_id

    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        return
    named = data.get("account_id")
    if named != account:
        raise _crossed(f"{where}: {account}'s event names account {named}")
    rid = data.get("reminder_id")
    about = sim.store.get(rid) if isinstance(rid, str) else None
    if about is not None and about.account_id != account:
        raise _crossed(f"{where}: {account}'s event is about {about.account_id}'s {rid}")
    eid = data.get("endpoint_id")
    if isinstance(eid, str) and is_endpoint_id(eid):
        endpoint = sim.endpoint_store.get(eid)  # an implicit endpoint has no item: its id hashes its account
        if endpoint is not None and endpoint.account_id != account:
            raise _crossed(f"{where}: {account}'s event is about {endpoint.account_id}'s {eid}")


def check_events(sim: Any) -> None:
    """Every event reminder in the ledger: its event names only its own account (ledger-wide)."""
    from reminders.domain.opevents import EVENT_KIND

    for rid, item in list(sim.store.items.items()):
        if item.get("kind") == EVENT_KIND:
            reminder = sim.store.get(rid)
            if reminder is not None:
                check_event(sim, reminder.account_id, reminder.data, f"event reminder {rid}")


def event_post(sim: Any, key: str, doc: Any) -> Any:
    """A POST's event reminder (None for any other body), its body judged by ``check_event``."""
    if not isinstance(doc, dict) or "id" in doc or "type" not in doc:
        return None
    reminder = event_reminder_of(sim, key)
    if reminder is not None:
        check_event(sim, reminder.account_id, doc, f"event POST {key}")
    return reminder
