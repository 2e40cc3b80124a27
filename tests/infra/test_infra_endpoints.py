"""The endpoints' customer-managed KMS key and who may use it (issue 15)."""

from __future__ import annotations

from typing import Any

from tests.infra.conftest import Synthesized
from tests.infra.test_infra_template import allowed, arn_of, policy_statements, props


def test_endpoint_key_is_customer_managed_rotated_and_retained(
    synthesized: Synthesized, template: Any
) -> None:
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    keys = [r for r in synthesized.resources.values() if r["Type"] == "AWS::KMS::Key"]
    assert len(keys) == 1 and keys[0]["DeletionPolicy"] == "Retain"


def test_api_and_the_webhook_consumer_make_data_keys_and_no_other_function_opens_them(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    key = arn_of(logical_ids["EndpointKey"])
    api = policy_statements(synthesized, logical_ids["ApiFunction"])
    assert allowed(api, "kms:GenerateDataKey", key) and allowed(api, "kms:Decrypt", key)
    # Issue 24: the consumer makes an account's implicit endpoint at its first bare-URL send.
    hook = policy_statements(synthesized, logical_ids["WebhookDeliveryFunction"])
    assert allowed(hook, "kms:Decrypt", key) and allowed(hook, "kms:GenerateDataKey", key)
    email = policy_statements(synthesized, logical_ids["EmailDeliveryFunction"])
    assert not allowed(email, "kms:Decrypt", key)


def test_every_function_is_told_the_endpoint_key(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    env = props(synthesized, logical_ids["ApiFunction"])["Environment"]["Variables"]
    assert env["ENDPOINT_KEY_ID"] == arn_of(logical_ids["EndpointKey"])


def test_email_consumer_may_read_the_ses_sending_quota(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    email = policy_statements(synthesized, logical_ids["EmailDeliveryFunction"])
    assert allowed(email, "ses:GetAccount", "*")
    hook = policy_statements(synthesized, logical_ids["WebhookDeliveryFunction"])
    assert not allowed(hook, "ses:GetAccount", "*")
