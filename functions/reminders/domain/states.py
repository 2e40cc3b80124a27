"""The state machine of one channel delivery, boring on purpose.

scheduled -> queued -> sending -> delivered
sending -> retryable -> sending
retryable/queued/scheduled -> delivered
                                 (provider evidence: an SES send event, or a receiver's confirmed
                                 409, proves an earlier acceptance of this key, even after the
                                 delivery was rescheduled or gave its claim back)
dead_letter -> delivered         (the same evidence, arriving late: a stale worker's 2xx, a late send
                                 event, or a redrive that finds an acceptance on record)
sending -> queued                (over the destination's rate limit: the claim is given back unsent)
sending -> dead_letter
any non-terminal -> canceled
dead_letter -> canceled          (a later redrive of its DLQ message is acknowledged unsent)
dead_letter -> queued            (only through an operator's redrive)
"""

from __future__ import annotations

from enum import StrEnum


class DeliveryState(StrEnum):
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    SENDING = "sending"
    RETRYABLE = "retryable"
    DELIVERED = "delivered"
    DEAD_LETTER = "dead_letter"
    CANCELED = "canceled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({DeliveryState.DELIVERED, DeliveryState.DEAD_LETTER, DeliveryState.CANCELED})
#: What a cancel changes: everything not delivered or already cancelled (a dead letter included).
CANCELABLE = frozenset(s for s in DeliveryState if s not in (DeliveryState.DELIVERED, DeliveryState.CANCELED))

#: Every allowed transition. Anything else is a bug and raises.
TRANSITIONS: dict[DeliveryState, frozenset[DeliveryState]] = {
    DeliveryState.SCHEDULED: frozenset(
        {
            DeliveryState.QUEUED,
            DeliveryState.SENDING,
            DeliveryState.CANCELED,
            DeliveryState.SCHEDULED,
            DeliveryState.DELIVERED,  # provider evidence of a send made before a reschedule
        }
    ),
    DeliveryState.QUEUED: frozenset(
        {
            DeliveryState.SENDING,
            DeliveryState.CANCELED,
            DeliveryState.SCHEDULED,
            DeliveryState.QUEUED,
            DeliveryState.DELIVERED,  # provider evidence of a send made before the claim was given back
        }
    ),
    DeliveryState.SENDING: frozenset(
        {
            DeliveryState.DELIVERED,
            DeliveryState.RETRYABLE,
            DeliveryState.DEAD_LETTER,
            DeliveryState.SENDING,  # re-claim after an expired lease
            DeliveryState.QUEUED,  # over the destination's rate limit: the claim is given back unsent
            DeliveryState.CANCELED,  # cancel while sending: the attempt finishes, is never retried
        }
    ),
    DeliveryState.RETRYABLE: frozenset(
        {
            DeliveryState.SENDING,
            DeliveryState.CANCELED,
            DeliveryState.QUEUED,  # rescheduled into the delay window
            DeliveryState.SCHEDULED,  # rescheduled beyond it
            DeliveryState.DELIVERED,  # the provider's own send event proves an earlier acceptance
        }
    ),
    DeliveryState.DELIVERED: frozenset(),
    DeliveryState.DEAD_LETTER: frozenset(
        {
            DeliveryState.QUEUED,  # an operator's redrive
            DeliveryState.DELIVERED,  # provider evidence of an acceptance the dead letter contradicts
            DeliveryState.CANCELED,  # cancelled by a person: a later redrive is acknowledged unsent
        }
    ),
    DeliveryState.CANCELED: frozenset(),
}

#: States a consumer may claim (together with the message's version).
CLAIMABLE = frozenset({DeliveryState.SCHEDULED, DeliveryState.QUEUED, DeliveryState.RETRYABLE})


class IllegalTransitionError(Exception):
    """A transition the state table does not allow (a bug, never input)."""


def check_transition(current: DeliveryState, target: DeliveryState) -> DeliveryState:
    if target not in TRANSITIONS[current]:
        raise IllegalTransitionError(f"{current} -> {target}")
    return target
