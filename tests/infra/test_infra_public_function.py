"""Issue 24 items 7 and 8: the public, unauthenticated routes.

Item 8 (least privilege): ``POST /unsubscribe/{token}`` and ``POST /inbound/receiver`` run in a
function of their own whose role reaches only the partitions those routes use, by
``dynamodb:LeadingKeys`` conditions — cdk-nag has no such rule and moto ignores IAM conditions, so
the template is read here, and the handler's real DynamoDB calls (recorded on moto) are checked
against the statements the template grants.

Item 7 (availability): the public routes' limits fit the documented scale, the public function has
reserved concurrency, and a CloudFront + WAF rate-based rule is a template option (off by default).
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest

from .conftest import Synthesized
from .test_infra_template import arn_of, policy_statements, props

PUBLIC_FUNCTION_ROUTES = {"POST /unsubscribe/{token}", "POST /inbound/receiver"}
#: What the two routes read and write, by key prefix of the table (see the adapters' docstrings):
#: the reminder named by a receipt (R#) and its endpoint (E#), read; the receipt (RCPT#) and the
#: suppression entry of an unsubscribe (SUP#), written.
PUBLIC_GRANTS = {
    "dynamodb:GetItem": {"R#*", "E#*"},
    "dynamodb:PutItem": {"RCPT#*", "SUP#*"},
}


def route_functions(synthesized: Synthesized) -> dict[str, tuple[str, str]]:
    """route key -> (authorization type, construct name of the integration's function)."""
    from reminders_ops.provision import Inventory

    inventory = Inventory.from_template(synthesized.template)
    return {
        r.route_key: (r.authorization_type, inventory.functions[r.function].name)
        for r in inventory.routes
        if r.function
    }


def dynamodb_statements(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def actions(s: dict[str, Any]) -> list[str]:
        return s["Action"] if isinstance(s["Action"], list) else [s["Action"]]

    return [s for s in statements if any(a.startswith("dynamodb:") for a in actions(s))]


def leading_key_patterns(statement: dict[str, Any]) -> list[str]:
    condition = statement.get("Condition") or {}
    patterns = (condition.get("ForAllValues:StringLike") or {}).get("dynamodb:LeadingKeys")
    return [patterns] if isinstance(patterns, str) else list(patterns or [])


def allows_call(statements: list[dict[str, Any]], table_arn: Any, action: str, leading: set[str]) -> bool:
    """An IAM evaluation of just what these statements use: Allow, the action, the table's ARN, and
    ``ForAllValues:StringLike`` on ``dynamodb:LeadingKeys`` with ``Null: false``."""
    for s in dynamodb_statements(statements):
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        resources = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
        if s["Effect"] != "Allow" or action not in actions or table_arn not in resources:
            continue
        patterns = leading_key_patterns(s)
        if not patterns:
            return True  # unconditioned
        if leading and all(any(fnmatch.fnmatchcase(k, p) for p in patterns) for k in leading):
            return True
    return False


def test_public_routes_run_in_their_own_function_that_reaches_only_their_partitions(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    routes = route_functions(synthesized)
    public = {routes[r][1] for r in PUBLIC_FUNCTION_ROUTES}
    assert public == {"PublicFunction"}
    for key, (auth, function) in routes.items():
        if key in PUBLIC_FUNCTION_ROUTES:
            assert auth == "NONE"
        else:  # every other route, IAM or public (health, openapi), stays with the API function
            assert function == "ApiFunction", key
    table = arn_of(logical_ids["RemindersTable"])
    statements = dynamodb_statements(policy_statements(synthesized, logical_ids["PublicFunction"]))
    granted: dict[str, set[str]] = {}
    for s in statements:
        assert s["Effect"] == "Allow"
        assert s["Resource"] == table, s  # the table only: no index, no stream
        condition = s["Condition"]
        assert set(condition) == {"ForAllValues:StringLike", "Null"}, condition
        # ForAllValues over an absent key is true: the key must be present (no Scan, no PartiQL).
        assert condition["Null"] == {"dynamodb:LeadingKeys": "false"}
        for action in s["Action"] if isinstance(s["Action"], list) else [s["Action"]]:
            granted.setdefault(action, set()).update(leading_key_patterns(s))
    assert granted == PUBLIC_GRANTS
    # Nothing else reaches the table: no other identity policy names it for this role.
    assert not allows_call(statements, table, "dynamodb:Scan", set())
    assert not allows_call(statements, table, "dynamodb:GetItem", {"P#arn:aws:iam::1:role/x"})  # grants
    assert not allows_call(statements, table, "dynamodb:PutItem", {"R#rem_0"})  # reminders: read only
    assert not allows_call(statements, table, "dynamodb:GetItem", {"SUP#acct"})  # suppression: write only
    # The API function keeps the whole table; the public one has no index and no queue.
    env = props(synthesized, logical_ids["PublicFunction"])["Environment"]["Variables"]
    assert env["TABLE_NAME"] == {"Ref": logical_ids["RemindersTable"]}


def test_the_public_handler_serves_exactly_the_routes_the_template_sends_it(synthesized: Synthesized) -> None:
    routes = route_functions(synthesized)
    sent = {k for k, (_, f) in routes.items() if f != "ApiFunction"}
    from reminders.handlers.public import ROUTES

    assert set(ROUTES) == sent == PUBLIC_FUNCTION_ROUTES


def _stage(synthesized: Synthesized) -> dict[str, Any]:
    (stage,) = [r for r in synthesized.resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage"]
    properties: dict[str, Any] = stage["Properties"]
    return properties


def test_receipts_and_unsubscribes_keep_their_documented_rate_when_one_client_floods_them(
    synthesized: Synthesized, logical_ids: dict[str, str]
) -> None:
    settings = _stage(synthesized)["RouteSettings"]
    # 1M reminders a day (the documented scale): 11.6/s on average, and receipts alone at least
    # that; the peak is sized in infra/settings.py (docs/deploying.md "Public routes").
    average = 1_000_000 / 86_400
    receipts = settings["POST /inbound/receiver"]
    assert receipts["ThrottlingRateLimit"] >= 10 * average
    assert receipts["ThrottlingBurstLimit"] >= 2 * receipts["ThrottlingRateLimit"]
    from infra.settings import DOCUMENTED_REMINDERS_PER_DAY, Settings

    assert DOCUMENTED_REMINDERS_PER_DAY == 1_000_000
    defaults = Settings(account="", region="")
    assert receipts == {
        "ThrottlingRateLimit": defaults.receipts_rate_per_second,
        "ThrottlingBurstLimit": defaults.receipts_burst,
    }
    unsubscribe = settings["POST /unsubscribe/{token}"]
    assert unsubscribe["ThrottlingRateLimit"] == defaults.unsubscribe_rate_per_second > 5
    assert unsubscribe["ThrottlingBurstLimit"] == defaults.unsubscribe_burst > 10
    # /health and /openapi.json stay tight (they serve no tenant).
    for key in ("GET /health", "GET /openapi.json"):
        assert settings[key] == {"ThrottlingRateLimit": 5.0, "ThrottlingBurstLimit": 10}
    # Reserved concurrency: a flood cannot take the account's concurrency from the delivery
    # consumers, and the routes' limits fit in it (Little's law at the function's p99 duration).
    reserved = props(synthesized, logical_ids["PublicFunction"])["ReservedConcurrentExecutions"]
    assert reserved == defaults.public_reserved_concurrency > 0
    p99_seconds = 0.2
    assert (
        reserved >= (defaults.receipts_rate_per_second + defaults.unsubscribe_rate_per_second) * p99_seconds
    )
    # No edge by default.
    kinds = {r["Type"] for r in synthesized.resources.values()}
    assert "AWS::WAFv2::WebACL" not in kinds and "AWS::CloudFront::Distribution" not in kinds


def test_a_waf_rate_rule_per_client_fronts_the_public_routes_when_the_edge_flag_is_on(tmp_path: Any) -> None:
    from infra.app import build_app

    from .conftest import STACK, cdk_json_context

    context = {**cdk_json_context(), "reminders:publicEdge": "true", "reminders:edgeRatePer5Minutes": "600"}
    app, _ = build_app(context, str(tmp_path), nag=True)
    app.synth()
    template = json.loads((tmp_path / f"{STACK}.template.json").read_text())
    resources = template["Resources"]
    (acl_id, acl), *_ = [(k, r) for k, r in resources.items() if r["Type"] == "AWS::WAFv2::WebACL"]
    assert acl["Properties"]["Scope"] == "CLOUDFRONT"
    assert acl["Properties"]["DefaultAction"] == {"Allow": {}}
    (rule,) = [r for r in acl["Properties"]["Rules"] if "RateBasedStatement" in r["Statement"]]
    assert rule["Statement"]["RateBasedStatement"]["Limit"] == 600
    assert rule["Statement"]["RateBasedStatement"]["AggregateKeyType"] == "IP"
    assert rule["Action"] == {"Block": {}}
    assert acl["Properties"]["VisibilityConfig"]["CloudWatchMetricsEnabled"] is True
    (dist,) = [
        r["Properties"]["DistributionConfig"]
        for r in resources.values()
        if r["Type"] == "AWS::CloudFront::Distribution"
    ]
    assert dist["WebACLId"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    (origin,) = dist["Origins"]
    assert "ApiEndpoint" in json.dumps(origin["DomainName"])  # the HTTP API's own execute-api host
    # POSTs pass through uncached, with the query string, and no cookies or Authorization forwarded.
    assert dist["DefaultCacheBehavior"]["AllowedMethods"] == [
        "GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"
    ]  # fmt: skip
    assert dist["DefaultCacheBehavior"]["ViewerProtocolPolicy"] == "https-only"
    # The unsubscribe links in emails go through the edge.
    (email,) = [
        r
        for r in resources.values()
        if r.get("Metadata", {}).get("aws:cdk:path", "").endswith("/EmailDeliveryFunction/Resource")
    ]
    assert "DomainName" in json.dumps(email["Properties"]["Environment"]["Variables"]["UNSUBSCRIBE_BASE_URL"])
    assert "PublicEdgeUrl" in template["Outputs"]
    # cdk-nag passed (synthesis above); cfn-lint too.
    from cfnlint.api import lint
    from cfnlint.config import ManualArgs

    assert [str(m) for m in lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))] == []


# -- the handler's real calls against the template's grants (moto ignores IAM conditions) ---------
def record_dynamodb_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    import botocore.client

    calls: list[tuple[str, dict[str, Any]]] = []
    real = botocore.client.BaseClient._make_api_call

    def recording(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            calls.append((operation_name, api_params))
        return real(self, operation_name, api_params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    return calls


def leading_keys(operation: str, params: dict[str, Any]) -> set[str]:
    """The partition key values a request names (what IAM's dynamodb:LeadingKeys holds)."""
    if operation in ("GetItem", "DeleteItem", "UpdateItem"):
        return {params["Key"]["pk"]["S"]}
    if operation == "PutItem":
        return {params["Item"]["pk"]["S"]}
    if operation == "BatchGetItem":
        return {k["pk"]["S"] for table in params["RequestItems"].values() for k in table["Keys"]}
    raise AssertionError(f"{operation}: not a call the public routes should make (extend this check)")


def test_table_key_is_aws_owned_with_the_checkov_acceptance_recorded_unless_a_customer_key_is_asked(
    synthesized: Synthesized, logical_ids: dict[str, str], tmp_path: Any
) -> None:
    """CKV_AWS_119 decided (issue 24 item 8): by default DynamoDB's AWS-owned key, the acceptance and
    its reason in the template's metadata (what checkov reads); ``reminders:tableCustomerKey=true``
    puts the table under its own rotated, retained KMS key that every function may use."""
    from infra.app import build_app
    from infra.table import AWS_OWNED_KEY_ACCEPTANCE

    from .conftest import STACK, cdk_json_context

    table = synthesized.resources[logical_ids["RemindersTable"]]
    assert "SSESpecification" not in table["Properties"]
    assert table["Metadata"]["checkov"] == {
        "skip": [{"id": "CKV_AWS_119", "comment": AWS_OWNED_KEY_ACCEPTANCE}]
    }

    app, _ = build_app({**cdk_json_context(), "reminders:tableCustomerKey": "true"}, str(tmp_path), nag=True)
    app.synth()
    resources = json.loads((tmp_path / f"{STACK}.template.json").read_text())["Resources"]

    def named(suffix: str) -> tuple[str, dict[str, Any]]:
        (found,) = [
            (k, r)
            for k, r in resources.items()
            if r.get("Metadata", {}).get("aws:cdk:path", "").endswith(suffix)
        ]
        return found

    key_id, key = named("/Table/TableKey/Resource")
    assert key["Properties"]["EnableKeyRotation"] is True and key["DeletionPolicy"] == "Retain"
    _, cmk_table = named("/Table/RemindersTable/Resource")
    assert cmk_table["Properties"]["SSESpecification"] == {
        "KMSMasterKeyId": {"Fn::GetAtt": [key_id, "Arn"]},
        "SSEEnabled": True,
        "SSEType": "KMS",
    }
    assert "checkov" not in cmk_table.get("Metadata", {})
    roles = {
        r["Properties"]["Role"]["Fn::GetAtt"][0]: r["Metadata"]["aws:cdk:path"].split("/")[-2]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function"
    }
    may_decrypt = {
        roles[role["Ref"]]
        for r in resources.values()
        if r["Type"] == "AWS::IAM::Policy"
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if "kms:Decrypt" in s["Action"] and s["Resource"] == {"Fn::GetAtt": [key_id, "Arn"]}
        for role in r["Properties"]["Roles"]
        if role["Ref"] in roles
    }
    assert may_decrypt == set(roles.values())
