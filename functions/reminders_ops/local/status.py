"""The live status view: reminders by state per channel, queue depths (DLQs included), retries and
dead letters by reason, the oldest due age, endpoint states (issue 16: held, disabled), the
runtime's wiring and the last events.

The reminder counts come from a table scan: fine for a local tool (the application itself never
scans), and the ledger is the truth. Counters the ledger does not keep (duplicates suppressed,
stale skips, lease expiries, dispatches) come from the handlers' own EMF metrics (the tap).
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from reminders.domain.states import DeliveryState

if TYPE_CHECKING:
    from rich.console import RenderableType

    from .runtime import LocalRuntime

STATES = [s.value for s in DeliveryState]
TAP_COUNTERS = (
    "created",
    "create_duplicate",
    "dispatched",
    "delivered",
    "retry_scheduled",
    "duplicate_suppressed",
    "stale_skipped",
    "lease_expired",
    "lease_busy",
    "early_message",
    "message_renewed",
    "watchdog_requeued",
    "redriven",
    "dead_lettered",
    "configuration_hold",
    "endpoint_transition",
    "endpoint_probe",
    "endpoint_parked",
)


class _CursorCache:
    """The one store method ``Reminders.effective_states`` needs, read once per snapshot."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.cache: dict[int, Any] = {}

    def get_cursor(self, shard: int) -> Any:
        if shard not in self.cache:
            self.cache[shard] = self.store.get_cursor(shard)
        return self.cache[shard]


def ledger_snapshot(table: Any, now: datetime | None = None) -> dict[str, Any]:
    """Deliveries by channel and (effective) state, retries and dead letters from the ledger."""
    from reminders.adapters.codec import reminder_from_item
    from reminders.adapters.dynamodb import DynamoReminderStore
    from reminders.services.intents import Reminders

    now = now or datetime.now(UTC)
    store = DynamoReminderStore(table)
    service = Reminders(
        store=cast(Any, _CursorCache(store)),
        queues=cast(Any, None),
        clock=cast(Any, None),
        telemetry=cast(Any, None),
        shards=1,
    )
    by_state: dict[str, Counter[str]] = {}
    retries: Counter[str] = Counter()
    dead: Counter[str] = Counter()
    oldest_due: float = 0.0
    reminders = 0
    kwargs: dict[str, Any] = {
        "FilterExpression": "begins_with(pk, :r)",
        "ExpressionAttributeValues": {":r": "R#"},
    }
    while True:
        page = table.scan(**kwargs)
        for item in page.get("Items", []):
            if item.get("sk") != "R" or "dl" not in item:
                continue
            reminders += 1
            r = reminder_from_item(item)
            states = service.effective_states(r)
            for cid, d in r.deliveries.items():
                state = states[cid]
                by_state.setdefault(d.type.value, Counter())[state] += 1
                for a in d.history:
                    if a.event == "attempt" and a.decision in ("retry", "hold"):
                        retries[a.outcome or "unknown"] += 1
                if d.state is DeliveryState.DEAD_LETTER:
                    dead[d.dead_letter_reason or "unknown"] += 1
                if not d.state.terminal and r.due_at <= now:
                    oldest_due = max(oldest_due, (now - r.due_at).total_seconds())
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return {
        "reminders": reminders,
        "deliveries": {ch: dict(c) for ch, c in sorted(by_state.items())},
        "retries_by_outcome": dict(retries),
        "dead_letters_by_reason": dict(dead),
        "oldest_due_age_seconds": round(oldest_due, 1),
    }


def endpoint_states(table: Any, limit: int = 8) -> dict[str, Any]:
    """Endpoints by health state (their ``E#…/H`` items) and the first ``limit`` not active."""
    counts: Counter[str] = Counter()
    unhealthy: list[dict[str, str]] = []
    kwargs: dict[str, Any] = {
        "FilterExpression": "begins_with(pk, :e) AND sk = :h",
        "ExpressionAttributeValues": {":e": "E#", ":h": "H"},
    }
    while True:
        page = table.scan(**kwargs)
        for item in page.get("Items", []):
            state = str(item.get("st", "active"))
            counts[state] += 1
            if state != "active" and len(unhealthy) < limit:
                unhealthy.append(
                    {
                        "endpoint_id": str(item["pk"])[2:],
                        "state": state,
                        "why": str(item.get("why", "")),
                        "since": str(item.get("since", "")),
                    }
                )
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return {"by_state": dict(counts), "unhealthy": unhealthy}


def queue_depths(sqs: Any, queues: dict[str, str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for name, url in queues.items():
        a = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        out[name] = {
            "visible": int(a.get("ApproximateNumberOfMessages", 0)),
            "in_flight": int(a.get("ApproximateNumberOfMessagesNotVisible", 0)),
            "delayed": int(a.get("ApproximateNumberOfMessagesDelayed", 0)),
        }
    return out


def collect(rt: LocalRuntime) -> dict[str, Any]:
    """One snapshot of everything the view shows (JSON-serialisable)."""
    snap: dict[str, Any] = {"at": datetime.now(UTC).isoformat(timespec="seconds")}
    try:
        snap["ledger"] = ledger_snapshot(rt.table())
    except Exception as exc:  # shown, not fatal: the view must not take the runtime down
        snap["ledger_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        snap["endpoints"] = endpoint_states(rt.table())
    except Exception as exc:
        snap["endpoints_error"] = f"{type(exc).__name__}: {exc}"[:200]
    try:
        snap["queues"] = queue_depths(rt.sqs, {q.name: q.url for q in rt.spec.queues.values()})
    except Exception as exc:
        snap["queues_error"] = f"{type(exc).__name__}: {exc}"[:200]
    if rt.tap is not None:
        snap["counters"] = {n: sum(rt.tap.counts(n).values()) for n in TAP_COUNTERS}
        snap["counters"] = {k: v for k, v in snap["counters"].items() if v}
        snap["events"] = rt.tap.last_events(8)
    if rt.receiver is not None:
        r = rt.receiver.snapshot()
        snap["receiver"] = {
            "accepted": sum(r["accepted"].values()),
            "posts": sum(r["posts"].values()),
            "keys": len(r["posts"]),
            "duplicates_accepted": r["duplicates_accepted"],
            "rejected_signatures": r["rejected_signatures"],
        }
    try:
        snap["ses_sent"] = rt.emulator.ses_sent_count()
    except Exception:
        snap["ses_sent"] = None
    snap["mappings"] = {
        m.spec.logical_id: {
            "function": m.function.name,
            "handler": m.function.spec.handler.split(".", 2)[-1],
            "queue": m.queue.name,
            "batch_size": m.spec.batch_size,
            "window_s": m.spec.batching_window_seconds,
            "concurrency": m.concurrency,
            "max_concurrency": m.spec.max_concurrency,
            "batches": m.stats.batches,
            "records": m.stats.records,
            "failed": m.stats.failed_records,
            "errors": m.stats.function_errors,
            "in_flight": m.stats.in_flight,
        }
        for m in rt.mappings
    }
    if rt.scheduler is not None:
        now = time.time()
        snap["rules"] = {
            e.rule.logical_id: {
                "schedule": e.schedule.expression,
                "handler": ", ".join(t.spec.handler.split(".", 2)[-1] for t in e.targets),
                "fired": e.stats.fired,
                "errors": e.stats.errors,
                "next_in_s": round(max(0.0, e.next_at.timestamp() - now), 1),
            }
            for e in rt.scheduler.entries
        }
    if rt.bus is not None:
        for r, targets in rt.bus.rules:
            snap.setdefault("rules", {})[r.logical_id] = {
                "schedule": "/".join((r.event_pattern or {}).get("source", [])) + " events",
                "handler": ", ".join(t.spec.handler.split(".", 2)[-1] for t in targets),
                "fired": rt.bus.stats.by_rule.get(r.logical_id, 0),
                "errors": rt.bus.stats.errors,
                "next_in_s": None,
            }
    snap["paused"] = rt.consumers_paused_now()
    return snap


def _short(name: str, prefix: str) -> str:
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def _brief(value: Any) -> str:
    """Ids and keys are 36 characters; 12 tell them apart on screen (the log file has them whole)."""
    text = str(value)
    return text[:12] + "…" if len(text) > 16 and text[:4] in ("rem_", "dlv_") else text


def render(rt: LocalRuntime, snap: dict[str, Any]) -> RenderableType:
    from rich import box
    from rich.columns import Columns
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    prefix = f"{rt.stack_name}-"
    uptime = int(time.monotonic() - rt.started)
    head = Text.assemble(
        ("reminders local", "bold cyan"),
        f"  up {uptime // 60}m{uptime % 60:02d}s   API {rt.api_url}   receiver {rt.receiver_url}"
        f"   emulator {rt.emulator.endpoint}\n",
        ("state ", "bold"),
        rt.state_note,
        ("   CONSUMERS PAUSED" if snap.get("paused") else "", "bold red"),
        (
            f"   NOT RUN LOCALLY: {len(rt.spec.unwired)} (see the banner)" if rt.spec.unwired else "",
            "bold red",
        ),
    )

    def table(title: str, *cols: str) -> Table:
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), title_style="bold")
        for i, c in enumerate(cols):
            t.add_column(c, justify="left" if i == 0 else "right", no_wrap=True)
        return t

    ledger = snap.get("ledger") or {}
    per_channel = ledger.get("deliveries") or {}
    channels = sorted(per_channel) or ["webhook", "email"]
    states = table("deliveries", "state", *channels)
    for st in STATES:
        states.add_row(st, *[str(per_channel.get(ch, {}).get(st, 0) or "·") for ch in channels])
    if snap.get("ledger_error"):
        states.caption = snap["ledger_error"][:60]

    queues = table("queues", "queue", "visible", "in flight", "delayed")
    for name, d in (snap.get("queues") or {}).items():
        dlq = "DLQ" in name.upper()
        style = "red" if dlq and d["visible"] + d["in_flight"] else ("dim" if dlq else "")
        queues.add_row(
            _short(name, prefix), str(d["visible"]), str(d["in_flight"]), str(d["delayed"]), style=style
        )

    counters = table("retries · dead letters · counters", "what", "n")
    counters.add_row("oldest due, not done", f"{ledger.get('oldest_due_age_seconds', 0):.0f}s")
    for k, v in sorted((ledger.get("retries_by_outcome") or {}).items()):
        counters.add_row(f"retried after {k}", str(v), style="yellow")
    for k, v in sorted((ledger.get("dead_letters_by_reason") or {}).items()):
        counters.add_row(f"dead letter: {k}", str(v), style="red")
    for k, v in (snap.get("counters") or {}).items():
        counters.add_row(k, str(v), style="dim")
    rcv = snap.get("receiver") or {}
    counters.add_row("receiver accepted/POSTs", f"{rcv.get('accepted', 0)}/{rcv.get('posts', 0)}")
    counters.add_row("receiver dup. accepted", str(rcv.get("duplicates_accepted", 0)))
    counters.add_row("SES emails (emulator)", str(snap.get("ses_sent")))

    wiring = table(
        "event sources · schedules", "source → handler", "batch/window/conc", "batches", "records", "failed"
    )
    for m in (snap.get("mappings") or {}).values():
        wiring.add_row(
            f"{_short(m['queue'], prefix)} → {m['handler']}",
            f"{m['batch_size']}/{m['window_s']:g}s/{m['concurrency']} (max {m['max_concurrency'] or '-'})",
            str(m["batches"]),
            str(m["records"]),
            str(m["failed"] + m["errors"]),
        )
    for r in (snap.get("rules") or {}).values():
        wiring.add_row(
            f"{r['schedule']} → {r['handler']}",
            f"next in {r['next_in_s']:.0f}s" if r["next_in_s"] is not None else "on event",
            str(r["fired"]),
            "",
            str(r["errors"]),
        )

    events = table("last events", "at", "action", "detail")
    events.columns[1].justify = "left"
    events.columns[2].justify = "left"
    events.columns[2].no_wrap = False
    shown = (snap.get("events") or [])[-8:]
    for e in shown:
        detail = " ".join(f"{k}={_brief(e[k])}" for k in e if k not in ("at", "action", "level"))
        events.add_row(str(e.get("at", ""))[11:19], e["action"], detail[:100])

    endpoints = table("endpoints (health)", "endpoint", "state", "why", "since")
    health = snap.get("endpoints") or {}
    by_state = health.get("by_state") or {}
    endpoints.add_row(
        "all with a health item",
        " ".join(f"{k}={v}" for k, v in sorted(by_state.items())) or "·",
        "",
        "",
    )
    for e in health.get("unhealthy") or []:
        endpoints.add_row(
            e["endpoint_id"][:15] + "…",
            e["state"],
            e["why"],
            e["since"][11:19],
            style="red" if e["state"] == "disabled" else "yellow",
        )

    top = Columns([states, queues, counters], padding=(0, 2))
    return Panel(Group(head, top, endpoints, wiring, events), border_style="cyan")
