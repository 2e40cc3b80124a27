"""The adversary's cross-account pairings, drawn often enough for a seeded run to reach them (issue 26;
rev26: about once a run, often on a delivered reminder, so planted defects escaped seeds 7, 1-4).

``adversary_pairs(generate)`` wraps a profile's generator. It draws nothing of its own (every seed's
sequence of actions is the one its profile draws); it rewrites some of the adversary's requests that
name another account into the pairing of its own object with that account's endpoint:

- ``PATCH /reminders/{id}`` (half of them, by the drawn variant's parity): the adversary's newest
  reminder (index -1: the one most likely still pending, so the correction is judged rather than
  refused as already delivered) corrected onto the other account's newest endpoint (variant 2 or 7 of
  ``actions._patch``: a channel to an endpoint id);
- ``PUT /accounts/{id}/event-endpoint`` (three in four): the adversary's own account registered with
  the other account's endpoint (an odd variant of ``actions._event_endpoint``); the rest still name
  the other account in the path (a 403).

Both must be refused; the checker's ``reference_crossed_accounts`` judges any that is stored.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .emails import rewrite

Action = tuple[str, dict[str, Any]]
Generator = Callable[[random.Random, tuple[str, ...], str], Action]

PATCH = "PATCH /reminders/{reminder_id}"
PUT_EVENT_ENDPOINT = "PUT /accounts/{account_id}/event-endpoint"
NEWEST = -1  # ``actions.pick`` reads indices modulo the list; odd, as the pairing variants need


def paired(name: str, args: dict[str, Any], adversary: str) -> dict[str, Any]:
    """``args`` of one drawn action, rewritten into a pairing when it is one of the two above."""
    if args.get("as") != adversary or args.get("target", adversary) == adversary:
        return args
    v = int(args.get("v", 0))
    if name == PATCH and v % 2 == 0:
        return {**args, "v": 2 if v % 4 == 0 else 7, "i": NEWEST}
    if name == PUT_EVENT_ENDPOINT and v % 4:
        return {**args, "v": v | 1}
    return args


def adversary_pairs(generate: Generator) -> Generator:
    def draw(rng: random.Random, accounts: tuple[str, ...], adversary: str) -> Action:
        name, args = generate(rng, accounts, adversary)
        return rewrite(name, paired(name, args, adversary), adversary)

    return draw
