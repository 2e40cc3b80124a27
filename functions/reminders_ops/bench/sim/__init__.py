"""A simulated AWS deployment (Lambda event sources, the per-minute rule, SQS, DynamoDB, a
rate-limited provider) on the in-memory backends and a virtual clock, running the real services."""

from .engine import SimResult, Simulation
from .model import Deployment, Latency, Prices, SimClock

__all__ = ["Deployment", "Latency", "Prices", "SimClock", "SimResult", "Simulation"]
