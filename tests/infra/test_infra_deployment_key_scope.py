"""Issue 24 item 2, review: the deployment signing key's item (``E#~deployment``) under the roles'
``dynamodb:LeadingKeys`` scopes, read from the synthesized template (moto ignores IAM conditions).
The public function verifies receipts with implicit endpoints' derived secrets, so it must read that
item; it must not write it."""

from __future__ import annotations

from typing import Any

from reminders.adapters.endpoints_store import DEPLOYMENT_KEY_ID

from .test_infra_public_function import allows_call
from .test_infra_template import arn_of, policy_statements

KEY = "E#" + DEPLOYMENT_KEY_ID


def test_public_function_reads_but_never_writes_the_deployment_key_item_when_verifying_receipts(
    synthesized: Any, logical_ids: dict[str, str]
) -> None:
    statements = policy_statements(synthesized, logical_ids["PublicFunction"])
    table = arn_of(logical_ids["RemindersTable"])
    assert allows_call(statements, table, "dynamodb:GetItem", {KEY})
    for action in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"):
        assert not allows_call(statements, table, action, {KEY}), action
