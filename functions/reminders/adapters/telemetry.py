"""Telemetry on Powertools: EMF metrics and structured logs with a stable ``action`` key.
Callers pass ids, keys, reasons and counts, never bodies or addresses."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

_UNITS = {"Seconds": MetricUnit.Seconds, "Count": MetricUnit.Count, "Milliseconds": MetricUnit.Milliseconds}


class PowertoolsTelemetry:
    def __init__(self, logger: Logger, metrics: Metrics, namespace: str | None = None) -> None:
        self.logger = logger
        self.metrics = metrics
        self.namespace = namespace

    def count(self, name: str, value: float = 1, **dimensions: str) -> None:
        if not dimensions:
            self.metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
            return
        with single_metric(name=name, unit=MetricUnit.Count, value=value, namespace=self.namespace) as m:
            for k, v in dimensions.items():
                m.add_dimension(name=k, value=str(v))

    def observe(self, name: str, value: float, unit: str = "Seconds") -> None:
        self.metrics.add_metric(name=name, unit=_UNITS.get(unit, MetricUnit.Count), value=value)

    def log(self, action: str, **fields: Any) -> None:
        self.logger.info(action, extra={"action": action, **fields})
