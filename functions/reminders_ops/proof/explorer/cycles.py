"""``cycle_not_fresh``: a redrive starts a fresh, bounded attempt cycle (MISSION §3; docs/delivery.md:
"a redriven message gets a fresh, bounded attempt cycle; the redrive is recorded";
services/delivery/claim.py ``_redrive``: attempts, throttles and the cycle's start reset).

Judged against the provider's trace, not the row's counters: a delivery dead-lettered
``attempts_exhausted`` in cycle ``c`` >= 1 (a redrive started it) earned it with the policy's whole
budget (``RetryPolicy.max_attempts``) of failed provider contacts of its key(s) since the operator
moved its cycle ``c - 1`` dead letter back from the DLQ (the first such move: no key of a dead letter
is sent before its redrive is processed, so every contact after it belongs to cycle ``c``). A failed
contact: a webhook POST answered neither 2xx nor 409 nor 429 (a throttle spends no attempt) or whose
answer never came; an email whose SES answer was lost. A contact may spend no attempt (a held
endpoint's probe): more contacts than attempts is allowed, fewer is not.

The explorer's budget is 3 (``sim.MAX_ATTEMPTS``, a deployment's ``MAX_ATTEMPTS``): at the default 8
a failing host's endpoint is held before the budget is spent (failures then spend none) and no
delivery dead-lettered ``attempts_exhausted`` in seeds 7, 1, 2, 3.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .checker import Violation


@dataclass
class Cycles:
    sim: Any
    #: (reminder, channel, the dead letter's cycle) -> (POSTs, SES answers per key) when first redriven
    moved: dict[tuple[str, str, str], tuple[int, dict[str, int]]] = field(default_factory=dict)

    def redriven(self, body: str, attributes: dict[str, str]) -> None:
        """The operator moved a DLQ message back to its queue (``engine._redrive``)."""
        try:
            doc = json.loads(body)
            at = (str(doc["reminder_id"]), str(doc["channel_id"]), attributes["dl_cycle"])
        except (ValueError, KeyError, TypeError):
            return
        if at not in self.moved:
            emails = {k: len(v) for k, v in self.sim.ses_trace.items()}
            self.moved[at] = (len(self.sim.posts), emails)

    def judge(self, where: str, reminder: Any, d: Any, keys: list[str]) -> None:
        """A dead letter of ``d`` (its reason earned under ``keys``, ``checker.reason_keys``)."""
        if d.dead_letter_reason != "attempts_exhausted" or d.cycle < 1:
            return
        mark = self.moved.get((reminder.id, d.channel_id, str(d.cycle - 1)))
        if mark is None:
            return  # redriven by no action the explorer took (its DLQ message's cycle unknown)
        posts, emails = mark
        failed = sum(
            1
            for p in self.sim.posts[posts:]
            if p.key in keys and (p.timeout or not (200 <= p.status < 300 or p.status in (409, 429)))
        )
        for k in keys:
            failed += sum(
                1 for a in self.sim.ses_trace.get(k, [])[emails.get(k, 0) :] if a == "timeout_after"
            )
        budget = self.sim.world.policy.max_attempts
        if failed < budget:
            raise Violation(
                "cycle_not_fresh",
                f"{where}: attempts_exhausted in redriven cycle {d.cycle} after {failed} failed"
                f" contacts since its redrive (a fresh cycle spends {budget})",
            )
