"""Swarm profiles: what a seed concentrates on. Most seeds draw from every action at the catalogue's
weights (``actions.generate``); some draw a *focused* run, so that rare collisions become common:
one honest account acting on its newest reminder, webhooks to receivers that do not deduplicate,
and the faults that leave an attempt's outcome ambiguous (an answer lost after the receiver took the
body, a crash after the send, a 429 after a take-over) interleaved with corrections, redrives and
lost store answers. Nothing the checker judges changes; only what is drawn. (Receipts stay out of
it: the full catalogue sends them, and a receipt after a 5xx is a question of its own, see
docs/incoming/h26r.md.)

The ``dst`` profile is the full catalogue (the same draws as ``all``) on a clock that starts three
hours before a DST change (``start_of``), where half the creates are local-time reminders in that
change's zone, with send windows around the hour the clocks jump (drawn from their own stream, so
the rest of the run draws as ``all`` would).

Which profile a seed runs is a pure function of the seed (``profile_of``): ``seed % 4 == 1`` runs
``dst``, ``seed % 4 == 2`` runs ``collide``, ``seed % 4 == 3`` runs ``evidence`` (episodes on one
reminder that test the evidence of a possible acceptance: ``evidence.py``), every other seed the full
catalogue, and so do seeds 7 and 8, which ``make test`` runs. A trace is a plain action list either
way: it shrinks and replays as any other (a create's local time is in its arguments).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from .actions import Action, generate
from .evidence import evidence
from .sim import T0

Generator = Callable[[random.Random, tuple[str, ...], str], Action]
#: the seeds ``make test`` runs: the full catalogue whatever their remainder
FULL_CATALOGUE_SEEDS = frozenset({7, 8})

#: The collide profile's actions and weights: the API's reminder operations, the consumers, time,
#: and the faults that make an attempt's outcome ambiguous.
COLLIDE: dict[str, int] = {
    "POST /reminders": 2,
    "PATCH /reminders/{reminder_id}": 8,
    "DELETE /reminders/{reminder_id}": 1,
    "GET /reminders/{reminder_id}": 2,
    "POST /endpoints/{endpoint_id}/disable": 1,
    "POST /endpoints/{endpoint_id}/enable": 1,
    "deliver": 14,
    "dispatch": 3,
    "advance": 8,
    "receiver_fault": 5,
    "lose_answer": 3,
    "duplicate": 1,
    "redrive": 3,
    "stream": 1,
    "skew": 1,
}
_NAMES, _WEIGHTS = list(COLLIDE), list(COLLIDE.values())
#: a consumer's batch faults: crashes, and a cancel whose write lands between a send and its record,
#: its answer lost (``interleave.py``)
CRASHES = ("after:send", "after:send", "after:send", "after:claim", "before_ack", "before:cancel_lost")
#: ``_channels``' variant numbers that give one webhook to the actor's non-deduplicating receiver
PLAIN_RECEIVER_VARIANTS = (1, 9)


def collide(rng: random.Random, accounts: tuple[str, ...], adversary: str) -> Action:
    """One action of the collide profile: the first honest account, mostly on its newest reminder
    (index -1), creating webhooks due now to a receiver that does not deduplicate."""
    name, args = generate(rng, accounts, adversary, names=_NAMES, weights=_WEIGHTS)
    if "as" in args:
        args["as"] = next(a for a in accounts if a != adversary)
        args.pop("target", None)
        if rng.random() < 0.75:  # the newest reminders (``pick`` reads indices modulo the list)
            args["i"] = rng.choice((-1, -1, -1, -2))
    if name == "POST /reminders":
        if rng.random() < 0.7:
            args["v"] = rng.choice(PLAIN_RECEIVER_VARIANTS)
        args["due"] = rng.choice((-30, 0, 30))
    elif name == "deliver":
        args["queue"] = "webhook"
        if rng.random() < 0.3:
            args["crash"] = rng.choice(CRASHES)
    elif name == "receiver_fault":
        args["answer"] = rng.choice(("timeout_after", "timeout_after", "429", "429", "400", "500"))
    elif name == "lose_answer":
        args["op"] = rng.choice(("reminders:save_reminder", "reminders:save_delivery", "reminders:put_new"))
    elif name == "advance":
        args["seconds"] = rng.choice((30, 61, 180, 600))
    return name, args


def everything(rng: random.Random, accounts: tuple[str, ...], adversary: str) -> Action:
    return generate(rng, accounts, adversary)


#: DST changes the dst profile starts near: (zone, the change's instant, send windows around it).
#: Berlin's spring gap swallows 02:00-03:00 whole; Lord Howe's half-hour gap 02:00-02:30.
DST_CHANGES: tuple[tuple[str, datetime, tuple[tuple[str, str], ...]], ...] = (
    (
        "Europe/Berlin",
        datetime(2027, 3, 28, 1, 0, tzinfo=UTC),
        (("02:00", "03:00"), ("02:30", "04:00"), ("01:30", "02:30"), ("02:15", "02:45")),
    ),
    ("America/New_York", datetime(2027, 3, 14, 7, 0, tzinfo=UTC), (("02:00", "03:00"), ("02:30", "02:59"))),
    (
        "Australia/Lord_Howe",
        datetime(2027, 10, 2, 15, 30, tzinfo=UTC),
        (("02:00", "02:30"), ("02:10", "02:20")),
    ),
    ("Europe/Berlin", datetime(2027, 10, 31, 1, 0, tzinfo=UTC), (("02:00", "03:00"), ("02:30", "02:45"))),
)
#: windows any day: working hours, and one across midnight
PLAIN_WINDOWS = (("09:00", "17:00"), ("22:00", "06:00"))


def _change(seed: int) -> tuple[str, datetime, tuple[tuple[str, str], ...]]:
    return DST_CHANGES[(seed // 4) % len(DST_CHANGES)]


def dst_for(seed: int) -> Generator:
    """The full catalogue; creates (half of them) get a local time in the seed's DST change's zone
    and, most of them, a send window around the change (its own random stream)."""
    local = random.Random(seed * 7 + 25)
    zone_name, _, windows = _change(seed)

    def draw(rng: random.Random, accounts: tuple[str, ...], adversary: str) -> Action:
        name, args = generate(rng, accounts, adversary)
        if name == "POST /reminders" and local.random() < 0.5:
            args["zone"] = zone_name
            if local.random() < 0.8:
                args["window"] = list(local.choice(windows + PLAIN_WINDOWS))
        return name, args

    return draw


def profile_of(seed: int) -> str:
    if seed in FULL_CATALOGUE_SEEDS:
        return "all"
    return {1: "dst", 2: "collide", 3: "evidence"}.get(seed % 4, "all")


def generator_of(seed: int) -> Generator:
    """A new generator for one run of ``seed`` (the evidence profile's keeps its episode's state)."""
    profile = profile_of(seed)
    if profile == "dst":
        return dst_for(seed)
    if profile == "evidence":
        return evidence(collide)
    return collide if profile == "collide" else everything


def start_of(seed: int) -> datetime:
    """The virtual clock's start: three hours before the seed's DST change (dst), else ``sim.T0``."""
    return _change(seed)[1] - timedelta(hours=3) if profile_of(seed) == "dst" else T0
