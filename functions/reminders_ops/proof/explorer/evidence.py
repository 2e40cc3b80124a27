"""The ``evidence`` profile (issue 26): episodes that put the evidence of a possible acceptance to the
test. The collide profile draws one action at a time; the evidence it needs comes from an order of
~10-30 actions on one reminder (an ambiguous attempt, the history growing past its bounds, a
correction, another send) that independent draws almost never make. Here the generator draws an
*episode* instead: a short script on one reminder, built only from the catalogue's actions (the API's
routes, the consumers, time, the operator's redrive, the receiver's armed answers), its shape drawn
from the seed:

1. the owner creates a webhook due now to a receiver that does not deduplicate;
2. ``prefix`` attempts, each answered by an armed 429 or 400 (a 400 dead-letters it; every attempt
   first redrives the DLQ, so a dead letter comes back): the history's first lines;
3. the ambiguous step: an attempt whose answer is lost after the receiver took the body (a timeout, a
   500), or a consumer crashing after its send whose message another consumer takes over (with an
   armed 429, 400 or 500 answering the take-over's send, or none);
4. ``suffix`` attempts answered by 400s or 429s (dead letter, redrive, again): enough of them push
   the evidence line out of the compacted history (``HISTORY_HEAD`` + ``HISTORY_TAIL``);
5. a correction of the reminder (data, due time, destination, or ``resend: true``);
6. one or two plain attempts, and, half the time, the owner cancels it (its dead letters no longer
   eat later episodes' armed answers).

Between an episode's actions the generator sometimes inserts one action of the collide profile's
(``NOISE``): an episode never runs alone. Each action is an ordinary trace entry: the trace shrinks
and replays as any other, and nothing the checker judges changes.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

from .actions import Action

Generator = Callable[[random.Random, tuple[str, ...], str], Action]

#: probability that the next step is one action of the collide profile instead of the episode's next
NOISE = 0.08
#: patch variants (``actions._patch``: ``v % 5``): 0 due time, 1 data, 2 destination, 3 resend
PATCH_VARIANTS = (0, 1, 1, 2, 3, 5, 6, 6, 10, 11)


def _deliver(rng: random.Random, **extra: Any) -> Action:
    return "deliver", {"queue": "webhook", "worker": rng.choice(("w1", "w2")), "n": 10, **extra}


def _attempt(rng: random.Random, answer: str | None) -> list[Action]:
    """Redrive what the DLQ holds, arm the receiver's next answer, a consumer's batch, time passes."""
    out: list[Action] = [("redrive", {"queue": "webhook", "mode": "bounded"})]
    if answer is not None:
        out.append(("receiver_fault", {"answer": answer}))
    out.append(_deliver(rng))
    out.append(("advance", {"seconds": rng.choice((61, 180, 600, 600))}))
    return out


def _take_over(rng: random.Random) -> list[Action]:
    """A consumer sends and crashes before recording; after the visibility timeout and the lease,
    another consumer takes the message over, its send answered by an armed fault (or not)."""
    out: list[Action] = [_deliver(rng, crash="after:send"), ("advance", {"seconds": rng.choice((600, 900))})]
    answer = rng.choice(("429", "429", "400", "500", None))
    if answer is not None:
        out.append(("receiver_fault", {"answer": answer}))
    out.append(_deliver(rng))
    return out


def episode(rng: random.Random, actor: str) -> list[Action]:
    """One episode's actions, on ``actor``'s newest reminder (``i`` -1: ``pick`` reads it modulo)."""
    out: list[Action] = [
        (
            "POST /reminders",
            {"as": actor, "i": rng.randrange(8), "v": rng.choice((1, 9)), "due": 0, "key": rng.randrange(40)},
        )
    ]
    for _ in range(rng.choice((0, 1, 2, 2, 3))):
        out += _attempt(rng, rng.choice(("429", "400")))
    if rng.random() < 0.5:
        out += _take_over(rng)
    else:
        out += _attempt(rng, rng.choice(("timeout_after", "timeout_after", "500")))
    for _ in range(rng.randrange(9)):
        out += _attempt(rng, rng.choice(("400", "400", "400", "429")))
    out.append(
        (
            "PATCH /reminders/{reminder_id}",
            {"as": actor, "i": -1, "v": rng.choice(PATCH_VARIANTS), "due": rng.choice((0, 30, 120))},
        )
    )
    for _ in range(rng.choice((1, 2))):
        out += _attempt(rng, None)
    if rng.random() < 0.5:
        out.append(("DELETE /reminders/{reminder_id}", {"as": actor, "i": -1, "v": 0}))
    return out


def evidence(noise: Generator) -> Generator:
    """The evidence profile's generator (one per run): episodes, their shapes from the run's drawing
    stream, and a ``noise`` action now and then. Stateful: the episode under way is its own."""
    pending: deque[Action] = deque()

    def draw(rng: random.Random, accounts: tuple[str, ...], adversary: str) -> Action:
        if rng.random() < NOISE:
            return noise(rng, accounts, adversary)
        if not pending:
            honest = [a for a in accounts if a != adversary]
            pending.extend(episode(rng, honest[0] if rng.random() < 0.8 else rng.choice(honest)))
        return pending.popleft()

    return draw
