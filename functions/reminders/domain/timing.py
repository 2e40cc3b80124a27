"""The time budgets of one delivery, from one formula (MISSION §3, §4; issue 9 case 5).

A delivery is safe from a second send while its lease lives, so the lease must outlast everything
between the claim and the record of the outcome: the provider attempt (a *total* deadline, not a
per-read timeout) plus the worst case of the store call that records it (every retry botocore makes,
with its backoff). The message's visibility timeout must outlast the lease, and the function must be
able to finish one record after it starts it. Infra derives the function timeout and the queue's
visibility from here; the consumer checks the remaining time against ``send_budget_seconds`` before
it claims and before it sends. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: botocore "standard" retry mode: the n-th retry waits up to min(20 s, 2**n) (full jitter).
STANDARD_RETRY_MAX_BACKOFF_SECONDS = 20.0
#: SQS refuses ChangeMessageVisibility beyond 12 h from the message's receive.
SQS_MAX_VISIBILITY_SECONDS = 12 * 3600
#: AWS guidance for SQS event sources: visibility timeout at least 6 x the function timeout.
VISIBILITY_TIMEOUT_FACTOR = 6
#: How long before the invocation started the event source mapping may have received a record
#: (no batching window is configured; this covers its poll and invoke latency, generously).
RECEIVE_TO_INVOKE_MARGIN_SECONDS = 120
#: Time a delivery function has for records before the last one it may still start.
FUNCTION_SLACK_SECONDS = 15.0

# -- botocore client settings (adapters/clients.py builds every Config from these) ----------------
AWS_CONNECT_TIMEOUT_SECONDS = 1.0
AWS_READ_TIMEOUT_SECONDS = 2.0
#: Idempotent AWS calls (DynamoDB reads and conditional writes, SQS): total attempts, first included.
AWS_IDEMPOTENT_MAX_ATTEMPTS = 3
#: Non-idempotent sends (SES SendEmail): one attempt; our retry policy decides what happens next.
AWS_SEND_MAX_ATTEMPTS = 1
SES_CONNECT_TIMEOUT_SECONDS = 2.0


def aws_call_worst_seconds(
    attempts: int = AWS_IDEMPOTENT_MAX_ATTEMPTS,
    connect_seconds: float = AWS_CONNECT_TIMEOUT_SECONDS,
    read_seconds: float = AWS_READ_TIMEOUT_SECONDS,
) -> float:
    """The longest one botocore call can take: every attempt timing out, plus the backoffs between."""
    backoff = sum(min(STANDARD_RETRY_MAX_BACKOFF_SECONDS, 2.0**n) for n in range(1, attempts))
    return attempts * (connect_seconds + read_seconds) + backoff


@dataclass(frozen=True, slots=True)
class DeliveryTiming:
    """The budgets of a delivery consumer, checked together."""

    attempt_deadline_seconds: float = 10.0  # total per provider attempt: connect + send + response
    lease_seconds: float = 60.0
    store_call_worst_seconds: float = aws_call_worst_seconds()
    margin_seconds: float = 1.0

    @property
    def send_budget_seconds(self) -> float:
        """From the start of a send to its recorded outcome, at worst."""
        return self.attempt_deadline_seconds + self.store_call_worst_seconds + self.margin_seconds

    @property
    def record_budget_seconds(self) -> float:
        """From the claim of a record to its recorded outcome, at worst (the claim is a store call)."""
        return self.store_call_worst_seconds + self.send_budget_seconds

    @property
    def function_timeout_seconds(self) -> int:
        """A record claimed at the last allowed moment still records, with time to start a few more
        before it (rounded up to 10 s)."""
        return int(math.ceil((self.record_budget_seconds + FUNCTION_SLACK_SECONDS) / 10.0) * 10)

    @property
    def visibility_timeout_seconds(self) -> int:
        return VISIBILITY_TIMEOUT_FACTOR * self.function_timeout_seconds

    def problems(self) -> list[str]:
        """What breaks the rules (empty when sound): the lease covers a send and its record, and ends
        before the message becomes visible again."""
        out = []
        if self.lease_seconds <= self.send_budget_seconds:
            out.append(
                f"lease {self.lease_seconds:g} s must outlast a send and its record "
                f"({self.send_budget_seconds:g} s)"
            )
        if self.lease_seconds >= self.visibility_timeout_seconds:
            out.append(
                f"lease {self.lease_seconds:g} s must end before the visibility timeout "
                f"({self.visibility_timeout_seconds} s)"
            )
        return out


def visibility_cap_seconds(seconds_since_invocation_start: float) -> int:
    """The longest visibility SQS still accepts for a record of this invocation: 12 h from *this*
    receive, which the record does not carry, so from the invocation's start minus a margin."""
    cap = (
        SQS_MAX_VISIBILITY_SECONDS
        - max(0.0, seconds_since_invocation_start)
        - RECEIVE_TO_INVOKE_MARGIN_SECONDS
    )
    return max(0, math.floor(cap))


DEFAULT_TIMING = DeliveryTiming()
