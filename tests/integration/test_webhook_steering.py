"""Receiver steering over real local HTTP (issue 16): ``webhook-delivery: abort`` on a non-2xx
answer ends the delivery (``receiver_aborted``); on a 2xx it changes nothing; odd values and bytes
are ignored and never crash the consumer."""

from __future__ import annotations

import pytest
from reminders.domain.retry import Action, DeadLetterReason, OutcomeClass, RetryPolicy, decide

from tests.integration.test_webhook_adapter import RawServer, reply, send, sender


@pytest.mark.parametrize("value", ["abort", "ABORT", " Abort "])
def test_a_503_with_webhook_delivery_abort_dead_letters_receiver_aborted(value: str) -> None:
    srv = RawServer(reply(503, headers={"webhook-delivery": value})).start()
    try:
        r = send(sender(), srv.url())
    finally:
        srv.stop()
    assert r.outcome is OutcomeClass.TRANSIENT and r.steering == "abort" and r.detail == "receiver_abort"
    d = decide(r, attempts=1, age_seconds=0, policy=RetryPolicy())
    assert d.action is Action.DEAD_LETTER and d.reason is DeadLetterReason.RECEIVER_ABORTED


def test_a_2xx_with_webhook_delivery_abort_is_still_an_acceptance() -> None:
    srv = RawServer(reply(200, headers={"webhook-delivery": "abort"})).start()
    try:
        r = send(sender(), srv.url())
    finally:
        srv.stop()
    assert r.outcome is OutcomeClass.ACCEPTED and r.steering == ""


@pytest.mark.parametrize("value", ["stop", "abort,disable", "\uff41\uff42\uff4f\uff52\uff54", "abort\u0660"])
def test_an_unknown_or_non_ascii_steering_value_is_ignored(value: str) -> None:
    raw = value.encode("utf-8").decode("latin-1")  # the bytes a receiver could put on the wire
    srv = RawServer(reply(500, headers={"webhook-delivery": raw})).start()
    try:
        r = send(sender(), srv.url())
    finally:
        srv.stop()
    assert r.outcome is OutcomeClass.TRANSIENT and r.steering == ""
    assert decide(r, attempts=1, age_seconds=0, policy=RetryPolicy()).action is Action.RETRY
