"""cdk-nag (AwsSolutions) wiring.

cdk-nag 3.x is a CDK policy-validation plugin: registered with ``Validations.of(app).add_plugins``
it runs at synthesis and fails it on any finding that is not acknowledged. Acknowledgements use
CDK's own ``Validations.of(construct).acknowledge`` and always state a reason; the constructs that
cause a finding acknowledge it beside the code that causes it, through ``acknowledge`` below.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Validations
from constructs import IConstruct

RULE_PACK = "AwsSolutions"


def add_checks(app: App) -> None:
    from cdk_nag import AwsSolutionsChecks  # imported lazily: only synthesis needs it

    # The acknowledgements (rule and reason) are also written into each resource's Metadata
    # (``cdk_nag.rules_to_suppress``): the synthesized template carries its own audit trail.
    Validations.of(app).add_plugins(
        AwsSolutionsChecks(app, verbose=True, write_suppressions_to_cloud_formation=True)
    )


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one finding (``AwsSolutions-IAM5[Resource::...]`` for a single one) on ``scope``."""
    if not reason.strip():
        raise ValueError(f"an acknowledgement of {rule_id} needs a reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))
