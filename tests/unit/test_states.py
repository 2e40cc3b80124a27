"""The state table of one channel delivery (MISSION §3): every allowed and every forbidden transition."""

from __future__ import annotations

import itertools

import pytest
from reminders.domain.states import (
    CLAIMABLE,
    TERMINAL,
    TRANSITIONS,
    DeliveryState,
    IllegalTransitionError,
    check_transition,
)

S = DeliveryState

#: MISSION §3 lists these ...
MISSION = {
    (S.SCHEDULED, S.QUEUED),
    (S.QUEUED, S.SENDING),
    (S.SENDING, S.DELIVERED),
    (S.SENDING, S.RETRYABLE),
    (S.RETRYABLE, S.SENDING),
    (S.SENDING, S.DEAD_LETTER),
    (S.SCHEDULED, S.CANCELED),
    (S.QUEUED, S.CANCELED),
    (S.SENDING, S.CANCELED),
    (S.RETRYABLE, S.CANCELED),
    (S.DEAD_LETTER, S.QUEUED),  # only through an operator's redrive
    (S.DEAD_LETTER, S.CANCELED),  # issue 12: a later redrive of its DLQ message is acknowledged unsent
}
#: ... the implementation adds these on purpose ...
IMPLEMENTATION = {
    (S.SCHEDULED, S.SENDING),  # the dispatcher checkpoints per page: a claim takes a scheduled row
    (S.SENDING, S.SENDING),  # take-over of an expired lease
    (S.QUEUED, S.SCHEDULED),  # reschedule beyond the window
    (S.RETRYABLE, S.SCHEDULED),  # reschedule beyond the window
    (S.RETRYABLE, S.QUEUED),  # reschedule into the window
    (S.RETRYABLE, S.DELIVERED),  # the provider's own send event proves an earlier acceptance
    (S.SENDING, S.QUEUED),  # over the destination's rate limit: the claim is given back unsent
    # Provider evidence (an SES send event, a stale worker's 2xx) proves an acceptance of this key
    # made before the delivery was rescheduled, gave its claim back, or was dead-lettered (issue 9).
    (S.SCHEDULED, S.DELIVERED),
    (S.QUEUED, S.DELIVERED),
    (S.DEAD_LETTER, S.DELIVERED),
}
#: ... and these must never happen.
FORBIDDEN = (
    {(S.DELIVERED, t) for t in S}
    | {(S.CANCELED, t) for t in S}
    | {(S.DEAD_LETTER, t) for t in S if t not in (S.QUEUED, S.DELIVERED, S.CANCELED)}
    | {(f, S.DEAD_LETTER) for f in (S.SCHEDULED, S.QUEUED, S.RETRYABLE)}
    | {(f, S.RETRYABLE) for f in (S.SCHEDULED, S.QUEUED)}
    | {(S.SENDING, S.SCHEDULED)}
)
TABLE = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}


def test_every_state_has_a_row() -> None:
    assert set(TRANSITIONS) == set(S)


def test_the_mission_transitions_are_allowed() -> None:
    assert MISSION <= TABLE


def test_the_implementation_transitions_are_allowed() -> None:
    assert IMPLEMENTATION <= TABLE


def test_no_forbidden_transition_is_in_the_table() -> None:
    assert not (FORBIDDEN & TABLE), sorted(FORBIDDEN & TABLE)


@pytest.mark.parametrize(("current", "target"), sorted(MISSION | IMPLEMENTATION))
def test_allowed(current: DeliveryState, target: DeliveryState) -> None:
    assert check_transition(current, target) is target


@pytest.mark.parametrize(("current", "target"), sorted(FORBIDDEN))
def test_forbidden(current: DeliveryState, target: DeliveryState) -> None:
    with pytest.raises(IllegalTransitionError):
        check_transition(current, target)


@pytest.mark.parametrize(("current", "target"), sorted(set(itertools.product(S, S))))
def test_check_transition_follows_the_table(current: DeliveryState, target: DeliveryState) -> None:
    if (current, target) in TABLE:
        assert check_transition(current, target) is target
    else:
        with pytest.raises(IllegalTransitionError):
            check_transition(current, target)


def test_terminal_states() -> None:
    assert {s for s in S if s.terminal} == TERMINAL == {S.DELIVERED, S.DEAD_LETTER, S.CANCELED}


def test_terminal_states_are_final_except_redrive_and_provider_evidence() -> None:
    assert TRANSITIONS[S.DELIVERED] == frozenset()
    assert TRANSITIONS[S.CANCELED] == frozenset()
    # a redrive, a cancel, or the provider's own evidence that the dead-lettered key was accepted
    assert TRANSITIONS[S.DEAD_LETTER] == frozenset({S.QUEUED, S.CANCELED, S.DELIVERED})


def test_every_non_terminal_state_and_a_dead_letter_can_be_canceled() -> None:
    for s in S:
        assert (S.CANCELED in TRANSITIONS[s]) is (not s.terminal or s is S.DEAD_LETTER)


def test_nothing_reaches_a_send_outcome_without_a_send() -> None:
    for s in S:
        if s is not S.SENDING:
            assert S.DEAD_LETTER not in TRANSITIONS[s]
            assert S.RETRYABLE not in TRANSITIONS[s]
    # delivered without a send of this attempt only on the provider's evidence of an earlier one
    # (issue 9): from every state an earlier send can have left behind, never from canceled.
    assert S.DELIVERED not in TRANSITIONS[S.CANCELED]


def test_claimable_states() -> None:
    assert {S.SCHEDULED, S.QUEUED, S.RETRYABLE} == CLAIMABLE
    assert all(S.SENDING in TRANSITIONS[s] for s in CLAIMABLE)
    assert not CLAIMABLE & TERMINAL


def test_a_dead_letter_can_be_cancelled_and_nothing_else_leaves_canceled() -> None:
    """Cancel is the operator's "never send this": a dead letter must accept it, so that a later redrive
    of its DLQ message finds the delivery cancelled instead of starting a new cycle."""
    assert check_transition(S.DEAD_LETTER, S.CANCELED) is S.CANCELED
    assert TRANSITIONS[S.DEAD_LETTER] == frozenset({S.QUEUED, S.CANCELED, S.DELIVERED})
    assert TRANSITIONS[S.CANCELED] == frozenset()
