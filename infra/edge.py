"""The optional public edge (issue 24 item 7; context ``reminders:publicEdge``, off by default):
CloudFront in front of the HTTP API with a WAF web ACL whose rate-based rule blocks one client
(by source IP) past ``reminders:edgeRatePer5Minutes`` requests in WAF's sliding 5 minutes.

Why: an HTTP API's route limits are shared by every caller (HTTP APIs have no usage plans or
per-client throttling, and a WAF ACL cannot attach to an HTTP API stage), so one anonymous client
could otherwise spend the whole budget of the public routes. With the edge on, the unsubscribe
links in emails use the distribution's domain, and receivers are told its receipts URL.
What it cannot stop: a caller that uses the API's execute-api URL directly still meets only the
route limits (the API has no way to refuse requests that did not come through CloudFront without
an authorizer); a distributed flood from many IPs is bounded by the route limits and the public
function's reserved concurrency, not by this rule. A ``CLOUDFRONT``-scope web ACL exists only in
us-east-1: the stack must be deployed there for this option.
"""

from __future__ import annotations

from aws_cdk import Fn, Stack
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from .nag import acknowledge

RULE_NAME = "RateLimitPerClientIp"


class PublicEdge(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, api_endpoint: str, rate_per_5_minutes: int
    ) -> None:
        super().__init__(scope, construct_id)
        region = Stack.of(self).region
        if region != "us-east-1":
            raise ValueError(
                f"reminders:publicEdge needs the stack in us-east-1 (a CLOUDFRONT web ACL exists only "
                f"there), not {region}"
            )
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="CLOUDFRONT",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility("RemindersEdge"),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name=RULE_NAME,
                    priority=0,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=rate_per_5_minutes, aggregate_key_type="IP"
                        )
                    ),
                    visibility_config=_visibility(RULE_NAME),
                )
            ],
        )
        api_domain = Fn.select(2, Fn.split("/", api_endpoint))  # https://<id>.execute-api.<region>...
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="Reminders public routes (unsubscribe, receipts) behind a per-client WAF rate rule",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.HttpOrigin(
                    api_domain, protocol_policy=cloudfront.OriginProtocolPolicy.HTTPS_ONLY
                ),
                allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                # Everything but Host (API Gateway routes by its own host name); no caching at all.
                origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
            ),
            web_acl_id=self.web_acl.attr_arn,
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR1",
            "Unsubscribe links and receivers are worldwide: no geo restriction.",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR3",
            "The API's own access log (JSON, every request) records these requests; CloudFront "
            "standard logs would need a bucket holding the same lines again.",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR4",
            "The default CloudFront certificate (no custom domain here) allows only TLSv1 as its "
            "minimum; with a custom domain the distribution's TLS_V1_2_2021 policy applies.",
        )

    @property
    def url(self) -> str:
        return f"https://{self.distribution.distribution_domain_name}"


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
    )
