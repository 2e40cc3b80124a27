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
    public_route_rate_per_second: float = 5.0
    public_route_burst: int = 10
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
            api_reserved_concurrency=int(get("apiReservedConcurrency", defaults.api_reserved_concurrency)),
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
