"""Use case: one-click unsubscribe (RFC 8058). The email sender asks for the headers of a delivery;
``POST /unsubscribe/{token}`` suppresses that address for that account and reminder kind.

Idempotent (the entry is added once; every later click answers the same), needs no login, and
reveals nothing about the address: the answer is the same for every valid token.
"""

from __future__ import annotations

from collections.abc import Callable

from ..domain.models import Delivery, Reminder
from ..domain.ports import Clock, Telemetry
from ..domain.schedule import iso
from ..domain.suppression import SuppressionEntry, SuppressionList, SuppressionReason, address_hash
from ..domain.unsubscribe import make_token, read_token

ONE_CLICK = "List-Unsubscribe=One-Click"


class Unsubscribe:
    def __init__(
        self,
        *,
        suppressions: SuppressionList | None,
        secret: Callable[[], bytes],
        clock: Clock,
        telemetry: Telemetry,
        base_url: str | None = None,
        mailto: str | None = None,
    ) -> None:
        self.suppressions = suppressions
        self.secret = secret
        self.clock = clock
        self.telemetry = telemetry
        self.base_url = base_url.rstrip("/") if base_url else None
        self.mailto = mailto

    def token(self, reminder: Reminder, delivery: Delivery) -> str:
        return make_token(
            self.secret(),
            account_id=reminder.account_id,
            kind=reminder.kind,
            address_hash=(
                self.suppressions.hash_of(reminder.account_id, delivery.destination)
                if self.suppressions is not None
                else address_hash(delivery.destination)
            ),
            delivery_key=delivery.key,
            due_at=reminder.due_at,
        )

    def headers(self, delivery: Delivery, reminder: Reminder) -> dict[str, str]:
        """``List-Unsubscribe`` (the https link, plus mailto if configured) and
        ``List-Unsubscribe-Post``; the same bytes on every retry. Empty without a base URL."""
        if not self.base_url:
            return {}
        links = [f"<{self.base_url}/unsubscribe/{self.token(reminder, delivery)}>"]
        if self.mailto:
            links.append(f"<mailto:{self.mailto}?subject=unsubscribe>")
        return {"List-Unsubscribe": ", ".join(links), "List-Unsubscribe-Post": ONE_CLICK}

    def unsubscribe(self, token: str) -> str:
        """Verify the token and suppress its address for its account and kind; raises
        InvalidTokenError / ExpiredTokenError. "unsubscribed" for a first and a repeated click."""
        claim = read_token([self.secret()], token, self.clock.now())
        if self.suppressions is not None:
            added = self.suppressions.add(
                SuppressionEntry(
                    account_id=claim.account_id,
                    address_hash=claim.address_hash,
                    reason=SuppressionReason.UNSUBSCRIBE,
                    source=f"unsubscribe:{claim.delivery_key}",
                    at=iso(self.clock.now()),
                    scope=claim.kind,
                )
            )
            self.telemetry.count("unsubscribed" if added else "unsubscribe_repeated")
            self.telemetry.log("unsubscribe", delivery_key=claim.delivery_key, first=added)
        return "unsubscribed"
