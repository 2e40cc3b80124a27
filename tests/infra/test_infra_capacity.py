"""Issue 32 item 1: the delivery consumers' memory size (chosen by the bench's curve) and provisioned
capacity as a deployment option (context ``reminders:tableBilling=provisioned``): the table and both
indexes in provisioned mode with target-tracking auto scaling; on-demand stays the default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import STACK, Synthesized, cdk_json_context

DELIVERY_FUNCTIONS = (
    "reminders.handlers.delivery.email_handler",
    "reminders.handlers.delivery.webhook_handler",
)


def _functions(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        r["Properties"]["Handler"]: r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function" and "Handler" in r.get("Properties", {})
    }


def test_delivery_consumers_run_at_the_measured_memory_size_when_deployed(synthesized: Synthesized) -> None:
    fns = _functions(synthesized.resources)
    for handler in DELIVERY_FUNCTIONS:
        assert fns[handler]["MemorySize"] == 192, handler
    assert fns["reminders.handlers.api.handler"]["MemorySize"] == 256  # the others keep theirs


def test_table_is_on_demand_when_no_billing_option_is_given(synthesized: Synthesized) -> None:
    (table,) = [r for r in synthesized.resources.values() if r["Type"] == "AWS::DynamoDB::Table"]
    assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
    assert not [
        r for r in synthesized.resources.values() if r["Type"].startswith("AWS::ApplicationAutoScaling")
    ]


@pytest.fixture(scope="module")
def provisioned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from infra.app import build_app

    out: Path = tmp_path_factory.mktemp("provisioned")
    app, _ = build_app({**cdk_json_context(), "reminders:tableBilling": "provisioned"}, str(out), nag=True)
    app.synth()
    resources: dict[str, Any] = json.loads((out / f"{STACK}.template.json").read_text())["Resources"]
    return resources


def test_table_and_indexes_are_provisioned_and_autoscaled_when_the_option_is_chosen(
    provisioned: dict[str, Any],
) -> None:
    (table,) = [r for r in provisioned.values() if r["Type"] == "AWS::DynamoDB::Table"]
    props = table["Properties"]
    assert props.get("BillingMode", "PROVISIONED") == "PROVISIONED"  # CloudFormation's default mode
    assert props["ProvisionedThroughput"]["ReadCapacityUnits"] >= 1
    indexes = {g["IndexName"]: g for g in props["GlobalSecondaryIndexes"]}
    assert set(indexes) == {"due", "attention"}
    for g in indexes.values():
        assert g["ProvisionedThroughput"]["WriteCapacityUnits"] >= 1
    targets = [
        r["Properties"]
        for r in provisioned.values()
        if r["Type"] == "AWS::ApplicationAutoScaling::ScalableTarget"
    ]
    dims = sorted(
        (t["ScalableDimension"], "index" if "/index/" in json.dumps(t["ResourceId"]) else "table")
        for t in targets
    )
    # read and write of the table and of each of its two indexes
    assert dims == sorted(
        [(f"dynamodb:{k}:{rw}CapacityUnits", k) for k in ("table",) for rw in ("Read", "Write")]
        + [(f"dynamodb:index:{rw}CapacityUnits", "index") for _ in range(2) for rw in ("Read", "Write")]
    )
    for t in targets:
        assert t["MinCapacity"] >= 1 and t["MaxCapacity"] > t["MinCapacity"]
    policies = [
        r["Properties"]
        for r in provisioned.values()
        if r["Type"] == "AWS::ApplicationAutoScaling::ScalingPolicy"
    ]
    assert len(policies) == 6
    for pol in policies:
        cfg = pol["TargetTrackingScalingPolicyConfiguration"]
        assert cfg["TargetValue"] == 70  # the utilization the cost what-if prices
