"""Issue 24 item 9: SES's account-level suppression list is shared by every tenant of the AWS
account (one tenant's hard bounce would stop every other tenant's mail to that address), so the
reminders' configuration set turns it off; the per-account list (checked before every send) is the
suppression that holds."""

from __future__ import annotations

from typing import Any


def test_the_configuration_set_does_not_apply_ses_account_level_suppression(template: Any) -> None:
    template.resource_count_is("AWS::SES::ConfigurationSet", 1)
    template.has_resource_properties(
        "AWS::SES::ConfigurationSet", {"SuppressionOptions": {"SuppressedReasons": []}}
    )
