"""The HTTP API (API Gateway v2, payload format 2.0) in front of ApiFunction.

The reminder endpoints require IAM (SigV4) authorization; ``/health`` and ``/openapi.json`` are
public. Access logs go to their own log group as JSON lines.

The public routes that act on stored data — one-click unsubscribe and receivers' receipts — run in
PublicFunction (issue 24 item 8): the same resolver (``reminders.handlers.public`` composes the
API's), a role that reaches only the partitions those routes use (``dynamodb:LeadingKeys``), its
own reserved concurrency. ``/openapi.json`` (served by ApiFunction) still lists every route.
"""

from __future__ import annotations

import json

import jsii
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_logs as logs
from constructs import Construct

from .functions import API_TIMEOUT, LOG_RETENTION, FunctionFactory
from .nag import acknowledge
from .queues import Queues
from .settings import Settings
from .table import RemindersTable
from .webhook import WebhookChannel

GET, POST, PATCH, DELETE, PUT = (
    apigwv2.HttpMethod.GET,
    apigwv2.HttpMethod.POST,
    apigwv2.HttpMethod.PATCH,
    apigwv2.HttpMethod.DELETE,
    apigwv2.HttpMethod.PUT,
)
IAM_ROUTES: list[tuple[str, list[apigwv2.HttpMethod]]] = [
    ("/reminders", [POST, GET]),
    ("/reminders/{id}", [GET, PATCH, DELETE]),
    ("/endpoints", [POST]),
    ("/endpoints/{id}", [GET, PATCH, DELETE]),
    ("/endpoints/{id}/rotate-secret", [POST]),
    ("/endpoints/{id}/enable", [POST]),
    ("/endpoints/{id}/disable", [POST]),
    ("/suppressions", [GET]),
    ("/suppressions/{address_hash}", [DELETE]),
    ("/accounts/{account_id}/event-endpoint", [PUT, GET, DELETE]),  # issue 16: operational events
    # issue 30: an account's email templates
    ("/templates/{template_id}/versions", [GET]),
    ("/templates/{template_id}/versions/{version}", [PUT, GET]),
    ("/templates/{template_id}/versions/{version}/retire", [POST]),
    ("/templates/{template_id}/versions/{version}/preview", [POST]),
]
#: Public on purpose, each with the reason its nag acknowledgement states.
PUBLIC_ROUTES: list[tuple[str, list[apigwv2.HttpMethod], str]] = [
    ("/health", [GET], "a liveness probe for monitors and operators; it returns no reminder data"),
    ("/openapi.json", [GET], "the published API description for clients; it returns no reminder data"),
    (
        "/unsubscribe/{token}",
        [POST],
        "RFC 8058 one-click unsubscribe: mail clients POST without credentials; the HMAC-signed token "
        "is the authorization, and the answer reveals nothing about the address",
    ),
    (
        "/inbound/receiver",
        [POST],
        "receivers post signed receipts (Standard Webhooks): the signature under the endpoint's secret "
        "is the authorization, verified before anything is written",
    ),
]
#: The public routes served by PublicFunction (``reminders.handlers.public.ROUTES``).
PUBLIC_FUNCTION_ROUTES = {"/unsubscribe/{token}", "/inbound/receiver"}
#: What those routes touch, by the table's key prefixes (the adapters' docstrings): a receipt reads
#: its reminder (``R#``), the endpoint it was sent through and the deployment signing key its secret
#: may be derived from (``E#``) and writes the receipt
#: (``RCPT#``); an unsubscribe writes the account's suppression entry (``SUP#``). Nothing else: not
#: the grants (``P#``), the controls, the limiter, the due index.
PUBLIC_READS = ("GetItem",), ("R#", "E#")
PUBLIC_WRITES = ("PutItem",), ("RCPT#", "SUP#")
#: HTTP API access log line (JSON). Carries who called (the IAM principal) and what happened; never
#: a request or response body.
ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "ip": "$context.identity.sourceIp",
    "caller": "$context.identity.caller",
    "userArn": "$context.identity.userArn",
    "routeKey": "$context.routeKey",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
    "latencyMs": "$context.responseLatency",
    "integrationLatencyMs": "$context.integrationLatency",
    "integrationError": "$context.integrationErrorMessage",
}


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogSettings:
    """``IAccessLogSettings`` is a jsii interface, not a struct: Python implements it."""

    def __init__(self, destination: apigwv2.IAccessLogDestination, log_format: apigw.AccessLogFormat) -> None:
        self._destination = destination
        self._format = log_format

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw.AccessLogFormat:
        return self._format


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        factory: FunctionFactory,
        table: RemindersTable,
        queues: Queues,
        settings: Settings,
        webhook: WebhookChannel,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = factory.function(
            self,
            "ApiFunction",
            handler="reminders.handlers.api.handler",
            timeout=API_TIMEOUT,
            description="Reminder intents: create, get, list, reschedule, cancel (HTTP API v2)",
            reserved_concurrency=settings.api_reserved_concurrency or None,
        )
        table.grant_read_write(self.function)
        webhook.grant_endpoint_secrets(self.function, create=True)
        for queue in (queues.email.queue, queues.webhook.queue):
            queue.grant_send_messages(self.function)
        self.public_function = factory.function(
            self,
            "PublicFunction",
            handler="reminders.handlers.public.handler",
            timeout=API_TIMEOUT,
            description="Public routes: one-click unsubscribe and receivers' signed receipts",
            reserved_concurrency=settings.public_reserved_concurrency or None,
        )
        for actions, prefixes in (PUBLIC_READS, PUBLIC_WRITES):
            table.grant_partitions(self.public_function, actions=actions, key_prefixes=prefixes)
        webhook.grant_endpoint_secrets(self.public_function, create=False)  # receipts: the endpoint's secret

        self.http_api = apigwv2.HttpApi(
            self,
            "HttpApi",
            description="Reminders API",
            create_default_stage=False,
        )
        access_logs = logs.LogGroup(self, "AccessLogs", retention=LOG_RETENTION)
        self.stage = apigwv2.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            stage_name="$default",
            auto_deploy=True,
            access_log_settings=_AccessLogSettings(
                apigwv2.LogGroupLogDestination(access_logs),
                apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
            ),
        )
        integration = integrations.HttpLambdaIntegration("ApiIntegration", factory.invoked(self.function))
        public_integration = integrations.HttpLambdaIntegration(
            "PublicIntegration", factory.invoked(self.public_function)
        )
        iam_authorizer = authorizers.HttpIamAuthorizer()
        routes: list[apigwv2.HttpRoute] = []
        for path, methods in IAM_ROUTES:
            routes += self.http_api.add_routes(
                path=path, methods=methods, integration=integration, authorizer=iam_authorizer
            )
        public_keys = []
        for path, methods, why_public in PUBLIC_ROUTES:
            target = public_integration if path in PUBLIC_FUNCTION_ROUTES else integration
            for route in self.http_api.add_routes(path=path, methods=methods, integration=target):
                verbs = "/".join(m.value for m in methods)
                acknowledge(
                    route, "AwsSolutions-APIG4", f"{verbs} {path} needs no authorization: {why_public}."
                )
                routes.append(route)
            public_keys += [f"{method.value} {path}" for method in methods]
        self._throttle(settings, routes, public_keys)

    def _throttle(self, settings: Settings, routes: list[apigwv2.HttpRoute], public_keys: list[str]) -> None:
        """Every route its own limit: the stage default for the IAM routes, one for each public
        route (receipts and unsubscribes sized for the documented scale, /health and /openapi.json
        tight), so a flood of one route spends only that route's budget."""
        stage = self.stage.node.default_child
        assert isinstance(stage, apigwv2.CfnStage)
        stage.default_route_settings = apigwv2.CfnStage.RouteSettingsProperty(
            throttling_rate_limit=settings.api_rate_per_second,
            throttling_burst_limit=settings.api_burst,
        )
        own = {  # the routes tenants' traffic uses (issue 24 item 7: sized in settings.py)
            "POST /inbound/receiver": (settings.receipts_rate_per_second, settings.receipts_burst),
            "POST /unsubscribe/{token}": (settings.unsubscribe_rate_per_second, settings.unsubscribe_burst),
        }
        tight = (settings.public_route_rate_per_second, settings.public_route_burst)
        stage.route_settings = {
            key: {
                "ThrottlingRateLimit": own.get(key, tight)[0],
                "ThrottlingBurstLimit": own.get(key, tight)[1],
            }
            for key in public_keys
        }
        # RouteSettings name routes by key: the stage may only be created after them.
        for route in routes:
            self.stage.node.add_dependency(route)

    @property
    def url(self) -> str:
        url = self.stage.url
        assert url is not None
        return url
