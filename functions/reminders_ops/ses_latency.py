"""How long an SES send event takes to reach the reconciler (SES -> EventBridge -> the ses-events
function), as the fault run models it, and why.

What AWS documents (read 2026-12-01):
- SES publishes "Email Sent" (and Delivered, Bounced, ...) to the account's default EventBridge
  bus, with delivery level *best effort*: "the service attempts to send all events to EventBridge,
  but in some rare cases an event might not be delivered" (EventBridge reference, "Amazon Simple
  Email Service events" and "Delivery level for AWS service events").
- Once on the bus, EventBridge delivers to the rule's target and, on a retriable failure (the
  function throttled or failing), retries "for 24 hours and up to 185 times with an exponential back
  off and jitter" (EventBridge user guide, "How EventBridge retries delivering events").
- AWS publishes no latency figure for SES event publishing. The Send event is emitted when SES
  accepts the request (before delivery to the recipient's MTA; SES's own example delivery
  notification shows ``processingTimeMillis`` 826 from acceptance to the recipient's server).

The model (assumptions where AWS is silent, chosen pessimistic):
- 97.9 %: the normal path, log-normal with a median of 2 s and sigma 1.0 (p99 ~ 20 s): SES's
  processing, the bus, an asynchronous Lambda invocation.
- 2 %: the first target invocation fails (throttled or a cold error) and EventBridge retries it:
  uniform between 1 minute and 1 hour (its exponential backoff's first hour).
- 0.1 %: lost ("best effort": rare).

``EVENT_DUPLICATE`` (EventBridge targets are at-least-once: the same event twice) is 1 %.
"""

from __future__ import annotations

import math
import random

NORMAL_MEDIAN_SECONDS = 2.0
NORMAL_SIGMA = 1.0
RETRIED_FRACTION = 0.02
RETRIED_SECONDS = (60.0, 3600.0)
LOST_FRACTION = 0.001
EVENT_DUPLICATE = 0.01


def send_event_delay(
    rng: random.Random, *, lost: float = LOST_FRACTION, retried: float = RETRIED_FRACTION
) -> float | None:
    """Seconds from SES's acceptance to the reconciler's invocation; None: the event never comes."""
    u = rng.random()
    if u < lost:
        return None
    if u < lost + retried:
        return rng.uniform(*RETRIED_SECONDS)
    return math.exp(math.log(NORMAL_MEDIAN_SECONDS) + NORMAL_SIGMA * rng.gauss(0.0, 1.0))


def later_than(wait_seconds: float) -> float:
    """P(the event arrives later than ``wait_seconds``, or never): the share of ambiguous sends that
    are re-sent although SES had accepted them."""
    normal = 1.0 - LOST_FRACTION - RETRIED_FRACTION
    if wait_seconds <= 0:
        return 1.0
    z = (math.log(wait_seconds) - math.log(NORMAL_MEDIAN_SECONDS)) / NORMAL_SIGMA
    normal_late = normal * 0.5 * math.erfc(z / math.sqrt(2))
    lo, hi = RETRIED_SECONDS
    retried_late = RETRIED_FRACTION * min(1.0, max(0.0, (hi - wait_seconds) / (hi - lo)))
    return LOST_FRACTION + retried_late + normal_late
