"""Deployment settings read once from CDK context (``cdk.json`` or ``-c key=value``).

Values given on the command line arrive as strings; everything is coerced here so the constructs
only ever see typed values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from constructs import Node

from .powertools import layer_version, pinned_release

PREFIX = "reminders:"
#: The scale the product documents (docs/deploying.md): the public routes' limits are sized from it.
DOCUMENTED_REMINDERS_PER_DAY = 1_000_000


@dataclass(frozen=True, slots=True)
class Settings:
    account: str
    region: str
    due_shards: int = 16
    delivery_batch_size: int = 10
    delivery_max_concurrency: int = 20
    #: maxReceiveCount of the channel queues: a backstop for poison messages, kept above what the
    #: retry policy can use (the policy, not SQS, decides retries).
    delivery_max_receive_count: int = 20
    #: maxReceiveCount of the dispatch queue (a shard message is cheap to redo).
    dispatch_max_receive_count: int = 5
    oldest_message_slo_seconds: int = 300
    #: Alarm when an endpoint stays held longer than this (issue 16; its probes keep failing).
    endpoint_held_slo_seconds: int = 3600
    email_from: str = "reminders@example.com"
    alarm_email: str = ""
    #: The public Powertools layer version: the one that ships the release pyproject.toml pins
    #: (``infra/powertools.py``); not a context value, so the layer cannot drift from the pin.
    powertools_layer_version: int = field(default_factory=lambda: layer_version(pinned_release()))
    #: Requests per second one webhook destination (host) may receive from all consumers together;
    #: 0 = no limit of ours (the receiver's 429 + Retry-After still governs).
    destination_rate_per_second: float = 0.0
    #: HTTP API throttling per route (requests per second, burst). HTTP APIs have no usage plans,
    #: and one stage-wide limit would let a flood of the public routes throttle the IAM routes.
    api_rate_per_second: float = 100.0
    api_burst: int = 200
    public_route_rate_per_second: float = 5.0  # /health and /openapi.json (they serve no tenant)
    public_route_burst: int = 10
    #: The public routes that carry tenants' traffic (issue 24 item 7), sized from the documented
    #: 1M reminders a day (11.6/s on average): a morning wave puts ~10 % of a day in one hour
    #: (28/s) and a due minute inside it ~5x that (~140/s); every webhook may get a receipt, so
    #: receipts get 200/s with a burst of 400 (a receiver flushing a batch). Unsubscribes are a
    #: small fraction of emails (< 1 %), clicked by people: 50/s, burst 100, is > 50x that peak.
    #: These are shared by all callers: the per-client limit is the edge option's WAF rule.
    receipts_rate_per_second: float = 200.0
    receipts_burst: int = 400
    unsubscribe_rate_per_second: float = 50.0
    unsubscribe_burst: int = 100
    #: CloudFront + a WAF rate-based rule per client IP in front of the API (issue 24 item 7;
    #: off by default: HTTP APIs have no per-client throttling, a WAF ACL cannot attach to one).
    #: The limit counts a client's requests over a sliding 5 minutes (WAF's window).
    public_edge: bool = False
    #: The table under a customer-managed KMS key (checkov CKV_AWS_119; issue 24 item 8); default:
    #: DynamoDB's AWS-owned key, the acceptance recorded in infra/table.py and docs/deploying.md.
    table_customer_key: bool = False
    #: Issue 32: "on-demand" (default) or "provisioned" — the table and its indexes in provisioned
    #: capacity with target-tracking auto scaling (70 % utilization) between the minimum and
    #: ``table_max_capacity`` units per dimension: cheaper for a steady load, throttled by a burst
    #: beyond what is provisioned until auto scaling catches up (docs/incoming/h32a.md).
    table_billing: str = "on-demand"
    table_min_capacity: int = 5
    table_max_capacity: int = 4000
    edge_rate_per_5_minutes: int = 3000
    #: Lambda SnapStart on every function (issue 32.2; off by default): each deploy publishes a
    #: version, an alias ``live`` points at it, and every invoker (event source mappings, API
    #: integrations, EventBridge targets) calls the alias. Needs python3.12+ (the stack's runtime is
    #: python3.13). Its gain is an unmeasured estimate and it is billed (docs/incoming/h32b.md).
    snap_start: bool = False
    #: Reserved concurrency of PublicFunction (issue 24 item 7): a flood of the public routes
    #: cannot take the account's concurrency from the delivery consumers, and they keep this much.
    #: 0 = none (an account whose concurrency limit is under 100 + this cannot reserve it).
    public_reserved_concurrency: int = 50
    #: Reserved concurrency of the API function only; 0 = none (off by default: Lambda refuses a
    #: reservation that leaves the account less than 100 unreserved).
    api_reserved_concurrency: int = 0
    #: An IAM principal ARN (a role: its sessions count too) that may act for every account: the
    #: one that grants the others (``reminders accounts grant``). Empty: none.
    bootstrap_principal: str = ""
    #: Days a terminal reminder is kept (its business key deduplicates creates until then), then the
    #: table's TTL deletes it, history included. At least 30 (one delivery-key generation).
    retention_days: int = 90
    #: One-click unsubscribe links: the public base URL (a custom domain; default: the HTTP API's
    #: own URL) and an optional mailto address for List-Unsubscribe.
    unsubscribe_base_url: str = ""
    unsubscribe_mailto: str = ""
    #: Issue 24, leaving the stack-wide webhook secret: the deploy's cut-over time (ISO 8601 with
    #: offset) and how many days after it (at most 7) webhooks through an implicit endpoint also
    #: carry the stack's signature. Empty: no window (a stack that never signed with it).
    signing_cutover_at: str = ""
    stack_signature_days: float = 7.0

    @classmethod
    def from_node(cls, node: Node) -> Settings:
        def get(name: str, default: Any = None) -> Any:
            value = node.try_get_context(PREFIX + name)
            return default if value is None else value

        account = get("account")
        region = get("region")
        if not account or not region:
            raise ValueError("context reminders:account and reminders:region are required (see cdk.json)")
        defaults = cls(account="", region="")
        return cls(
            account=str(account),
            region=str(region),
            due_shards=int(get("dueShards", defaults.due_shards)),
            delivery_batch_size=int(get("deliveryBatchSize", defaults.delivery_batch_size)),
            delivery_max_concurrency=int(get("deliveryMaxConcurrency", defaults.delivery_max_concurrency)),
            delivery_max_receive_count=int(
                get("deliveryMaxReceiveCount", defaults.delivery_max_receive_count)
            ),
            dispatch_max_receive_count=int(
                get("dispatchMaxReceiveCount", defaults.dispatch_max_receive_count)
            ),
            oldest_message_slo_seconds=int(
                get("oldestMessageSloSeconds", defaults.oldest_message_slo_seconds)
            ),
            endpoint_held_slo_seconds=int(get("endpointHeldSloSeconds", defaults.endpoint_held_slo_seconds)),
            email_from=str(get("emailFrom", defaults.email_from)),
            alarm_email=str(get("alarmEmail", defaults.alarm_email)),
            destination_rate_per_second=float(
                get("destinationRatePerSecond", defaults.destination_rate_per_second)
            ),
            api_rate_per_second=float(get("apiRatePerSecond", defaults.api_rate_per_second)),
            api_burst=int(get("apiBurst", defaults.api_burst)),
            public_route_rate_per_second=float(
                get("publicRouteRatePerSecond", defaults.public_route_rate_per_second)
            ),
            public_route_burst=int(get("publicRouteBurst", defaults.public_route_burst)),
            receipts_rate_per_second=float(get("receiptsRatePerSecond", defaults.receipts_rate_per_second)),
            receipts_burst=int(get("receiptsBurst", defaults.receipts_burst)),
            unsubscribe_rate_per_second=float(
                get("unsubscribeRatePerSecond", defaults.unsubscribe_rate_per_second)
            ),
            unsubscribe_burst=int(get("unsubscribeBurst", defaults.unsubscribe_burst)),
            public_edge=str(get("publicEdge", defaults.public_edge)).lower() in ("1", "true", "yes"),
            edge_rate_per_5_minutes=int(get("edgeRatePer5Minutes", defaults.edge_rate_per_5_minutes)),
            snap_start=str(get("snapStart", defaults.snap_start)).lower() in ("1", "true", "yes"),
            table_customer_key=str(get("tableCustomerKey", defaults.table_customer_key)).lower()
            in ("1", "true", "yes"),
            table_billing=_billing(str(get("tableBilling", defaults.table_billing))),
            table_min_capacity=int(get("tableMinCapacity", defaults.table_min_capacity)),
            table_max_capacity=int(get("tableMaxCapacity", defaults.table_max_capacity)),
            api_reserved_concurrency=int(get("apiReservedConcurrency", defaults.api_reserved_concurrency)),
            public_reserved_concurrency=int(
                get("publicReservedConcurrency", defaults.public_reserved_concurrency)
            ),
            bootstrap_principal=str(get("bootstrapPrincipal", defaults.bootstrap_principal)),
            retention_days=int(get("retentionDays", defaults.retention_days)),
            unsubscribe_base_url=str(get("unsubscribeBaseUrl", defaults.unsubscribe_base_url)),
            unsubscribe_mailto=str(get("unsubscribeMailto", defaults.unsubscribe_mailto)),
            signing_cutover_at=str(get("signingCutoverAt", defaults.signing_cutover_at)),
            stack_signature_days=min(7.0, float(get("stackSignatureDays", defaults.stack_signature_days))),
        )

    @property
    def dispatch_max_concurrency(self) -> int:
        """One concurrent dispatch worker per index shard (SQS event sources accept 2..1000)."""
        return max(2, self.due_shards)


def _billing(value: str) -> str:
    billing = value.strip().lower()
    if billing not in ("on-demand", "provisioned"):
        raise ValueError(f"context reminders:tableBilling must be on-demand or provisioned, not {value!r}")
    return billing
