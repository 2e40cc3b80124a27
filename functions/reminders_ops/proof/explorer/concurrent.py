"""Concurrent records of one batch (issue 26): the delivery handler runs a batch's records on a thread
pool (handlers/delivery.py, ``ConcurrentBatchProcessor``), all through one ``Deliverer`` (one worker
id, one lease nonce, one clock). Two records of one delivery (a duplicate, a redrive twice, a
watchdog's copy beside the original) may then claim it at once; a claim must refuse a ``sending``
row under a live lease (MISSION §3: that message comes back after the lease's remainder).

When a batch holds two records of one (reminder, channel), the first runs in a thread that stops at
its first ``save_delivery`` after a claim it won (between its send and its record: the widest window
in which it holds the key and may have sent it); the second runs to its end meanwhile; then the first
goes on. Strict alternation: one seed, one trace. The judgement (``sent_under_a_live_lease``): while
the first record holds its claim, its lease live by the worker's own clock, no send of that key
reaches a receiver or SES from the second.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from reminders.domain.schedule import iso
from reminders.services.deliver import DeliveryMessage, MessageContext

from .checker import Violation


class _HoldingPort:
    """The batch's store: records the first record's claim; its first ``save_delivery`` after a claim
    it won waits until ``resume`` is set. Other threads pass through."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self.thread: int | None = None  # the first record's thread
        self.paused = threading.Event()
        self.resume = threading.Event()
        self.lease_until: str | None = None  # the first record's live claim (the row's ``lease_until``)

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if not callable(value) or attr not in ("claim", "claim_expired", "save_delivery"):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            mine = threading.get_ident() == self.thread and not self.paused.is_set()
            if mine and attr == "save_delivery" and self.lease_until is not None:
                self.paused.set()
                self.resume.wait()
            result = value(*args, **kwargs)
            if mine and attr in ("claim", "claim_expired") and result.claimed:
                self.lease_until = iso(args[5] if len(args) > 5 else kwargs["lease_until"])
            return result

        return call


def _pair_of(received: list[Any]) -> tuple[str, str] | None:
    """The message ids of the first two records of one (reminder, channel) in the batch, if any."""
    seen: dict[tuple[str, str], str] = {}
    for m in received:
        try:
            body = json.loads(m.body)
            at = (str(body["reminder_id"]), str(body["channel_id"]))
        except (ValueError, KeyError, TypeError):
            continue
        if at in seen:
            return seen[at], m.message_id
        seen[at] = m.message_id
    return None


class Twins:
    """One batch's pair of records of one delivery, run as described above when the first is reached;
    the second's result is kept for its turn in the batch's loop."""

    def __init__(self, explorer: Any, worker: Any, received: list[Any]) -> None:
        self.explorer, self.worker = explorer, worker
        self.by_id = {m.message_id: m for m in received}
        self.pair = _pair_of(received)
        self.done: dict[str, tuple[Any, dict[str, int]]] = {}

    def has(self, m: Any) -> bool:
        return self.pair is not None and (m.message_id == self.pair[0] or m.message_id in self.done)

    def process(self, msg: DeliveryMessage, mctx: MessageContext) -> tuple[Any, dict[str, int]]:
        """The record's result, and the store's lost answers as they stood before the pair ran."""
        if mctx.message_id in self.done:
            return self.done.pop(mctx.message_id)
        assert self.pair is not None
        sim, second = self.explorer.sim, self.by_id[self.pair[1]]
        lost_before = dict(sim.store.lost_answers)
        port = _HoldingPort(sim.store)
        out: dict[str, Any] = {}

        def first() -> None:
            port.thread = threading.get_ident()
            try:
                out["result"] = self.worker.process(msg, mctx)
            except BaseException as exc:  # handed to the explorer's thread
                out["error"] = exc
            finally:
                port.paused.set()  # it may end without a record: the second runs after it

        self.worker.store = port
        try:
            thread = threading.Thread(target=first, daemon=True)
            thread.start()
            port.paused.wait()
            held, sends = port.lease_until if thread.is_alive() else None, _sends(sim)
            msg2 = DeliveryMessage.parse(json.loads(second.body))
            ctx2 = MessageContext(
                second.message_id, second.receipt_handle, second.receive_count, dict(second.attributes)
            )
            self.done[second.message_id] = (self.worker.process(msg2, ctx2), lost_before)
            if held is not None and held > iso(self.worker.clock.now()):
                self._judge(msg, sends)
        finally:
            port.resume.set()
            thread.join()
            self.worker.store = sim.store
        if "error" in out:
            raise out["error"]
        return out["result"], lost_before

    def _judge(self, msg: DeliveryMessage, sends: tuple[int, int]) -> None:
        sim = self.explorer.sim
        reminder = sim.store.get(msg.reminder_id)
        d = reminder.deliveries.get(msg.channel_id) if reminder is not None else None
        if d is None:
            return
        again = [p for p in sim.posts[sends[0] :] if p.key == d.key]
        again += [e for e in sim.emails[sends[1] :] if e.key == d.key]
        if again and self.explorer.pending is None:
            self.explorer.pending = Violation(
                "sent_under_a_live_lease",
                f"{d.key}: sent by a second record of its batch while the first held it under a live lease",
            )


def _sends(sim: Any) -> tuple[int, int]:
    return len(sim.posts), len(sim.emails)
