"""Alarms, their SNS topic and the operations dashboard.

Alarms: the age of the oldest message of every work queue against the SLO; any message in any DLQ;
errors of the dispatcher tick and of the dispatch workers; our own configuration holding a channel
(``configuration_hold``); reminders eligible but not enqueued (``oldest_due_age_seconds``); a row
the dispatcher or watchdog skipped because it cannot read it (``bad_row``); an endpoint held longer
than its SLO (``endpoint_held_seconds``, issue 16: emitted by each failed probe).
The custom metrics are Powertools EMF metrics in namespace ``Reminders`` with the default
``service=reminders`` dimension; counters may carry one more dimension (``channel``, ``reason``).
CloudWatch matches dimension sets exactly, so the configuration-hold alarm sums the service-only
series and the per-channel ones (metric math), and the dashboard's counters sum every series of a
metric name (``SEARCH``).
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import METRICS_NAMESPACE, POWERTOOLS_SERVICE_NAME
from .nag import acknowledge
from .queues import Queues
from .settings import Settings

PERIOD = Duration.minutes(1)
#: Outcome counters of the delivery ledger shown side by side on the dashboard.
OUTCOME_METRICS = [
    "delivered",
    "retry_scheduled",
    "dead_lettered",
    "duplicate_suppressed",
    "stale_skipped",
    "lease_expired",
]


CHANNELS = ("email", "webhook")


def reminders_metric(
    name: str, statistic: str, label: str | None = None, **dimensions: str
) -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": POWERTOOLS_SERVICE_NAME, **dimensions},
        statistic=statistic,
        period=PERIOD,
        label=label,
    )


def per_channel_sum(name: str, label: str) -> cloudwatch.MathExpression:
    """Sum of ``name`` over its service-only series and its per-channel series (alarmable)."""
    using: dict[str, cloudwatch.IMetric] = {"total": reminders_metric(name, "Sum")}
    for channel in CHANNELS:
        using[channel] = reminders_metric(name, "Sum", channel=channel)
    return cloudwatch.MathExpression(
        expression=" + ".join(f"FILL({key}, 0)" for key in using),
        using_metrics=using,
        period=PERIOD,
        label=label,
    )


def search_sum(name: str) -> cloudwatch.MathExpression:
    """Dashboard-only: the sum of every dimension combination of a ``Reminders`` metric."""
    query = f'Namespace="{METRICS_NAMESPACE}" MetricName="{name}"'
    return cloudwatch.MathExpression(
        expression=f"SUM(SEARCH('{query}', 'Sum', {int(PERIOD.to_seconds())}))",
        using_metrics={},
        period=PERIOD,
        label=name,
    )


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        queues: Queues,
        functions: dict[str, lambda_.Function],
        alarmed_functions: Sequence[str],
        extra_dlqs: dict[str, sqs.Queue] | None = None,
        failure_queues: dict[str, tuple[sqs.Queue, str]] | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "AlarmTopic", display_name="Reminders alarms", enforce_ssl=True)
        acknowledge(
            self.topic,
            "AwsSolutions-SNS2",
            "Alarm notifications carry alarm names and metric values only, no reminder data; CloudWatch "
            "cannot publish to a topic encrypted with the AWS managed SNS key and a customer managed key "
            "would cost more than the data it protects.",
        )
        # The topic policy (written for enforce_ssl) replaces SNS's default one, so it must let
        # CloudWatch alarms of this account publish.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarms",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": Stack.of(self).account},
                    "ArnLike": {
                        "aws:SourceArn": Stack.of(self).format_arn(
                            service="cloudwatch",
                            resource="alarm",
                            resource_name="*",
                            arn_format=ArnFormat.COLON_RESOURCE_NAME,
                        )
                    },
                },
            )
        )
        if settings.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarm_email))
        self.alarms: list[cloudwatch.Alarm] = []
        slo = settings.oldest_message_slo_seconds

        for name, pair in queues.all.items():
            self._alarm(
                f"{name}QueueOldestMessageAge",
                pair.queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum"),
                threshold=slo,
                evaluation_periods=2,
                description=f"Oldest message in the {name.lower()} queue is older than the {slo} s SLO",
            )
            self._alarm(
                f"{name}DLQDepth",
                pair.dlq.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                threshold=0,
                description=f"Messages in the {name.lower()} DLQ: list them with `reminders dlq list`",
            )
        for name, dlq in (extra_dlqs or {}).items():
            self._alarm(
                f"{name}DLQDepth",
                dlq.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                threshold=0,
                description=f"{name}: records the stream mapping gave up on (retries exhausted)",
            )
        # Queues that hold events a function never processed (issue 24 item 6), each alarmed with
        # its own description (what lands there and how to re-feed it).
        for name, (queue, description) in (failure_queues or {}).items():
            self._alarm(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                threshold=0,
                description=description,
            )
        for name in alarmed_functions:
            self._alarm(
                f"{name}Errors",
                functions[name].metric_errors(period=PERIOD, statistic="Sum"),
                threshold=0,
                description=f"{name} failed",
            )
        self._alarm(
            "ConfigurationHold",
            per_channel_sum("configuration_hold", "configuration holds"),
            threshold=0,
            description="A channel is held by our own configuration (secret, SES sending, sandbox)",
        )
        self._alarm(
            "EligibleNotEnqueued",
            reminders_metric("oldest_due_age_seconds", "Maximum"),
            threshold=slo,
            evaluation_periods=2,
            description=f"A due reminder has waited more than {slo} s without being enqueued",
        )
        self._alarm(
            "BadRow",
            reminders_metric("bad_row", "Sum"),
            threshold=0,
            description=(
                "The dispatcher or watchdog skipped a row it cannot read: find the reminder id in the"
                " `bad_row` log lines of the dispatch worker"
            ),
        )
        held_slo = settings.endpoint_held_slo_seconds
        self._alarm(
            "EndpointHeldTooLong",
            reminders_metric("endpoint_held_seconds", "Maximum"),
            threshold=held_slo,
            description=(
                f"An endpoint has been held (down, probed) for more than {held_slo} s: find it with"
                " `reminders endpoints list --state held`"
            ),
        )
        held_queues = {f"{n}DLQ": q for n, q in (extra_dlqs or {}).items()}
        held_queues.update({n: q for n, (q, _) in (failure_queues or {}).items()})
        self.dashboard = self._dashboard(settings, queues, functions, held_queues)

    def _alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        evaluation_periods: int = 1,
    ) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        alarm.add_ok_action(cw_actions.SnsAction(self.topic))
        self.alarms.append(alarm)
        return alarm

    def _dashboard(
        self,
        settings: Settings,
        queues: Queues,
        functions: dict[str, lambda_.Function],
        held_queues: dict[str, sqs.Queue],
    ) -> cloudwatch.Dashboard:
        pairs = queues.all
        slo_line = cloudwatch.HorizontalAnnotation(value=settings.oldest_message_slo_seconds, label="SLO")
        dashboard = cloudwatch.Dashboard(self, "Dashboard", default_interval=Duration.hours(3))
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Queue depth (visible)",
                left=[
                    p.queue.metric_approximate_number_of_messages_visible(period=PERIOD, label=n)
                    for n, p in pairs.items()
                ],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Oldest message age (s)",
                left=[
                    p.queue.metric_approximate_age_of_oldest_message(
                        period=PERIOD, statistic="Maximum", label=n
                    )
                    for n, p in pairs.items()
                ],
                left_annotations=[slo_line],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="DLQ depth",
                left=[
                    p.dlq.metric_approximate_number_of_messages_visible(period=PERIOD, label=f"{n}DLQ")
                    for n, p in pairs.items()
                ]
                + [
                    q.metric_approximate_number_of_messages_visible(period=PERIOD, label=n)
                    for n, q in held_queues.items()
                ],
                width=8,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Delivery outcomes (count)",
                left=[search_sum(name) for name in OUTCOME_METRICS],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Schedule-to-send lateness (s)",
                left=[
                    reminders_metric("schedule_to_send_lateness_seconds", "p50", "p50"),
                    reminders_metric("schedule_to_send_lateness_seconds", "p99", "p99"),
                ],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Eligible not enqueued / configuration holds",
                left=[reminders_metric("oldest_due_age_seconds", "Maximum", "oldest due age (s)")],
                right=[per_channel_sum("configuration_hold", "configuration holds")],
                left_annotations=[slo_line],
                width=8,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Lambda errors",
                left=[f.metric_errors(period=PERIOD, statistic="Sum", label=n) for n, f in functions.items()],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda duration p99 (ms)",
                left=[
                    f.metric_duration(period=PERIOD, statistic="p99", label=n) for n, f in functions.items()
                ],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="Lambda throttles",
                left=[
                    f.metric_throttles(period=PERIOD, statistic="Sum", label=n) for n, f in functions.items()
                ],
                width=8,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Endpoint health: transitions (by state) / longest hold (s)",
                left=[
                    cloudwatch.MathExpression(
                        expression=(
                            f'SUM(SEARCH(\'Namespace="{METRICS_NAMESPACE}" MetricName="endpoint_transition"'
                            f" state=\"{state}\"', 'Sum', {int(PERIOD.to_seconds())}))"
                        ),
                        using_metrics={},
                        period=PERIOD,
                        label=f"to {state}",
                    )
                    for state in ("held", "active", "disabled")
                ],
                right=[reminders_metric("endpoint_held_seconds", "Maximum", "held for (s)")],
                width=12,
            ),
        )
        return dashboard
