"""Preview's promise against what then happens, inside the explorer (issue 28 item 1).

Every ``EVERY`` steps one account (in turn) asks its preview (services/support.py, the consumer's
rules) for the next ``HORIZON_MINUTES``; each promise is judged once virtual time has passed its
horizon (and at the end of the run, up to the time reached). The explorer runs its consumers only
when it draws them, so "in its minute" reads here as *never before it*: for every delivery of the
account that existed at the preview and is not in flight, the first thing its history records after
the preview, when it is an attempt inside the horizon, must be

- promised (``attempts`` or ``may_attempt``): nothing unpromised is attempted within the horizon
  (``preview_unpromised_attempt``), and
- no earlier than the minute it was promised for (``preview_attempt_before_its_minute``);

and the other way round, every promise is kept (``preview_promise_not_kept``): a promised delivery
whose message a consumer of the reminder's version processed after its promised minute, within the
horizon, has a line in its history since the preview (an attempt, or the reason it moved). A
promise no consumer had the chance to keep (none drawn, the queue purged, paused) is not judged; a
promise of a delivery cancelled, delivered or dead-lettered at the preview is broken at once (no
message comes to give a consumer the chance).

Anything else recorded first (a cancel, a deferral, a hold, a gate's deadline, a watchdog's requeue,
a lease taken over, a correction, a resend, a redrive) is the recorded reason the promise moved; a
new version of the reminder, a history with lines dropped, or a change of the account's endpoint
health since the preview likewise end the promise. A worker's clock skew widens both bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from reminders.adapters.codec import reminder_from_item
from reminders.domain.schedule import iso
from reminders.domain.states import DeliveryState
from reminders.services import support
from reminders.services.deliver import destination_bucket
from reminders.services.dispatch import WATCH_LAG_SECONDS

from .checker import Violation

EVERY = 50  # steps between two previews
HORIZON_MINUTES = 15
SKEW_MARGIN_SECONDS = 1.0  # the consumer clock's correction is a bound, not exact


@dataclass
class Promise:
    account: str
    step: int
    taken_at: datetime
    until: datetime
    promised: dict[tuple[str, str], str]  # (reminder id, channel) -> the minute of its first attempt
    may: set[tuple[str, str]]
    #: (reminder id, channel) -> (version, history length, lines dropped, state) at the preview
    seen: dict[tuple[str, str], tuple[int, int, int, str, str]]
    health: dict[tuple[str, str], str]  # a webhook delivery's endpoint health state at the preview
    skew: float = 0.0
    #: reminders an eventually consistent read of the preview may have seen as they were before a
    #: recent write (the store's stale mode, faults.py): not judged, either way
    lagging: frozenset[str] = frozenset()
    judged: int = 0
    kept: int = 0  # promises judged the other way: a consumer processed their message


@dataclass
class PreviewCheck:
    sim: Any
    open: list[Promise] = field(default_factory=list)
    taken: int = 0
    judged: int = 0  # deliveries judged (a run that judges none proves nothing: the test reads it)
    kept: int = 0  # promises judged kept (the same: a run that judges none proves nothing)
    #: (reminder id, channel, version) -> (virtual time, the consumer's clock skew) of each message a
    #: consumer processed to its end
    processed_at: dict[tuple[str, str, int], list[tuple[datetime, float]]] = field(default_factory=dict)

    def processed(self, reminder_id: str, channel_id: str, version: int, worker: str) -> None:
        """A consumer processed a message to its end (no crash): the engine's ``_deliver`` says so."""
        key = (reminder_id, channel_id, version)
        skew = abs(self.sim.skews.get(worker, 0.0))
        self.processed_at.setdefault(key, []).append((self.sim.clock.now(), skew))

    def after_step(self, step: int) -> None:
        skew = self._skew()
        for p in self.open:
            p.skew = max(p.skew, skew)
        now = self.sim.clock.now()
        due = [p for p in self.open if now >= p.until]
        for p in due:
            self.open.remove(p)
            self._judge(p, p.until)
        if step % EVERY == 0:
            accounts = self.sim.accounts
            self.open.append(self._take(accounts[(step // EVERY) % len(accounts)], step))

    def finish(self) -> None:
        """Judge what is still open, up to the virtual time reached."""
        now = self.sim.clock.now()
        for p in self.open:
            self._judge(p, now)
        self.open = []

    # -- the promise -------------------------------------------------------------------------------
    def _take(self, account: str, step: int) -> Promise:
        s = self.sim
        now = s.clock.now()
        out = support.preview(
            s.store,
            now,
            HORIZON_MINUTES,
            s.shards,
            account_id=account,
            max_age_seconds=s.world.policy.max_age_seconds,
            health=s.world.health_guard(),
            watch_lag_seconds=WATCH_LAG_SECONDS,
        )
        self.taken += 1
        promised: dict[tuple[str, str], str] = {}
        for a in out["attempts"]:
            promised.setdefault((a["reminder_id"], a["channel_id"]), a["at"])
        may = {(a["reminder_id"], a["channel_id"]) for a in out["may_attempt"]}
        return Promise(
            account,
            step,
            now,
            now + timedelta(minutes=HORIZON_MINUTES),
            promised,
            may,
            self._seen(account),
            self._health(account),
            self._skew(),
            frozenset(s.store.stale.lagging()),
        )

    def _rows(self, account: str) -> list[Any]:
        return [
            reminder_from_item(item)
            for item in list(self.sim.store.items.values())
            if item.get("acct") == account
        ]

    def _seen(self, account: str) -> dict[tuple[str, str], tuple[int, int, int, str, str]]:
        """Per delivery: version, history length, dropped lines, state, and the last line's time (a
        repeated throttle folds into the last line: same length, a later time)."""
        return {
            (r.id, cid): (
                r.version,
                len(d.history),
                sum(d.dropped.values()),
                d.state.value,
                d.history[-1].at if d.history else "",
            )
            for r in self._rows(account)
            for cid, d in r.deliveries.items()
        }

    def _health(self, account: str) -> dict[tuple[str, str], str]:
        """Each webhook delivery's endpoint health state, as the consumer's guard reads it."""
        guard, now = self.sim.world.health_guard(), self.sim.clock.now().timestamp()
        out: dict[tuple[str, str], str] = {}
        for r in self._rows(account):
            for cid, d in r.deliveries.items():
                if d.type.value == "webhook":
                    h = guard.view(destination_bucket(d, r.account_id), r.account_id, now)
                    out[(r.id, cid)] = h.state.value if h is not None else ""
        return out

    def _skew(self) -> float:
        return max([abs(v) for v in self.sim.skews.values()] + [abs(self.sim.dispatch_skew)])

    # -- the judgement -------------------------------------------------------------------------------
    def _judge(self, p: Promise, until: datetime) -> None:
        tol = timedelta(seconds=p.skew + SKEW_MARGIN_SECONDS)
        health = self._health(p.account)
        for r in self._rows(p.account):
            for cid, d in r.deliveries.items():
                before = p.seen.get((r.id, cid))
                if before is None or r.id in p.lagging:
                    continue  # created after the preview (or seen stale by it): not promised either way
                version, length, dropped, state, last_at = before
                if (r.id, cid) in p.promised and DeliveryState(state).terminal:
                    # Cancelled, delivered or dead-lettered at the preview: no consumer will attempt
                    # it and no message may come to show it (review rev28).
                    raise Violation(
                        "preview_promise_not_kept",
                        f"{p.account}'s preview at step {p.step} ({iso(p.taken_at)}, {HORIZON_MINUTES}"
                        f" min): {r.id}/{cid} was promised for {p.promised[(r.id, cid)]} while {state}",
                    )
                if state == "sending" or r.version != version or sum(d.dropped.values()) != dropped:
                    continue  # in flight (the preview says so), or changed since: a new promise
                new = d.history[length:]
                if not new and length and d.history[length - 1].at != last_at:
                    new = d.history[length - 1 :]  # a throttle folded into the last line since
                # Promised => attempted: a line within the horizon (an attempt or the reason it
                # moved), or a claim since (its attempt begun: a claim writes no line).
                if (r.id, cid) in p.promised and (r.id, cid) not in p.may:
                    if (new and new[0].at < iso(until - tol)) or d.state.value != state:
                        p.kept += 1
                        self.kept += 1
                    else:
                        self._kept(p, r.id, cid, version, until, tol)
                if not new:
                    continue
                if new[0].event != "attempt":
                    continue  # a recorded reason came first
                at = new[0].at
                if at >= iso(until - tol):
                    continue  # past the horizon
                where = (
                    f"{p.account}'s preview at step {p.step} ({iso(p.taken_at)}, {HORIZON_MINUTES} min): "
                    f"{r.id}/{cid}"
                )
                p.judged += 1
                self.judged += 1
                key = (r.id, cid)
                if key in p.may:
                    continue
                if key not in p.promised:
                    if health.get(key) != p.health.get(key):
                        continue  # its endpoint's health moved since: the hold or disable it read
                    raise Violation(
                        "preview_unpromised_attempt",
                        f"{where} was not promised (state {state}) and was attempted at {at}",
                    )
                minute = p.promised[key][:16]
                if at < iso(datetime.fromisoformat(minute + ":00+00:00") - tol):
                    raise Violation(
                        "preview_attempt_before_its_minute",
                        f"{where} was promised for {p.promised[key]} and attempted at {at}",
                    )

    def _kept(self, p: Promise, rid: str, cid: str, version: int, until: datetime, tol: timedelta) -> None:
        """Nothing recorded within the horizon since the preview: a promise is broken only if a
        consumer processed the delivery's message after the promised minute (the chance to keep it)
        and wrote nothing; with no such chance (no consumer drawn, the queue purged) not judged."""
        at = p.promised[(rid, cid)]
        # After the promised minute by more than the consumer's own skew (its clock decides "due").
        end = datetime.fromisoformat(at[:16] + ":00+00:00") + timedelta(
            minutes=1, seconds=SKEW_MARGIN_SECONDS
        )
        chances = [
            t
            for t, skew in self.processed_at.get((rid, cid, version), [])
            if end + timedelta(seconds=skew) <= t < until - tol
        ]
        if not chances:
            return  # no consumer had it after its minute: not judged
        p.kept += 1
        self.kept += 1
        if self._health(p.account).get((rid, cid)) != p.health.get((rid, cid)):
            return  # its endpoint's health moved since the preview
        raise Violation(
            "preview_promise_not_kept",
            f"{p.account}'s preview at step {p.step} ({iso(p.taken_at)}, {HORIZON_MINUTES} min): "
            f"{rid}/{cid} was promised for {at}; a consumer processed its message at "
            f"{iso(chances[0])} and nothing is recorded since the preview",
        )
