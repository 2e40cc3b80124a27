"""cdk-nag (AwsSolutions) runs at every synthesis: zero unacknowledged findings, and every
acknowledgement carries a reason."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Synthesized


def acknowledgements(synthesized: Synthesized) -> list[tuple[str, str, str]]:
    """(resource, rule, reason) for every acknowledgement written into the template's Metadata."""
    found = []
    for lid, resource in synthesized.resources.items():
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
            found.append((lid, rule["id"], rule.get("reason", "")))
    return found


def test_synthesis_has_no_unacknowledged_nag_findings(synthesized: Synthesized) -> None:
    assert synthesized.error is None, synthesized.error
    violations: list[Any] = []
    for report in (synthesized.report or {}).get("pluginReports", []):
        violations += report.get("violations", [])
    assert violations == []


def test_every_acknowledgement_states_a_reason(synthesized: Synthesized) -> None:
    found = acknowledgements(synthesized)
    # Only the registered AwsSolutions plugin writes this metadata: its presence also proves that
    # build_app wires cdk-nag into every synthesis.
    assert found, "the acknowledgements are expected in the template metadata"
    for lid, rule, reason in found:
        assert len(reason.split()) >= 8, f"{lid}: {rule} needs a real reason, got {reason!r}"


def test_acknowledged_rules_are_the_expected_few(synthesized: Synthesized) -> None:
    rules = {rule.split("[")[0] for _, rule, _ in acknowledgements(synthesized)}
    assert rules <= {
        "AwsSolutions-L1",  # runtime pinned with the Powertools layer
        "AwsSolutions-IAM5",  # <table>/index/* from the table grant
        "AwsSolutions-APIG4",  # /health and /openapi.json are public
        "AwsSolutions-SMG4",  # webhook signing key rotation is coordinated with receivers
        "AwsSolutions-SNS2",  # alarm topic without a customer managed key
        "AwsSolutions-SQS3",  # the receipts stream mapping's on-failure queue is itself a DLQ
    }
    iam5 = [rule for _, rule, _ in acknowledgements(synthesized) if rule.startswith("AwsSolutions-IAM5")]
    # the table's index grants, dynamodb:ListStreams (no resource-level permission) of the receipts
    # stream mapping (issue 19), and ses:GetAccount (the email consumer reads SES's sending quota: no
    # resource-level form)
    assert all(rule.endswith("/index/*]") or rule.endswith("[Resource::*]") for rule in iam5), iam5


def test_nag_checks_fail_synthesis_on_an_unacknowledged_finding(tmp_path: Any) -> None:
    """The plugin is live: an SQS queue without SSL enforcement stops synthesis."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_sqs as sqs

    from infra.nag import add_checks

    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Probe")
    sqs.Queue(stack, "Insecure", encryption=sqs.QueueEncryption.SQS_MANAGED)
    add_checks(app)
    with pytest.raises(RuntimeError, match="AwsSolutions-SQS4"):
        app.synth()
