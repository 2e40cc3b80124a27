"""After the last step, the platform settles and the explorer judges what the fault run judged at its end.

``settle(explorer)`` disarms the faults that belong to a moment (the receivers' and SES's armed
answers, the stale endpoint reads), resumes the runbook's switches, applies the receipts' stream,
and lets virtual time run — the dispatcher's tick (its watchdog included) and both consumers on
every delivery queue — until every delivery has ended or ``SETTLE_SECONDS`` have passed. What stays
(a host that always answers 503 or 410, a consumer's clock skew, a disabled endpoint) stays: those
end a delivery by a dead letter, which is an end.

Every round, ``late_without_reason`` (``lateness.py``): no open delivery waits past its expected
instant (its due time or the end of the deferral its row records) longer than its bound.

``check_settled(explorer)`` then holds the end state of every delivery:

- ``lost_after_settle``: every reminder the API answered with its id has its row, and every delivery
  of every reminder is ``delivered``, ``dead_letter`` or ``canceled`` (the fault run's "0 lost");
- ``dead_letter_unexplained``: every dead letter's reason is the one its history's last deciding
  line (an ``attempt``, a ``gate`` or a ``suppressed`` line) records and each dead-letter cycle's
  reason is one the product gives — the fault run's "every stop explained";
- ``dead_letter_not_in_dlq``: every dead letter sits in its channel's DLQ with its reason
  (``check_dlq``);
- ``gate_line_as_attempt``: a dead letter the gate decided before any send (a disabled endpoint, the
  maximum age, the deadline) is a ``gate`` history line, never an ``attempt`` line (nothing was
  sent; issue 28 item 2). ``dead_letter_disagrees`` (the checker's kind) when the endpoint's health
  disabled it past the limit but its host's POSTs show no failure that long.
"""

from __future__ import annotations

from typing import Any

from reminders.domain.retry import DeadLetterReason
from reminders.domain.states import DeliveryState

from .checker import Violation, reason_keys
from .faults import settle_reads
from .lateness import TICK_SECONDS, Lateness

#: ``engine.Explorer`` (the engine imports this module, never the reverse).
Explorer = Any

#: How long the platform may take to end every delivery once the faults stop: the maximum age of a
#: delivery (24 h, RetryPolicy.max_age_seconds: an always-failing host's retries, a held endpoint's
#: probes up to its disable limit) past the latest due time the explorer draws (2 h), and a margin.
SETTLE_SECONDS = 30 * 3600.0
#: One settle round: the dispatcher's tick period when idle (its watchdog) and the consumers after it.
SETTLE_STEP_SECONDS = TICK_SECONDS
#: Consumer invocations per queue in one settle round (ten records each).
MAX_BATCHES_PER_ROUND = 40
#: (outcome, detail) of a gate's dead letter written as an ``attempt`` line (services/support.py reads
#: such lines written before the ``gate`` line as gate lines; the product writes none now).
GATE_LINES = frozenset(
    {("transient", "deadline_passed"), ("transient", "expired"), ("permanent", "endpoint_disabled")}
)
#: Dead-letter reasons the product gives (a cycle's reason outside them is unexplained).
DEAD_LETTER_REASONS = frozenset(r.value for r in DeadLetterReason)


def _deliveries(explorer: Explorer) -> list[tuple[Any, str, Any]]:
    sim = explorer.sim
    out: list[tuple[Any, str, Any]] = []
    for rid in list(sim.store.items):
        reminder = sim.store.get(rid)
        if reminder is None:
            continue
        out.extend((reminder, cid, d) for cid, d in reminder.deliveries.items())
    return out


def _open(explorer: Explorer) -> list[tuple[Any, str, Any]]:
    return [(r, cid, d) for r, cid, d in _deliveries(explorer) if not d.state.terminal]


def settle(explorer: Explorer) -> int:
    """Run the platform without faults until every delivery ended (or ``SETTLE_SECONDS``); the rounds."""
    sim = explorer.sim
    sim.receiver_next.clear()
    sim.ses_next.clear()
    settle_reads(sim)
    sim.store.set_controls({"producers_paused": None, "consumers_paused": None})
    explorer._stream({"order": "in_order"})
    start = sim.now_ts()
    rounds = 0
    explorer.lateness = late = Lateness(start, explorer.purged)
    while _open(explorer) and sim.now_ts() - start < SETTLE_SECONDS:
        rounds += 1
        explorer._dispatch({})
        for queue in ("webhook", "email"):
            for turn in range(MAX_BATCHES_PER_ROUND):
                if sim.sqs.depth(queue)["visible"] == 0:
                    break
                explorer._deliver({"queue": queue, "worker": ("w1", "w2")[turn % 2], "n": 10})
        explorer._stream({"order": "in_order"})
        explorer.checker.after_step(("settle", {}))
        late.round(_deliveries(explorer), sim.now_ts())
        sim.clock.advance(SETTLE_STEP_SECONDS)
    explorer.checker.full()
    return rounds


def check_settled(explorer: Explorer) -> None:
    """The end state of every delivery (see the module's docstring)."""
    sim = explorer.sim
    for account, ids in explorer.held.reminders.items():
        for rid in ids:
            if sim.store.get(rid) is None:
                raise Violation(
                    "lost_after_settle", f"{rid} ({account}): the API answered it, the ledger has no row"
                )
    for reminder, cid, d in _deliveries(explorer):
        where = f"{reminder.id}/{cid} ({reminder.account_id}, key {d.key})"
        if not d.state.terminal:
            raise Violation(
                "lost_after_settle",
                f"{where}: {d.state.value} after the platform settled (next attempt {d.next_attempt_at},"
                f" parked until {d.parked_until})",
            )
        _gate_lines(where, d)
        if d.state is DeliveryState.DEAD_LETTER:
            _explained(explorer, where, reminder, d)
    check_dlq(explorer)


def check_dlq(explorer: Explorer) -> None:
    """``dead_letter_not_in_dlq``: every dead letter sits in its channel's DLQ with its reason (the
    operator's redrive needs it), and every DLQ message is a dead letter's, or one since proven
    delivered or cancelled (superseded). Excused: a reminder whose queue messages the operator purged
    (a redriven copy purged is gone by the operator's hand)."""
    sim = explorer.sim
    purged: set[str] = explorer.purged
    in_dlq: dict[str, set[str]] = {}
    for q in ("webhook-dlq", "email-dlq"):
        for m in sim.sqs.queues[q].messages.values():
            in_dlq.setdefault(m.attributes.get("delivery_key", ""), set()).add(m.attributes.get("reason", ""))
    for reminder, cid, d in _deliveries(explorer):
        if d.state is not DeliveryState.DEAD_LETTER or reminder.id in purged:
            continue
        reason = d.dead_letter_reason or ""
        # the message names the key that earned the reason (a ``resend: true`` since gave a new key)
        if not any(reason in in_dlq.get(k, set()) for k in reason_keys(reminder, d)):
            raise Violation(
                "dead_letter_not_in_dlq",
                f"{reminder.id}/{cid} ({reminder.account_id}, key {d.key}): dead letter {reason!r},"
                f" its DLQ holds {sorted(in_dlq.get(d.key, set()))}",
            )


def _gate_lines(where: str, d: Any) -> None:
    """A dead letter the gate decided before any send is a ``gate`` line, never an ``attempt``."""
    for a in d.history:
        if (
            a.event == "attempt"
            and a.status is None
            and a.decision == "dead_letter"
            and (a.outcome, a.detail) in GATE_LINES
        ):
            raise Violation(
                "gate_line_as_attempt",
                f"{where}: {a.detail} recorded as an attempt at {a.at} (nothing was sent: a gate line)",
            )


def _explained(explorer: Explorer, where: str, reminder: Any, d: Any) -> None:
    reason = d.dead_letter_reason or ""
    deciding = [a for a in d.history if a.event in ("attempt", "gate", "suppressed")]
    last = deciding[-1] if deciding else None
    # A suppressed address's line names the suppression (reason@scope), not the dead letter's reason.
    said = "suppressed" if last is not None and last.event == "suppressed" else last.detail if last else ""
    if last is None or last.decision != "dead_letter" or said != reason:
        raise Violation(
            "dead_letter_unexplained",
            f"{where}: dead letter {reason!r}, its history's last deciding line is"
            f" {(last.event, last.decision, last.detail) if last else None}",
        )
    for a in deciding:
        if a.event != "suppressed" and a.decision == "dead_letter" and a.detail not in DEAD_LETTER_REASONS:
            raise Violation("dead_letter_unexplained", f"{where}: a dead-letter cycle's reason {a.detail!r}")
    if reason == "endpoint_disabled":
        _disabled_for_a_reason(explorer, where, reminder, d)


def _disabled_for_a_reason(explorer: Explorer, where: str, reminder: Any, d: Any) -> None:
    """``endpoint_disabled``: its endpoint was disabled by the API, by its receiver's ``disable``
    answer, or held past the disable limit — then every POST to its host in that span failed."""
    from urllib.parse import urlsplit

    from reminders.domain.endpoints import implicit_endpoint_id, is_endpoint_id

    sim = explorer.sim
    eid = (
        d.destination
        if is_endpoint_id(d.destination)
        else implicit_endpoint_id(reminder.account_id, d.destination)
    )
    health = sim.world.health_store.get(eid)
    endpoint = sim.endpoint_store.get(eid)
    if health is None or health.why != "held_past_disable_limit" or health.since is None or endpoint is None:
        return  # disabled by the API (or enabled again since): the answer to that request decided
    limit = sim.world.health_policy.disable_after_seconds
    host = urlsplit(endpoint.url).hostname or ""
    span = [p for p in sim.posts if p.host == host and health.since - limit <= p.at <= health.since]
    first_failure = min((p.at for p in sim.posts if p.host == host and not p.accepted), default=None)
    if (
        any(p.accepted or p.status == 409 for p in span)
        or first_failure is None
        or health.since - first_failure < limit
    ):
        raise Violation(
            "dead_letter_disagrees",
            f"{where}: endpoint_disabled (held past the limit at {health.since:.0f}), but its host"
            f" {host} failed only since {first_failure} or answered within the last {limit:.0f} s",
        )
