"""The key of a webhook signing secret, as Standard Webhooks takes it (pure: no I/O)."""

from __future__ import annotations


def signing_key(secret: str) -> str | bytes:
    """Standard Webhooks secrets are ``whsec_<base64>``; any other string is used as raw key bytes."""
    return secret if secret.startswith("whsec_") else secret.encode()
