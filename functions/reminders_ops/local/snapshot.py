"""``--state-dir``: the emulator's state kept across restarts as a snapshot written on a clean stop.

moto's own persistence (its request recorder, replayed at start) was tried and does not restore
SQS faithfully: replayed ``DeleteMessage`` calls carry receipt handles of the old session, so
deleted messages come back, and every poll of the event source mappings is recorded and replayed.
So the runtime snapshots what matters itself, after every consumer has stopped:

- every item of every table of the stack (the ledger, the due index, cursors, controls);
- every message of every queue (body, attributes, how long it was still invisible or delayed —
  restored with that delay, capped at SQS's 900 s; receive counts restart at 0);
- the local webhook receiver's per-key counts (what it accepted, so its dedup answers 409 as before).

Emails captured by the emulator's SES are not kept. A crash (no clean stop) loses what happened
since the last snapshot; the ledger's watchdog re-enqueues anything left without a message.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from typing import TextIO

    from .emulator import Emulator
    from .spec import LocalSpec


class LocalRuntime(Protocol):
    """What a snapshot reads of the running local runtime (runtime.py's ``LocalRuntime``, which
    calls ``save``/``restore``: naming it here would be an import circle)."""

    @property
    def emulator(self) -> Emulator: ...
    @property
    def out(self) -> TextIO: ...
    @property
    def spec(self) -> LocalSpec: ...
    @property
    def receiver(self) -> Any: ...


SNAPSHOT_FILE = "snapshot.json"
FORMAT_VERSION = 1
SQS_MAX_DELAY_SECONDS = 900


def _encode(value: Any) -> Any:
    """DynamoDB's typed JSON with bytes made JSON-safe."""
    if isinstance(value, bytes | bytearray):
        return {"__b64__": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__b64__"}:
            return base64.b64decode(value["__b64__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _sqs_backend(rt: LocalRuntime) -> Any:
    from moto.backends import get_backend

    return get_backend("sqs")[rt.emulator.account_id][rt.emulator.region]


def save(rt: LocalRuntime, state_dir: Path) -> str:
    state_dir.mkdir(parents=True, exist_ok=True)
    ddb = rt.emulator.client("dynamodb")
    tables: dict[str, list[Any]] = {}
    for name in rt.spec.table_names:
        items: list[Any] = []
        kwargs: dict[str, Any] = {"TableName": name}
        while True:
            page = ddb.scan(**kwargs)
            items.extend(_encode(i) for i in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        tables[name] = items
    now_ms = time.time() * 1000
    queues: dict[str, list[dict[str, Any]]] = {}
    backend = _sqs_backend(rt)
    for q in rt.spec.queues.values():
        queue = backend.queues.get(q.name)
        if queue is None:
            continue
        queues[q.name] = [
            {
                "body": m.body,
                "attributes": m.message_attributes,
                "hidden_seconds": max(0.0, (max(m.visible_at, m.delayed_until) - now_ms) / 1000),
            }
            for m in list(queue._messages)
        ]
    receiver: dict[str, Any] = {}
    if rt.receiver is not None:
        receiver = {"accepted": dict(rt.receiver.state.accepted), "posts": dict(rt.receiver.state.posts)}
    doc = {
        "format": FORMAT_VERSION,
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tables": tables,
        "queues": queues,
        "receiver": receiver,
    }
    tmp = state_dir / (SNAPSHOT_FILE + ".tmp")
    tmp.write_text(json.dumps(doc))
    tmp.replace(state_dir / SNAPSHOT_FILE)
    n_items = sum(len(v) for v in tables.values())
    n_messages = sum(len(v) for v in queues.values())
    summary = f"saved {n_items} items and {n_messages} messages to {state_dir / SNAPSHOT_FILE}"
    rt.out.write(f"reminders local: {summary}\n")
    return summary


def restore(rt: LocalRuntime, state_dir: Path) -> str:
    """Load the last snapshot (if any) into the freshly provisioned emulator; describe the state."""
    path = state_dir / SNAPSHOT_FILE
    where = f"snapshot in {path}: restored at start, saved on a clean stop (Ctrl-C)"
    if not path.exists():
        return f"{where} — none yet, starting empty"
    doc = json.loads(path.read_text())
    if doc.get("format") != FORMAT_VERSION:
        return f"{where} — unknown format {doc.get('format')!r}, starting empty"
    ddb = rt.emulator.client("dynamodb")
    n_items = 0
    for name, items in doc.get("tables", {}).items():
        if name not in rt.spec.table_names:
            continue
        for item in items:
            ddb.put_item(TableName=name, Item=_decode(item))
            n_items += 1
    sqs = rt.emulator.client("sqs")
    urls = {q.name: q.url for q in rt.spec.queues.values()}
    n_messages = 0
    for name, messages in doc.get("queues", {}).items():
        if name not in urls:
            continue
        for m in messages:
            send: dict[str, Any] = {
                "QueueUrl": urls[name],
                "MessageBody": m["body"],
                "DelaySeconds": min(SQS_MAX_DELAY_SECONDS, math.ceil(m["hidden_seconds"])),
            }
            if m.get("attributes"):
                send["MessageAttributes"] = m["attributes"]
            sqs.send_message(**send)
            n_messages += 1
    if rt.receiver is not None and doc.get("receiver"):
        rt.receiver.state.accepted = Counter(doc["receiver"].get("accepted", {}))
        rt.receiver.state.posts = Counter(doc["receiver"].get("posts", {}))
    return f"{where} — restored {n_items} items and {n_messages} messages saved {doc.get('saved_at')}"
