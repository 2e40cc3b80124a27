"""Issue 19: the suppression list's address hashes are keyed by their own secret, read only by the
functions that check, add or remove entries (email consumer, API, SES events), named in every
function's environment, and exported for the operator CLI."""

from __future__ import annotations

from typing import Any

from .conftest import Synthesized


def _readers(synthesized: Synthesized, secret: str) -> set[str]:
    readers: set[str] = set()
    for r in synthesized.resources.values():
        if r["Type"] != "AWS::IAM::Policy":
            continue
        for st in r["Properties"]["PolicyDocument"]["Statement"]:
            if "secretsmanager:GetSecretValue" in st["Action"] and st["Resource"] == {"Ref": secret}:
                readers |= {role["Ref"] for role in r["Properties"]["Roles"]}
    return readers


def test_address_hash_key_is_its_own_retained_secret_read_by_the_suppression_users_only(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    secret = logical_ids["AddressHashSecret"]
    resource: dict[str, Any] = synthesized.resources[secret]
    assert resource["Type"] == "AWS::SecretsManager::Secret"
    assert resource["DeletionPolicy"] == "Retain"
    assert _readers(synthesized, secret) == {
        logical_ids["EmailDeliveryFunctionRole"],
        logical_ids["ApiFunctionRole"],
        logical_ids["SesEventsFunctionRole"],
    }
    outputs = synthesized.template["Outputs"]
    assert outputs["AddressHashSecretArn"]["Value"] == {"Ref": secret}
