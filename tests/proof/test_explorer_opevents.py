"""The explorer runs the reminders table's stream through OpEventsFunction (issue 26, h26x1;
``proof/explorer/opstream.py``): operational events are emitted from the in-memory world's stream
records, in order, reversed and replayed, and no event crosses accounts. Sized in steps."""

from __future__ import annotations

from typing import Any

import pytest
from reminders.domain.opevents import EVENT_KIND

from tests.proof.test_review26_hostile import DELIVER_WEBHOOK, MINUTE, _kind, _run


def _registered_and_delivered(order: str) -> list[tuple[str, dict[str, Any]]]:
    """acct-a and acct-b each register an event endpoint and have a webhook delivered; the stream
    then runs in ``order`` (twice: a replay of what was applied)."""
    trace: list[tuple[str, dict[str, Any]]] = []
    for account in ("acct-a", "acct-b"):
        trace += [
            ("POST /endpoints", {"as": account, "i": 0, "v": 0}),
            ("PUT /accounts/{account_id}/event-endpoint", {"as": account, "i": 0, "v": 0}),
            ("POST /reminders", {"as": account, "i": 0, "v": 0, "due": 30, "key": 1}),
        ]
    return [*trace, MINUTE, DELIVER_WEBHOOK, ("stream", {"order": order}), ("stream", {"order": order})]


def _event_reminders(explorer: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rid in explorer.sim.store.items:
        r = explorer.sim.store.get(rid)
        if r is not None and r.kind == EVENT_KIND:
            out.setdefault(r.account_id, []).append(r.data["type"])
    return out


@pytest.mark.parametrize("order", ["in_order", "reversed", "replayed"])
def test_each_delivery_gets_one_event_of_its_own_account_whatever_the_stream_order(order: str) -> None:
    explorer, violation = _run(_registered_and_delivered(order))
    assert violation is None, violation
    assert _event_reminders(explorer) == {
        "acct-a": ["reminder.delivered"],
        "acct-b": ["reminder.delivered"],
    }
    assert explorer.opstream.applied >= 2


def plant_one_registration_for_the_whole_batch(mp: pytest.MonkeyPatch) -> None:
    """OpEventsFunction's per-invocation lookup caches the first account's registration for every
    account of the batch: acct-b's events go to acct-a's endpoint."""
    from reminders.services.opevents import Lookups

    def first(self: Any, account_id: str) -> Any:
        if "*" not in self.seen:
            self.reads += 1
            self.seen["*"] = self.store.get(account_id)
        return self.seen["*"]

    mp.setattr(Lookups, "__call__", first)


def test_an_event_sent_to_another_accounts_endpoint_is_found() -> None:
    with pytest.MonkeyPatch.context() as mp:
        plant_one_registration_for_the_whole_batch(mp)
        _, violation = _run(_registered_and_delivered("in_order"))
    assert _kind(violation) in ("reference_crossed_accounts", "event_crossed_accounts"), violation


def test_an_email_correction_moves_the_address_and_ses_events_name_the_recipient() -> None:
    """``correct_email`` (emails.py) corrects an email's ``to`` before its send; the send goes to the
    new address, and the explorer's SES event names it (``mail.destination``): delivered there."""
    from tests.proof.test_review26_hostile import DELIVER_EMAIL, WEBHOOK_AND_EMAIL

    trace = [
        WEBHOOK_AND_EMAIL,
        ("correct_email", {"as": "acct-a", "i": 0, "v": 1}),
        MINUTE,
        DELIVER_EMAIL,
        ("ses_event", {"i": 0, "kind": "Delivery"}),
    ]
    explorer, violation = _run(trace)
    assert violation is None, violation
    assert [e.to for e in explorer.sim.emails] == ["moved1.user0@acct-a.example.com"]


def test_a_send_event_for_an_old_address_is_found_when_a_correction_could_move_the_address() -> None:
    """``delivered_elsewhere`` sees rev26's SES plant (a send event for an address the delivery no
    longer has reconciles it) once a second plant lets a correction move the address after a send SES
    may have taken (the product's 409 ``correction_after_possible_acceptance`` skipped): the checker
    can see it; on today's product the path is closed upstream (test_review26_hostile's xfail)."""
    from reminders.domain.models import Delivery

    from tests.proof.review26_plants import PLANTS
    from tests.proof.test_review26_hostile import DELIVER_EMAIL, WEBHOOK_AND_EMAIL

    trace = [
        WEBHOOK_AND_EMAIL,
        ("ses_fault", {"answer": "timeout_after"}),
        MINUTE,
        DELIVER_EMAIL,
        ("correct_email", {"as": "acct-a", "i": 0, "v": 1}),
        ("ses_event", {"i": 0, "kind": "Send"}),
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Delivery, "may_have_been_accepted", lambda self, destination=None: False)
        PLANTS["ses_event_reconciles_any_destination"](mp)
        _, violation = _run(trace)
    assert _kind(violation) == "delivered_elsewhere", violation
