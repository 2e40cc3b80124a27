"""Traces (issue 31): the send's X-Ray subsegment and the W3C ``traceparent`` it hands to the receiver.

A webhook send opens a subsegment ``## webhook send`` annotated with the reminder id and the
delivery key (ids only: never the body, the destination or the account's data) and carries its
trace as ``traceparent: 00-<trace id>-<this subsegment's id>-<sampled>`` (the X-Ray trace id
``1-5759e988-bd862e3fe1be46a994272793`` is the W3C ``5759e988bd862e3fe1be46a994272793``), so the
receiver and the operator join their traces. Without tracing (outside Lambda, tracing disabled, or
an unsampled request) a webhook still carries a well-formed ``traceparent``: a fresh trace, flag 00.

DynamoDB and the dispatcher break propagation between a create and its send: both carry the
``reminder_id`` annotation, which X-Ray's filter expressions join on (``annotation.reminder_id``).

The email send (``## email send``), a receiver's receipt merged (``## receipt merge``) and a stream
record turned into operational events (``## operational events record``) are subsegments too,
annotated with the ids they concern. An error inside one of these subsegments is recorded by its
type only (annotation ``error``, the fault flag): its message may carry data. The same holds for
what the X-Ray SDK records itself (its botocore patch records a failed AWS call's exception, and
SES's sandbox refusal names the recipient): :class:`IdsOnlyEmitter` sends every recorded exception
with its type in place of its message.
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
EMAIL_SEND_SUBSEGMENT = "## email send"
RECEIPT_SUBSEGMENT = "## receipt merge"
STREAM_RECORD_SUBSEGMENT = "## operational events record"

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


@contextlib.contextmanager
def ids_only(tracer: Any, name: str, **ids: str) -> Iterator[Any]:
    """A subsegment ``name`` of the invocation's trace annotated with ``ids`` (ids only); an error
    raised inside it is recorded by its type, never its message, and raised on."""
    failure: Exception | None = None
    with tracer.provider.in_subsegment(name=name) as sub:
        for key, value in ids.items():
            sub.put_annotation(key, value)
        try:
            yield sub
        except Exception as exc:
            failure = exc
            sub.add_fault_flag()
            sub.put_annotation("error", type(exc).__name__)
    if failure is not None:
        raise failure


class XRaySendTrace:
    """Sends as X-Ray subsegments of the invocation's trace (Powertools Tracer's provider)."""

    def __init__(self, tracer: Any, name: str = SEND_SUBSEGMENT) -> None:
        self.tracer = tracer
        self.name = name

    @contextlib.contextmanager
    def __call__(self, reminder_id: str, delivery_key: str) -> Iterator[str]:
        with ids_only(self.tracer, self.name, reminder_id=reminder_id, delivery_key=delivery_key) as sub:
            yield traceparent(
                getattr(sub, "trace_id", None), getattr(sub, "id", None), bool(getattr(sub, "sampled", False))
            )


def _without_messages(entity: Any) -> None:
    """Every exception recorded in ``entity`` and its subsegments keeps its type, id and stack (code
    locations), and its message becomes its type."""
    stack = [entity]
    while stack:
        e = stack.pop()
        cause = getattr(e, "cause", None)
        if isinstance(cause, dict):
            for throwable in cause.get("exceptions") or []:
                if getattr(throwable, "message", None) is not None:
                    throwable.message = str(getattr(throwable, "type", "error"))
        stack.extend(getattr(e, "subsegments", None) or [])


class IdsOnlyEmitter:
    """The X-Ray SDK's UDP emitter (the daemon address from ``AWS_XRAY_DAEMON_ADDRESS``, as its own),
    sending no exception message (``_without_messages``). Set on the recorder with the Tracer."""

    def __init__(self, daemon_address: str | None = None) -> None:
        from aws_xray_sdk.core.emitters.udp_emitter import UDPEmitter

        self.udp = UDPEmitter(daemon_address) if daemon_address else UDPEmitter()

    def send_entity(self, entity: Any) -> None:
        _without_messages(entity)
        self.udp.send_entity(entity)

    def set_daemon_address(self, address: str | None) -> None:
        self.udp.set_daemon_address(address)

    @property
    def ip(self) -> str:
        return str(self.udp.ip)

    @property
    def port(self) -> int:
        return int(self.udp.port)
