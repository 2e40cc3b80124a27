"""Email corrections and SES's word on where an email went (issue 26; rev26: no ``PATCH`` changed an
email's ``to``, and the explorer's SES events named no recipients, so the reconciler's "sent to an
address the delivery no longer has" branch was never reached).

- ``correct_email(explorer, args)``: an account corrects one of its reminders' email channel to another
  of its user's addresses (``PATCH /reminders/{id}`` with ``channels: {"email-0": {"to": ...}}``,
  one in three with ``resend: true``), through the real API handler as any other request. Drawn in
  place of a quarter of the honest accounts' corrections (``rewrite``: nothing extra is drawn).
- The SES events the explorer sends name the recipients of the send they are about (``mail.destination``,
  as SES's do): an event for a send to an address a correction since replaced names the old one.
- ``check_delivered_to``: ``delivered_elsewhere`` — an email recorded ``delivered`` went, under its
  key, to the address the ledger records (SES's own records: ``Sim.emails``). A send event for the old
  address must only be noted (``accepted_elsewhere``), never deliver the corrected delivery.
"""

from __future__ import annotations

from typing import Any

from .violation import Violation

PATCH = "PATCH /reminders/{reminder_id}"
CORRECT_EMAIL = "correct_email"
EMAIL_CHANNEL = "email-0"


def rewrite(name: str, args: dict[str, Any], adversary: str) -> tuple[str, dict[str, Any]]:
    """A quarter of the honest accounts' corrections (variants 3, 7, 11) become email corrections."""
    if name == PATCH and args.get("as") != adversary and int(args.get("v", 0)) % 4 == 3:
        return CORRECT_EMAIL, {"as": args["as"], "i": args.get("i", 0), "v": args["v"]}
    return name, args


def correct_email(explorer: Any, args: dict[str, Any]) -> None:
    from .actions import Ctx, Request
    from .sim import principal_of

    sim, held, actor = explorer.sim, explorer.held, args["as"]
    i, v = int(args.get("i", 0)), int(args.get("v", 0))
    # the account's reminders with an email channel (it created them: it knows which)
    own = [
        rid for rid in held.reminders[actor] if EMAIL_CHANNEL in sim.store.items.get(rid, {}).get("dl", {})
    ]
    if not own:
        return
    rid = own[i % len(own)]
    body: dict[str, Any] = {
        "channels": {EMAIL_CHANNEL: {"to": f"moved{v % 3}.user{i % 3}@{actor}.example.com"}}
    }
    if v % 3 == 0:
        body["resend"] = True
    ctx = Ctx(sim, held, {"as": actor, "i": i, "v": v, "rid": rid})
    req = Request("PATCH", f"/reminders/{rid}", body)
    before = explorer.checker.snapshot()
    status, answer = sim.call("PATCH", req.path, body, principal=principal_of(actor))
    if 200 <= status < 300:
        held.learn(actor, answer)
    explorer.checker.api_answer(("PATCH", "/reminders/{reminder_id}"), ctx, req, status, answer, before)


def check_delivered_to(sim: Any, where: str, d: Any) -> None:
    """``delivered_elsewhere``: a delivered email's recorded address got it under its key."""
    sent_to = {e.to.strip().lower() for e in sim.emails if e.key == d.key}
    if sent_to and d.destination.strip().lower() not in sent_to:
        raise Violation(
            "delivered_elsewhere", f"{where}: delivered to {d.destination}, SES took {d.key} for others only"
        )
