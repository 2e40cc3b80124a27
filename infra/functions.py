"""What every Lambda function of the stack shares: code, runtime, layers, environment, logs, role.

The capability constructs (``api``, ``dispatcher``, ``delivery``) create their functions through
``FunctionFactory.function`` so that all five are built the same way.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, CfnResource, Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct
from reminders.domain.timing import DEFAULT_TIMING

from .email import EmailChannel
from .nag import acknowledge
from .queues import Queues
from .settings import Settings
from .table import RemindersTable
from .webhook import WebhookChannel

ROOT = Path(__file__).resolve().parent.parent
CODE_DIR = ROOT / "functions"
DEPS_LAYER_DIR = ROOT / "layers" / "build" / "deps"
#: Not part of the Lambda bundle: the operator CLI / local runtime and packaging leftovers.
CODE_EXCLUDES = [
    "reminders_ops",
    "reminders_ops/**",
    "**/__pycache__",
    "**/*.pyc",
    "*.egg-info",
    "*.egg-info/**",
]

RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64
MEMORY_SIZE_MB = 256
#: The delivery consumers' size, chosen by the bench's curve (issue 32: ``--only memory``): the
#: cheapest size that holds the consumer's peak resident set 1.5 times and spends no lateness (a
#: 128 MB consumer's cold starts are twice as long). Mostly waiting on the store and the provider,
#: it pays per GB-second for waiting; our CPU per record runs 1,769/192 times a full vCPU's time.
DELIVERY_MEMORY_SIZE_MB = 192
#: The alias every invoker calls when SnapStart is on (``Settings.snap_start``).
SNAP_START_ALIAS = "live"
API_TIMEOUT = Duration.seconds(10)
DISPATCHER_TIMEOUT = Duration.seconds(30)
DISPATCH_WORKER_TIMEOUT = Duration.seconds(60)
#: From the one formula of the delivery's time budgets (attempt deadline, lease, store retries).
DELIVERY_TIMEOUT = Duration.seconds(DEFAULT_TIMING.function_timeout_seconds)
LOG_RETENTION = logs.RetentionDays.ONE_MONTH

#: The account that publishes the public Powertools for AWS Lambda (Python) layers.
POWERTOOLS_LAYER_ACCOUNT = "017000801446"
POWERTOOLS_SERVICE_NAME = "reminders"
METRICS_NAMESPACE = "Reminders"


def powertools_layer_arn(version: int) -> str:
    return (
        f"arn:aws:lambda:{Aws.REGION}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
        f"AWSLambdaPowertoolsPythonV3-python313-arm64:{version}"
    )


def shared_environment(
    settings: Settings,
    table: RemindersTable,
    queues: Queues,
    email: EmailChannel,
    webhook: WebhookChannel,
) -> dict[str, str]:
    """The one environment every function gets, resolved from the stack's resources."""
    return {
        "TABLE_NAME": table.table.table_name,
        "EMAIL_QUEUE_URL": queues.email.queue.queue_url,
        "WEBHOOK_QUEUE_URL": queues.webhook.queue.queue_url,
        "EMAIL_DLQ_URL": queues.email.dlq.queue_url,
        "WEBHOOK_DLQ_URL": queues.webhook.dlq.queue_url,
        "DISPATCH_QUEUE_URL": queues.dispatch.queue.queue_url,
        "DUE_SHARDS": str(settings.due_shards),
        "MAX_RECEIVE_COUNT": str(queues.email.max_receive_count),
        "WEBHOOK_SECRET_ARN": webhook.signing_secret.secret_arn,
        "ENDPOINT_KEY_ID": webhook.endpoint_key.key_arn,
        "SES_CONFIGURATION_SET": email.configuration_set.configuration_set_name,
        "UNSUBSCRIBE_SECRET_ARN": email.unsubscribe_secret.secret_arn,
        "ADDRESS_HASH_SECRET_ARN": email.address_hash_secret.secret_arn,
        "EMAIL_FROM": settings.email_from,
        "POWERTOOLS_SERVICE_NAME": POWERTOOLS_SERVICE_NAME,
        "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
        "POWERTOOLS_LOG_LEVEL": "INFO",
        # Traces carry ids only (handlers/tracing.py): never a response or an error's content.
        "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
        "POWERTOOLS_TRACER_CAPTURE_ERROR": "false",
        "DELIVERY_MAX_CONCURRENCY": str(settings.delivery_max_concurrency),
        **({"BOOTSTRAP_PRINCIPAL": settings.bootstrap_principal} if settings.bootstrap_principal else {}),
        "RETENTION_DAYS": str(settings.retention_days),
        **(
            {
                "SIGNING_CUTOVER_AT": settings.signing_cutover_at,
                "STACK_SIGNATURE_DAYS": str(settings.stack_signature_days),
            }
            if settings.signing_cutover_at
            else {}
        ),
        **(
            {"DESTINATION_RATE_PER_SECOND": str(settings.destination_rate_per_second)}
            if settings.destination_rate_per_second > 0
            else {}
        ),
    }


class FunctionFactory(Construct):
    """Holds the shared code asset and layers; builds functions in the caller's scope."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: Settings, environment: dict[str, str]
    ) -> None:
        super().__init__(scope, construct_id)
        if not (DEPS_LAYER_DIR / "python").is_dir():
            raise FileNotFoundError(f"{DEPS_LAYER_DIR}/python is missing: run `make layer` before synthesis")
        self.environment = dict(environment)
        self.snap_start = settings.snap_start
        self._aliases: dict[str, lambda_.Alias] = {}
        self.code = lambda_.Code.from_asset(str(CODE_DIR), exclude=CODE_EXCLUDES)
        self.layers: list[lambda_.ILayerVersion] = [
            lambda_.LayerVersion.from_layer_version_arn(
                self, "PowertoolsLayer", powertools_layer_arn(settings.powertools_layer_version)
            ),
            lambda_.LayerVersion(
                self,
                "DepsLayer",
                code=lambda_.Code.from_asset(str(DEPS_LAYER_DIR)),
                compatible_runtimes=[RUNTIME],
                compatible_architectures=[ARCHITECTURE],
                description="Dependencies of functions/reminders beyond the runtime and Powertools",
            ),
        ]

    def function(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: str,
        timeout: Duration,
        description: str,
        extra_environment: dict[str, str] | None = None,
        reserved_concurrency: int | None = None,
        memory_size: int = MEMORY_SIZE_MB,
    ) -> lambda_.Function:
        log_group = logs.LogGroup(
            scope,
            f"{construct_id}Logs",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        # An explicit role instead of the default one: it writes only to its own log group, where
        # the default role would carry the AWSLambdaBasicExecutionRole managed policy.
        role = iam.Role(
            scope,
            f"{construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Execution role of {construct_id}",
        )
        log_group.grant_write(role)
        function = lambda_.Function(
            scope,
            construct_id,
            description=description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=handler,
            code=self.code,
            layers=self.layers,
            timeout=timeout,
            memory_size=memory_size,
            environment={**self.environment, **(extra_environment or {})},
            log_group=log_group,
            role=role,
            reserved_concurrent_executions=reserved_concurrency,
            # X-Ray active tracing (issue 31): Lambda samples (1 request/s + 5% per account by
            # default) and adds the role's xray:PutTraceSegments/PutTelemetryRecords.
            tracing=lambda_.Tracing.ACTIVE,
            # Issue 32.2 (option, off by default): Lambda snapshots each published version after its
            # init phase and resumes new environments from it; only versions and aliases use it.
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if self.snap_start else None,
        )
        if self.snap_start:
            # A new version on each deploy whose code or configuration changed; ``live`` follows it.
            self._aliases[function.node.path] = lambda_.Alias(
                scope, f"{construct_id}Live", alias_name=SNAP_START_ALIAS, version=function.current_version
            )
        # lambda.Function adds an explicit DependsOn on its role besides the Role GetAtt, which
        # cfn-lint reports as redundant (W3005); harmless, and not removable from the construct.
        cfn_function = function.node.default_child
        if isinstance(cfn_function, CfnResource):
            cfn_function.add_metadata("cfn-lint", {"config": {"ignore_checks": ["W3005"]}})
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level "
            "permission (the X-Ray service authorization reference lists only '*'); CDK adds exactly these.",
        )
        acknowledge(
            function,
            "AwsSolutions-L1",
            "Pinned to python3.13 on purpose: the public Powertools layer (python313-arm64) and the "
            "dependency layer in layers/ are built for it; the runtime moves together with them.",
        )
        return function

    def invoked(self, function: lambda_.Function) -> lambda_.IFunction:
        """What invokers call: the function's ``live`` alias with SnapStart (SnapStart serves only
        published versions and their aliases, never ``$LATEST``), else the function itself."""
        return self._aliases.get(function.node.path, function)
