"""The explorer's run: draw actions from one seed, execute each on the world, check the promise after
every step; replay a given action list; the command line (``python -m
reminders_ops.proof.explorer.engine --seed 7 --steps 2000``, ``--replay trace.json``).

A step is one action (see ``actions.py``). The API's operations go through the real API handler (or
the public one for the signed routes); consumers, the dispatcher and the receipts' stream through
their services, with the faults their actions arm.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import random
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from reminders.domain.errors import MalformedMessageError
from reminders.services.deliver import DeliveryMessage, MessageContext

from .actions import BUILDERS, Action, Ctx, Holdings, generate, route_of
from .checker import Checker, Violation, rid_of
from .concurrent import Twins
from .cycles import Cycles
from .emails import correct_email
from .faults import lose_answer, make_stale
from .interleave import PausingPort, interleaved
from .lateness import left_without_message
from .opstream import TableStream
from .pairings import adversary_pairs
from .preview_check import PreviewCheck
from .profiles import generator_of, profile_of, start_of
from .sim import Crash, Sim, context, principal_of

SES_EVENT_SOURCE = "aws.ses"
_UNSUBSCRIBE = re.compile(r"/unsubscribe/([A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+)>")


class CrashingPort:
    """A port whose call ``point`` raises :class:`Crash` before or after it runs, once."""

    def __init__(self, target: Any, point: str, phase: str) -> None:
        self._target, self._point, self._phase = target, point, phase
        self.fired = False

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if attr != self._point or not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            if self._phase == "before" and not self.fired:
                self.fired = True
                raise Crash(f"crash before {attr}")
            result = value(*args, **kwargs)
            if self._phase == "after" and not self.fired:
                self.fired = True
                raise Crash(f"crash after {attr}")
            return result

        return call


@dataclass
class Outcome:
    seed: int
    steps: int
    trace: list[Action] = field(default_factory=list)
    violation: Violation | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.violation is None


class Explorer:
    def __init__(self, seed: int) -> None:
        self.sim = Sim(seed, start=start_of(seed))
        self.held = Holdings(self.sim.accounts)
        self.checker = Checker(self.sim, self.held)
        self.cycles = Cycles(self.sim)  # a redrive's fresh cycle, judged at each dead letter
        self.checker.dead_letter_judges.append(self.cycles.judge)
        self.preview = PreviewCheck(self.sim)  # issue 28: preview's promise against what happens
        self.workers: dict[str, Any] = {}
        self.dispatcher: Any = None
        self.dlq_seen: dict[str, list[tuple[str, dict[str, str]]]] = {"webhook": [], "email": []}
        self.counts: dict[str, int] = {}
        self.emails_seen = 0
        self.purged: set[str] = set()  # reminders whose queue messages the operator purged
        self.pending: Violation | None = None  # a violation judged inside a consumer's batch
        self.lateness: Any = None  # the settle's lateness judge (lateness.Lateness), once it runs
        self.opstream = TableStream(self.sim)  # the reminders table's stream → OpEventsFunction

    # -- one step ------------------------------------------------------------------------------------
    def execute(self, action: Action) -> None:
        name, args = action
        self.counts[name] = self.counts.get(name, 0) + 1
        route = route_of(name)
        if route is not None:
            self._api(route, args)
        else:
            getattr(self, f"_{name}")(args)
        self.checker.after_step(action)
        self.preview.after_step(self.checker.steps)

    def _api(self, route: tuple[str, str], args: dict[str, Any]) -> None:
        ctx = Ctx(self.sim, self.held, args)
        req = BUILDERS[route](ctx)
        before = self.checker.snapshot()
        status, answer = self.sim.call(
            req.method,
            req.path,
            req.body,
            principal=None if req.public else principal_of(ctx.actor),
            query=req.query,
            raw=req.raw,
            headers=req.headers,
            public=req.public,
            route_key=f"{route[0]} {route[1]}" if req.public else None,
        )
        if 200 <= status < 300:
            self.held.learn(ctx.actor, answer)
            if isinstance(answer, dict) and isinstance(answer.get("items"), list):
                for item in answer["items"]:
                    self.held.learn(ctx.actor, item)
        self.checker.api_answer(route, ctx, req, status, answer, before)

    # -- consumers ---------------------------------------------------------------------------------
    def _worker(self, name: str) -> Any:
        if name not in self.workers:
            self.workers[name] = self.sim.deliverer(name)
        return self.workers[name]

    def _deliver(self, args: dict[str, Any]) -> None:
        queue, name, n = args["queue"], args["worker"], int(args.get("n", 10))
        if self.sim.store.controls.get("consumers_paused"):
            return  # the runbook's switch: the event source mappings are disabled
        crash = args.get("crash")
        worker = self._worker(name)
        port: PausingPort | None = None
        if crash and crash.startswith(("after:", "before:")):
            phase, point = crash.split(":", 1)
            if point == "cancel_lost":  # a cancel lands between a send and its record (interleave.py)
                port = PausingPort(self.sim.store)
                worker = self.sim.deliverer(name, store=port)
            elif point == "send":
                senders = {ch: CrashingPort(s, "send", phase) for ch, s in self.sim.senders.items()}
                worker = self.sim.world.deliverer(
                    worker=f"{name}-crashing",
                    senders=senders,
                    rng=random.Random(self.sim.seed),
                    clock=worker.clock,
                    suppressions=self.sim.suppressions,
                    endpoints=self.sim.endpoints_send.for_send,
                    renderer=self.sim.renderer(),
                )
            else:
                worker = self.sim.deliverer(name, store=CrashingPort(self.sim.store, point, phase))
        received = self.sim.sqs.receive(queue, n)
        twins = Twins(self, worker, received) if not crash else None  # one delivery's records at once
        for m in received:
            try:
                msg = DeliveryMessage.parse(json.loads(m.body))
                mctx = MessageContext(m.message_id, m.receipt_handle, m.receive_count, dict(m.attributes))
                lost_before = dict(self.sim.store.lost_answers)
                if port is not None and not port.paused.is_set():
                    result = interleaved(
                        functools.partial(worker.process, msg, mctx), port, self.sim.store, self._cancel_lost
                    )
                elif twins is not None and twins.has(m):
                    result, lost_before = twins.process(msg, mctx)
                else:
                    result = worker.process(msg, mctx)
            except Crash:
                self.workers.pop(name, None)  # a new instance, a new identity, takes over
                return  # nothing of the batch settled: it comes back after its visibility timeout
            except (MalformedMessageError, ValueError):
                continue
            self.preview.processed(msg.reminder_id, msg.channel_id, msg.version, name)
            if crash == "before_ack":
                continue
            if result.ack:
                self.sim.sqs.delete(queue, m.receipt_handle)
                if self.sim.store.lost_answers == lost_before:  # a lost answer may leave it to the watchdog
                    left_without_message(self.sim, msg.reminder_id, msg.channel_id, queue, self.purged)
            else:  # the consumer kept it: a live copy from now on (the checker counts these)
                self.checker.processed[m.message_id] = self.sim.now_ts()
                self.sim.sqs.change_visibility(queue, m.receipt_handle, result.visibility_seconds)
        if crash and crash.startswith(("after:", "before:")):
            self.workers.pop(name, None)
        self._learn_tokens()
        if self.pending is not None:
            pending, self.pending = self.pending, None
            raise pending

    def _correct_email(self, args: dict[str, Any]) -> None:
        correct_email(self, args)

    def _cancel_lost(self, rid: str) -> None:
        """The owner cancels ``rid`` (its write's answer lost: ``interleave.py``)."""
        reminder = self.sim.store.get(rid)
        if reminder is None:
            return
        try:
            self._api(("DELETE", "/reminders/{reminder_id}"), {"as": reminder.account_id, "rid": rid})
        except Violation as v:  # judged inside the consumer's batch: raised once the batch is done
            self.pending = v

    def _learn_tokens(self) -> None:
        """The unsubscribe links of new emails: their reminder's account (its recipients) holds them."""
        while self.emails_seen < len(self.sim.emails):
            e = self.sim.emails[self.emails_seen]
            self.emails_seen += 1
            m = _UNSUBSCRIBE.search(e.raw.decode(errors="replace"))
            reminder = self.sim.store.get(e.reminder_id)
            if m and reminder is not None and reminder.account_id in self.held.tokens:
                self.held.tokens[reminder.account_id].append(m.group(1))

    def _dispatch(self, args: dict[str, Any]) -> None:
        from reminders.handlers.dispatcher import parse_shard_body

        if self.dispatcher is None or self.dispatcher.shards != self.sim.shards:
            self.dispatcher = self.sim.dispatcher()
        self.dispatcher.tick()
        for _ in range(50):
            got = self.sim.sqs.receive("dispatch", 10)
            if not got:
                return
            for m in got:
                report = self.dispatcher.run_shard(parse_shard_body(m.body), lambda: 60.0)
                if report.more:
                    self.sim.queues.send_dispatch([report.shard])
                self.sim.sqs.delete("dispatch", m.receipt_handle)

    # -- time and the platform ------------------------------------------------------------------------
    def _advance(self, args: dict[str, Any]) -> None:
        self.sim.clock.advance(float(args["seconds"]))

    def _stream(self, args: dict[str, Any]) -> None:
        items, self.sim.stream[:] = list(self.sim.stream), []
        if args.get("order") == "reversed":
            items.reverse()
        elif args.get("order") == "replayed":
            items = items + items
        for item in items:
            self.sim.receipt_merger.apply_item(item)
        self.checker.receipts_settled()
        self.opstream.run(args.get("order", "in_order"))

    def _duplicate(self, args: dict[str, Any]) -> None:
        q = self.sim.sqs.queues[args["queue"]]
        if q.messages:
            m = next(iter(q.messages.values()))
            self.sim.sqs.send(args["queue"], m.body, attributes=dict(m.attributes))
            self.checker.extra_copies[rid_of(m.body)] += 1

    def _ses_event(self, args: dict[str, Any]) -> None:
        from reminders.domain.schedule import iso
        from reminders.handlers import ses_events

        if not self.sim.emails:
            return
        e = self.sim.emails[int(args["i"]) % len(self.sim.emails)]
        reminder = self.sim.store.get(e.reminder_id)
        cid = next(
            (c for c, d in (reminder.deliveries.items() if reminder else []) if d.key == e.key), "email-0"
        )
        kind = args["kind"]
        detail: dict[str, Any] = {
            "eventType": kind,
            "mail": {
                "messageId": e.message_id,
                "timestamp": iso(self.sim.clock.now()),
                "tags": {"delivery_key": [e.key], "reminder_id": [e.reminder_id], "channel_id": [cid]},
                "destination": [e.to],  # the send's recipients, as SES names them (emails.py)
            },
        }
        if kind == "Bounce":
            detail["bounce"] = {"bounceType": "Permanent", "bouncedRecipients": [{"emailAddress": e.to}]}
        elif kind == "Complaint":
            detail["complaint"] = {"complainedRecipients": [{"emailAddress": e.to}]}
        elif kind == "Delivery":
            detail["delivery"] = {"recipients": [e.to]}
        event = {
            "version": "0",
            "id": f"ses-{len(self.sim.emails)}",
            "detail-type": f"Email {kind}",
            "source": SES_EVENT_SOURCE,
            "account": "111111111111",
            "time": iso(self.sim.clock.now()),
            "region": "us-east-1",
            "resources": [],
            "detail": detail,
        }
        ses_events.handler(event, context())

    # -- the operator --------------------------------------------------------------------------------------
    def _redrive(self, args: dict[str, Any]) -> None:
        """The console's redrive: ``bounded`` moves at most 3 DLQ messages back; ``stale`` sends back a
        copy kept from an earlier dead letter (an old export); ``duplicate`` moves one twice."""
        queue, mode = args["queue"], args["mode"]
        dlq = f"{queue}-dlq"
        if mode == "stale":
            if self.dlq_seen[queue]:
                body, attrs = self.dlq_seen[queue][0]
                self.sim.sqs.send(queue, body, attributes=attrs)
                self.checker.extra_copies[rid_of(body)] += 1
            return
        got = self.sim.sqs.receive(dlq, 3, visibility_timeout=600)
        for r in got:
            self.cycles.redriven(r.body, dict(r.attributes))
            self.dlq_seen[queue].append((r.body, dict(r.attributes)))
            self.sim.sqs.send(queue, r.body, attributes=dict(r.attributes))
            if mode == "duplicate":
                self.sim.sqs.send(queue, r.body, attributes=dict(r.attributes))
                self.checker.extra_copies[rid_of(r.body)] += 1
            self.sim.sqs.delete(dlq, r.receipt_handle)

    def _purge(self, args: dict[str, Any]) -> None:
        q = self.sim.sqs.queues[args["queue"]]
        self.purged.update(rid_of(m.body) for m in q.messages.values())  # settle.check_dlq excuses them
        q.messages.clear()
        q.ready.clear()
        q.by_receipt.clear()

    def _runbook(self, args: dict[str, Any]) -> None:
        switch = args["switch"]
        if switch == "pause_producers":
            self.sim.store.set_controls({"producers_paused": True})
        elif switch == "resume_producers":
            self.sim.store.set_controls({"producers_paused": None})
        elif switch == "pause_consumers":
            self.sim.store.set_controls({"consumers_paused": True})
        else:
            self.sim.store.set_controls({"consumers_paused": None})

    def _shards(self, args: dict[str, Any]) -> None:
        self.sim.change_shards(int(args["n"]))

    def _backfill(self, args: dict[str, Any]) -> None:
        """The upgrade to the account-tagged due index (issue 28): ``i`` % 3 rows keep the entry an
        older build wrote at their creation (a dispatch entry, or a watch entry of a retry or
        deferral: each keeps its kind; due past the dispatch horizon: no pass reads their minute yet),
        untagged or of the previous build's 8-character tag (which this build's begins with) in turn
        from ``v``, then the operator's ``reminders backfill-tags`` runs to its end in one-page runs of
        ``v`` % 3 + 1 items, each resumed from the last one's position."""
        from reminders.domain.ports import IndexKey
        from reminders.domain.schedule import PREVIOUS_TAG_LENGTH, sk_current, sk_due, sk_tag
        from reminders.services.backfill import backfill_tags, far_enough

        store, now = self.sim.store, self.sim.clock.now
        old = [
            (rid, item)
            for rid, item in sorted(store.items.items())
            if "gpk" in item and sk_current(item["gsk"]) and far_enough(item["gsk"], now())
        ][: args["i"] % 3]
        for k, (rid, item) in enumerate(old):
            due = sk_due(item["gsk"])
            previous = f"{sk_tag(item['gsk'])[:PREVIOUS_TAG_LENGTH]}{due}#{rid.removeprefix('rem_')}"
            sk = previous if (args["v"] + k) % 2 else f"{due}#{rid}"
            store.move_index(rid, IndexKey(item["gpk"], sk, bool(item["w"])), from_sk=item["gsk"])
        after = ""
        while True:
            after = backfill_tags(store, now, after=after, page=args["v"] % 3 + 1, max_pages=1).after
            if not after:
                return

    # -- faults -----------------------------------------------------------------------------------------
    def _lose_answer(self, args: dict[str, Any]) -> None:
        lose_answer(self.sim, args["op"])

    def _receiver_fault(self, args: dict[str, Any]) -> None:
        self.sim.receiver_next.append(args["answer"])

    def _ses_fault(self, args: dict[str, Any]) -> None:
        self.sim.ses_next.append(args["answer"])

    def _skew(self, args: dict[str, Any]) -> None:
        if args["worker"] == "dispatch":
            self.sim.dispatch_skew = float(args["seconds"])
            self.dispatcher = None
        else:
            self.sim.skews[args["worker"]] = float(args["seconds"])
            self.workers.pop(args["worker"], None)

    def _stale(self, args: dict[str, Any]) -> None:
        make_stale(self.sim, int(args["lag"]))


# -- runs ----------------------------------------------------------------------------------------------
def _quiet() -> Any:
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


def finish(explorer: Explorer) -> Violation | None:
    """After the last step: the ledger-wide check, then the platform settles and every delivery's end
    is judged (``settle.py``)."""
    from .settle import check_settled, settle

    try:
        explorer.checker.full()
        explorer.preview.finish()  # preview's promises judged on the run as it stood (issue 28)
        settle(explorer)
        check_settled(explorer)
    except Violation as v:
        return v
    return None


def run_actions(seed: int, actions: Sequence[Action], *, stop_at_violation: bool = True) -> Outcome:
    """Execute ``actions`` on a fresh world of ``seed``; the first violation stops the run."""
    explorer = Explorer(seed)
    outcome = Outcome(seed, 0)
    w = _quiet()
    try:
        with explorer.sim.installed():
            for action in actions:
                outcome.trace.append(action)
                outcome.steps += 1
                try:
                    explorer.execute(action)
                except Violation as v:
                    outcome.violation = v
                    if stop_at_violation:
                        break
            if outcome.violation is None:
                outcome.violation = finish(explorer)
    finally:
        w.__exit__(None, None, None)
    outcome.counts = explorer.counts
    return outcome


def explore(seed: int, steps: int) -> Outcome:
    """Draw and execute ``steps`` actions from ``seed`` (by its profile, ``profiles.py``); stops at
    the first violation."""
    explorer = Explorer(seed)
    generate = adversary_pairs(generator_of(seed))  # the adversary's pairings, often (pairings.py)
    draw = random.Random(seed * 31 + 26)
    outcome = Outcome(seed, 0)
    w = _quiet()
    try:
        with explorer.sim.installed():
            for _ in range(steps):
                action = generate(draw, explorer.sim.accounts, explorer.sim.adversary)
                outcome.trace.append(action)
                outcome.steps += 1
                try:
                    explorer.execute(action)
                except Violation as v:
                    outcome.violation = v
                    break
            if outcome.violation is None:
                outcome.violation = finish(explorer)
    finally:
        w.__exit__(None, None, None)
    outcome.counts = explorer.counts
    return outcome


@contextlib.contextmanager
def driven(seed: int, steps: int) -> Iterator[Explorer]:
    """The plain driver of the tests' settled runs: ``steps`` actions of the plain generator
    (``actions.generate``: no profile, no adversary pairings) drawn from ``seed`` as :func:`explore`
    draws, then :func:`finish`. Raises the first Violation; yields the explorer with its simulator
    still installed, for what the caller reads of the world the run left."""
    explorer = Explorer(seed)
    draw = random.Random(seed * 31 + 26)
    w = _quiet()
    try:
        with explorer.sim.installed():
            for _ in range(steps):
                explorer.execute(generate(draw, explorer.sim.accounts, explorer.sim.adversary))
            violation = finish(explorer)
            if violation is not None:
                raise violation
            yield explorer
    finally:
        w.__exit__(None, None, None)


def replay_command(path: str, seed: int) -> str:
    return f"python -m reminders_ops.proof.explorer.engine --seed {seed} --replay {path}"


def main(argv: Sequence[str] | None = None) -> int:
    from .shrink import shrink

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--steps", "-n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1, help="runs of --steps each, seeds seed..seed+runs-1")
    parser.add_argument("--replay", help="a trace file (JSON action list) to execute instead of drawing")
    parser.add_argument("--trace-out", default="explorer-trace.json")
    parser.add_argument("--shrink-budget", type=int, default=300, help="runs the shrinker may spend")
    args = parser.parse_args(argv)
    if args.replay:
        with open(args.replay) as f:
            actions = [(a[0], a[1]) for a in json.load(f)]
        outcome = run_actions(args.seed, actions)
        print(f"replayed {outcome.steps} steps: {'holds' if outcome.ok else outcome.violation}")
        return 0 if outcome.ok else 1
    for seed in range(args.seed, args.seed + args.runs):
        outcome = explore(seed, args.steps)
        counts = ", ".join(f"{k}={v}" for k, v in sorted(outcome.counts.items()))
        if outcome.ok:
            print(f"explorer seed={seed} ({profile_of(seed)}) steps={outcome.steps}: holds ({counts})")
            continue
        print(f"explorer seed={seed}: VIOLATION at step {outcome.steps}: {outcome.violation}")
        minimal = shrink(run_actions, seed, outcome.trace, budget=args.shrink_budget)
        with open(args.trace_out, "w") as f:
            json.dump([list(a) for a in minimal], f, indent=1)
        print(f"shrunk to {len(minimal)} steps:")
        for i, a in enumerate(minimal):
            print(f"  {i:3d} {a[0]} {json.dumps(a[1], sort_keys=True)}")
        print(f"replay: {replay_command(args.trace_out, seed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
