"""The single DynamoDB table: reminder rows, the per-channel delivery ledger and the due index."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from .nag import acknowledge

#: The due index. Partition key ``gpk`` = "<minute bucket YYYYMMDDHHMM>#<shard 000..N-1>": a minute's
#: reminders spread over N partitions, so no single partition is hot; sort key ``gsk`` =
#: "<account tag><due ISO>#<reminder id hex>" (domain/schedule.py ``index_sk``): inside a minute an
#: account's entries are one key range, so its preview reads only its own (issue 28 item 1) at no
#: write cost; the dispatcher and the watchdog read whole minutes.
DUE_INDEX_NAME = "due"
DUE_INDEX_PROJECTED_ATTRIBUTES = ["rid", "v", "chs", "w"]  # reminder id, version, channels, watch flag
#: The TTL attribute (epoch seconds): written by the codec (functions/reminders/domain/retention.py).
#: Two letters, not "expires_at": a delivered item must stay under one write unit.
TTL_ATTRIBUTE = "xp"
#: The sparse attention index (the support desk's listing). Partition ``nx`` = account id, sort ``nxs``
#: = "<dead_letter|held|retryable>#<due ISO>#<reminder id>": both exist only while a delivery needs a
#: person, so a reminder delivered at its first attempt is never written to it. Keys only: the
#: listing reads the state, due time and id from the sort key.
ATTENTION_INDEX_NAME = "attention"
#: checkov's CKV_AWS_119 (a table under an AWS-owned key), accepted by default: the reason, recorded
#: in the template (checkov reads ``Metadata.checkov.skip``) and in docs/deploying.md ("Encryption at rest").
AWS_OWNED_KEY_ACCEPTANCE = (
    "Encrypted at rest with DynamoDB's AWS-owned key by default: the secrets in the table (endpoint "
    "signing secrets) are already sealed under the customer-managed EndpointKey and addresses in the "
    "suppression list are keyed hashes; a customer-managed table key (context "
    "reminders:tableCustomerKey=true) adds key-policy control, CloudTrail per use and crypto-shredding "
    "for about $1 a month plus KMS requests, and every function's role then needs the key."
)


#: Provisioned capacity (issue 32): the target utilization of auto scaling, as the bench prices it
#: (functions/reminders_ops/bench/sim/cost.py PROVISIONED_UTILIZATION).
PROVISIONED_UTILIZATION_PERCENT = 70


class RemindersTable(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        customer_key: bool = False,
        provisioned: tuple[int, int] | None = None,
    ) -> None:
        """``provisioned`` (min, max units per dimension): provisioned capacity with target-tracking
        auto scaling on the table and both indexes (issue 32); None: on-demand (the default)."""
        super().__init__(scope, construct_id)
        low = provisioned[0] if provisioned else None
        # Issue 24 item 8 (CKV_AWS_119): a customer-managed key as an option (rotated yearly, kept
        # when the stack is deleted: the retained table needs it), else the acceptance recorded.
        self.key = (
            kms.Key(
                self,
                "TableKey",
                description="Encryption at rest of the reminders table (reminder rows, ledger, lists)",
                enable_key_rotation=True,
                removal_policy=RemovalPolicy.RETAIN,
            )
            if customer_key
            else None
        )
        self.table = dynamodb.Table(
            self,
            "RemindersTable",
            partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PROVISIONED
            if provisioned
            else dynamodb.BillingMode.PAY_PER_REQUEST,
            read_capacity=low,
            write_capacity=low,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            # Receiver receipts (issue 19) are processed from the stream (ReceiptsFunction's mapping
            # filters it to new RCPT# items); operational events (issue 16) diff each reminder and
            # endpoint health item's old and new image (OpEventsFunction). Lambda's reads of a table
            # stream are not billed, whatever the view.
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # Reminder intents and the delivery ledger are the system of record: never delete them
            # together with the stack.
            removal_policy=RemovalPolicy.RETAIN,
            encryption=dynamodb.TableEncryption.CUSTOMER_MANAGED if self.key else None,
            encryption_key=self.key,
        )
        if self.key is None:
            cfn_table = self.table.node.default_child
            assert isinstance(cfn_table, dynamodb.CfnTable)
            cfn_table.add_metadata(
                "checkov", {"skip": [{"id": "CKV_AWS_119", "comment": AWS_OWNED_KEY_ACCEPTANCE}]}
            )
        self.table.add_global_secondary_index(
            index_name=DUE_INDEX_NAME,
            partition_key=dynamodb.Attribute(name="gpk", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="gsk", type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.INCLUDE,
            non_key_attributes=DUE_INDEX_PROJECTED_ATTRIBUTES,
            read_capacity=low,
            write_capacity=low,
        )
        self.table.add_global_secondary_index(
            index_name=ATTENTION_INDEX_NAME,
            partition_key=dynamodb.Attribute(name="nx", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="nxs", type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
            read_capacity=low,
            write_capacity=low,
        )
        if provisioned:
            self._auto_scale(*provisioned)

    def _auto_scale(self, low: int, high: int) -> None:
        """Target tracking at ``PROVISIONED_UTILIZATION`` on the table's and each index's reads and
        writes (the utilization the bench's provisioned what-if prices)."""
        for scaling in (
            self.table.auto_scale_read_capacity(min_capacity=low, max_capacity=high),
            self.table.auto_scale_write_capacity(min_capacity=low, max_capacity=high),
        ):
            scaling.scale_on_utilization(target_utilization_percent=PROVISIONED_UTILIZATION_PERCENT)
        for index in (DUE_INDEX_NAME, ATTENTION_INDEX_NAME):
            for scaling in (
                self.table.auto_scale_global_secondary_index_read_capacity(
                    index, min_capacity=low, max_capacity=high
                ),
                self.table.auto_scale_global_secondary_index_write_capacity(
                    index, min_capacity=low, max_capacity=high
                ),
            ):
                scaling.scale_on_utilization(target_utilization_percent=PROVISIONED_UTILIZATION_PERCENT)

    def grant_read_write(self, function: lambda_.Function) -> None:
        """``grant_read_write_data`` for one function; covers its indexes (``<table>/index/*``)."""
        self.table.grant_read_write_data(function)
        stack = Stack.of(self)
        logical_id = stack.resolve(stack.get_logical_id(self.table.node.default_child))  # type: ignore[arg-type]
        acknowledge(
            function.role if function.role is not None else function,
            f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/index/*]",
            "Reads go through the table's own due index (GSI); grant_read_write_data covers the "
            "table's indexes as <table>/index/*, a wildcard that names no other table.",
        )
        self._acknowledge_key_actions(function)

    def _acknowledge_key_actions(self, function: lambda_.Function) -> None:
        """CDK's grants on a table's customer-managed key use KMS's action wildcards."""
        if self.key is None:
            return
        for action in ("kms:GenerateDataKey*", "kms:ReEncrypt*"):
            acknowledge(
                function.role if function.role is not None else function,
                f"AwsSolutions-IAM5[Action::{action}]",
                "The table's customer-managed key (reminders:tableCustomerKey) as DynamoDB uses it "
                "for reads and writes (CDK's table grant); on that one key only.",
            )

    def grant_partitions(
        self, function: lambda_.Function, *, actions: Sequence[str], key_prefixes: Sequence[str]
    ) -> None:
        """``actions`` on the items whose partition key starts with one of ``key_prefixes`` only
        (issue 24 item 8): the table's ARN (no index, no stream) under a ``dynamodb:LeadingKeys``
        condition. ``ForAllValues`` holds vacuously for a request naming no key (a Scan), so the key
        must be present too (``Null: false``). IAM, not moto, enforces it: the template tests read it."""
        if self.key is not None:  # the table's customer-managed key, as grant_read_write_data gives it
            self.key.grant_encrypt_decrypt(function)
            self._acknowledge_key_actions(function)
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=[f"dynamodb:{a}" for a in actions],
                resources=[self.table.table_arn],
                conditions={
                    "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{p}*" for p in key_prefixes]},
                    "Null": {"dynamodb:LeadingKeys": "false"},
                },
            )
        )
