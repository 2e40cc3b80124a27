"""What a receiver holds: the secrets its webhooks verified with (it signs its receipts with them)."""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from reminders.adapters.secrets import signing_key
from standardwebhooks.webhooks import Webhook

if TYPE_CHECKING:
    from .sim import Sim


def verified_with(sim: Sim, key: str, account: str) -> list[str]:
    """The account's secrets that verify the last webhook POSTed under ``key`` (what its receiver holds)."""
    post = next((p for p in reversed(sim.posts) if p.key == key), None)
    if post is None:
        return []
    try:
        msg_id, ts = post.headers["webhook-id"], int(post.headers["webhook-timestamp"])
        signatures = post.headers["webhook-signature"].split()
    except (KeyError, ValueError):
        return []
    at = datetime.fromtimestamp(ts, tz=UTC)
    sim.learn_keys()
    return [
        secret
        for secret, owner in sim.key_owner.items()
        if owner == account
        and any(
            hmac.compare_digest(Webhook(signing_key(secret)).sign(msg_id, at, post.body.decode()), s)
            for s in signatures
        )
    ]
