"""Traces (issue 31): the send's X-Ray subsegment and the W3C ``traceparent`` it hands to the receiver.

A webhook send opens a subsegment ``## webhook send`` annotated with the reminder id and the
delivery key (ids only: never the body, the destination or the account's data) and carries its
trace as ``traceparent: 00-<trace id>-<this subsegment's id>-<sampled>`` (the X-Ray trace id
``1-5759e988-bd862e3fe1be46a994272793`` is the W3C ``5759e988bd862e3fe1be46a994272793``), so the
receiver and the operator join their traces. Without tracing (outside Lambda, tracing disabled, or
an unsampled request) a webhook still carries a well-formed ``traceparent``: a fresh trace, flag 00.

DynamoDB and the dispatcher break propagation between a create and its send: both carry the
``reminder_id`` annotation, which X-Ray's filter expressions join on (``annotation.reminder_id``).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Callable, Iterator
from typing import Any

_XRAY_TRACE = re.compile(r"^1-([0-9a-f]{8})-([0-9a-f]{24})$")
_SPAN = re.compile(r"^[0-9a-f]{16}$")
SEND_SUBSEGMENT = "## webhook send"

#: ``trace(reminder_id, delivery_key)``: a context around one send that yields its ``traceparent``.
SendTrace = Callable[[str, str], contextlib.AbstractContextManager[str]]


def traceparent(trace_id: str | None = None, span_id: str | None = None, sampled: bool = False) -> str:
    """A W3C traceparent of an X-Ray trace id and segment id; fresh random ids for what is missing
    or malformed (an all-zero id is invalid in W3C)."""
    m = _XRAY_TRACE.match(trace_id or "")
    trace = m.group(1) + m.group(2) if m else secrets.token_hex(16)
    span = span_id if span_id and _SPAN.match(span_id) and span_id != "0" * 16 else secrets.token_hex(8)
    if trace == "0" * 32:
        trace = secrets.token_hex(16)
    return f"00-{trace}-{span}-{'01' if sampled and m else '00'}"


@contextlib.contextmanager
def untraced(reminder_id: str, delivery_key: str) -> Iterator[str]:
    yield traceparent()


class XRaySendTrace:
    """Sends as X-Ray subsegments of the invocation's trace (Powertools Tracer's provider)."""

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer

    @contextlib.contextmanager
    def __call__(self, reminder_id: str, delivery_key: str) -> Iterator[str]:
        with self.tracer.provider.in_subsegment(name=SEND_SUBSEGMENT) as sub:
            sub.put_annotation("reminder_id", reminder_id)
            sub.put_annotation("delivery_key", delivery_key)
            yield traceparent(
                getattr(sub, "trace_id", None), getattr(sub, "id", None), bool(getattr(sub, "sampled", False))
            )


def scrubbing_emitter() -> Any:
    """The X-Ray SDK's UDP emitter, sending each segment without its exceptions' messages.

    The SDK's botocore patch records an AWS call's ClientError on the call's subsegment, message
    included, whatever Powertools' ``capture_error`` says; SES's messages name the address they
    refuse ("... failed the check ...: jane@example.com"). A trace keeps the exception's type
    (``MessageRejected``), its stack and the call's status, never its text."""
    import os

    from aws_xray_sdk.core.emitters.udp_emitter import DEFAULT_DAEMON_ADDRESS, UDPEmitter

    class ScrubbingEmitter(UDPEmitter):
        def send_entity(self, entity: Any) -> None:
            stack = [entity]
            while stack:
                node = stack.pop()
                cause = getattr(node, "cause", None)
                if isinstance(cause, dict):
                    for thrown in cause.get("exceptions") or ():
                        if getattr(thrown, "message", None):
                            thrown.message = ""  # an empty message is not serialised
                stack.extend(getattr(node, "subsegments", None) or ())
            super().send_entity(entity)

    return ScrubbingEmitter(os.environ.get("AWS_XRAY_DAEMON_ADDRESS") or DEFAULT_DAEMON_ADDRESS)
