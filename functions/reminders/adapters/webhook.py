"""Webhook provider: HTTPS POST signed per Standard Webhooks, to the address the SSRF guard checked.

``webhook-id`` is the delivery's stable idempotency key, identical on every retry, so a receiver
that deduplicates by it turns our at-least-once attempts into one accepted send. No redirects are
followed, the response body is read up to a small cap and never stored.

Every attempt has a *total* deadline (connect + send + status line + headers + body): the socket
timeout alone is per read, so a receiver trickling one byte at a time could hold a send for as
long as it liked. Whatever the receiver answers, the result is an outcome class: classification
never raises (a header with a non-ASCII digit, a huge Retry-After, a malformed status line).
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import io
import socket
import ssl
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from standardwebhooks.webhooks import Webhook

from ..domain.endpoints import Endpoint, is_endpoint_id
from ..domain.errors import ConfigurationError
from ..domain.models import Delivery, Reminder
from ..domain.ports import Clock, Rendered
from ..domain.retry import (
    STEERING_ABORT,
    STEERING_DISABLE,
    STEERING_HEADER,
    OutcomeClass,
    SendResult,
    classify_http,
    parse_retry_after,
)
from .destinations import DestinationPolicy, DestinationUnresolvedError, InvalidDestinationError, Target
from .secrets import signing_key
from .tracing import SendTrace, untraced

MAX_RESPONSE_BYTES = 4096
CONNECT_TIMEOUT_SECONDS = 3.0
USER_AGENT = "reminders-webhooks/1"


class AttemptDeadlineError(TimeoutError):
    """The attempt's total deadline passed (whatever the per-read timeout)."""


class _DeadlineReader(io.RawIOBase):
    """The response stream of one attempt: every read gets the time left until the deadline."""

    def __init__(self, sock: Any, deadline: float) -> None:
        self._sock = sock
        # A file of the socket (as http.client's own), so that the connection's close() after a
        # "Connection: close" answer leaves the socket open until the response is read.
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise AttemptDeadlineError("attempt deadline passed")
        self._sock.settimeout(left)
        n: int | None = self._raw.readinto(buffer)
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock: Any, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float, connect_timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address
        self._connect_timeout = connect_timeout

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self._connect_timeout)
        self.sock.settimeout(self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(
        self, target: Target, timeout: float, connect_timeout: float, context: ssl.SSLContext
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._address = target.address
        self._connect_timeout = connect_timeout
        self._ctx = context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self._connect_timeout)
        sock.settimeout(self.timeout)
        self.sock = self._ctx.wrap_socket(sock, server_hostname=self.host)


class WebhookSender:
    def __init__(
        self,
        *,
        policy: DestinationPolicy,
        secret: Callable[[], str],
        clock: Clock,
        timeout_seconds: float = 10.0,
        connect_timeout_seconds: float = CONNECT_TIMEOUT_SECONDS,
        ssl_context: ssl.SSLContext | None = None,
        endpoints: Callable[[str, str], Endpoint | None] | None = None,
        stack_signature_until: datetime | None = None,
        trace: SendTrace = untraced,
    ) -> None:
        """``endpoints(account_id, destination)``: the endpoint a delivery sends through (the one
        it names, or its account's implicit endpoint for a bare URL's origin), or None: a webhook
        is then not sent (CONFIGURATION, a hold), never signed with a secret of no one account.

        ``secret``: the stack's former channel secret (issue 24). Until ``stack_signature_until``
        (the migration window), a bare-URL webhook (the only kind it ever signed) also carries its
        signature, beside its account's, so receivers that verified with it can switch.
        A sender built without ``endpoints`` (the adapter's own tests) signs with it alone.

        ``trace``: the send's trace (adapters/tracing.py): its ``traceparent`` goes on every webhook."""
        self.policy = policy
        self.endpoints = endpoints
        self.secret = secret
        self.stack_signature_until = stack_signature_until
        self.clock = clock
        self.timeout = timeout_seconds
        self.connect_timeout = min(connect_timeout_seconds, timeout_seconds)
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.trace = trace

    def send(self, delivery: Delivery, reminder: Reminder, rendered: Rendered) -> SendResult:
        fp = rendered.fingerprint
        try:
            endpoint = self.endpoints(reminder.account_id, delivery.destination) if self.endpoints else None
        except ConfigurationError as exc:  # the key to open its secrets is unavailable: hold
            return SendResult(OutcomeClass.CONFIGURATION, detail=str(exc), fingerprint=fp)
        except Exception as exc:  # the endpoint store did not answer now: transient
            return SendResult(
                OutcomeClass.CONNECTION,
                detail=f"endpoint_lookup:{type(exc).__name__}",
                fingerprint=fp,
                ours=True,  # our store, not the receiver: never counts against its health
            )
        url = delivery.destination
        if endpoint is None and self.endpoints is not None and not is_endpoint_id(url):
            return SendResult(OutcomeClass.CONFIGURATION, detail="no signing endpoint", fingerprint=fp)
        if is_endpoint_id(delivery.destination):
            if endpoint is None:
                return SendResult(
                    OutcomeClass.INVALID_DESTINATION, detail="endpoint_not_found", fingerprint=fp
                )
            url = endpoint.url
        if endpoint is not None and not endpoint.enabled:
            return SendResult(OutcomeClass.INVALID_DESTINATION, detail="endpoint_disabled", fingerprint=fp)
        try:
            # The SSRF guard at every send (DNS changes), and the checked address is the one used.
            target = self.policy.resolve(url)
        except DestinationUnresolvedError:
            # A resolver failure now (EAI_AGAIN, a DNS blip): transient. Only an SSRF refusal or a
            # malformed URL is permanent.
            return SendResult(OutcomeClass.CONNECTION, detail="dns_unresolved", fingerprint=fp, ours=True)
        except InvalidDestinationError as exc:
            return SendResult(OutcomeClass.INVALID_DESTINATION, detail=exc.message, fingerprint=fp)
        try:
            now = self.clock.now()
            secrets = endpoint.signing_secrets(now) if endpoint is not None else [self.secret()]
            if not secrets:
                raise ConfigurationError("endpoint has no signing secret")
            if (
                endpoint is not None
                and not is_endpoint_id(delivery.destination)
                and self.stack_signature_until is not None
                and now < self.stack_signature_until
            ):
                secrets = [*secrets, self.secret()]  # the migration window: the stack's as well
            # Every secret that signs now (a rotation's overlap: old and new), space-separated.
            signature = " ".join(
                Webhook(signing_key(s)).sign(delivery.key, now, rendered.body) for s in secrets
            )
        except ConfigurationError as exc:
            return SendResult(OutcomeClass.CONFIGURATION, detail=str(exc), fingerprint=fp)
        except Exception as exc:  # a malformed secret: our configuration, not the reminder's fault
            return SendResult(
                OutcomeClass.CONFIGURATION,
                detail=f"bad signing secret ({type(exc).__name__})",
                fingerprint=fp,
            )
        body = rendered.body.encode()
        headers = {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "webhook-id": delivery.key,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature,
            "idempotency-key": delivery.key,
        }
        deadline = time.monotonic() + self.timeout
        conn: http.client.HTTPConnection
        if target.scheme == "https":
            conn = _PinnedHTTPSConnection(target, self.timeout, self.connect_timeout, self.ssl_context)
        else:
            conn = _PinnedHTTPConnection(target, self.timeout, self.connect_timeout)
        conn.response_class = functools.partial(_DeadlineResponse, deadline=deadline)  # type: ignore[assignment]
        sent = False
        span = self.trace(reminder.id, delivery.key)  # ids only: the send's X-Ray subsegment
        headers["traceparent"] = span.__enter__()
        try:
            conn.connect()
            sock = getattr(conn, "sock", None)
            if sock is not None:  # sending the request counts against the same deadline
                sock.settimeout(max(0.001, deadline - time.monotonic()))
            conn.request("POST", target.path, body=body, headers=headers)
            sent = True
            resp = conn.getresponse()
            data = resp.read(MAX_RESPONSE_BYTES + 1)
            status = resp.status
            retry_after = resp.getheader("retry-after")
            receipt = resp.getheader("webhook-receipt") or resp.getheader("x-request-id")
            steering = resp.getheader(STEERING_HEADER)
        except TimeoutError:
            outcome = OutcomeClass.TIMEOUT if sent else OutcomeClass.CONNECTION
            return SendResult(
                outcome, detail="timeout_after_send" if sent else "connect_timeout", fingerprint=fp
            )
        except ssl.SSLError as exc:
            return SendResult(OutcomeClass.CONNECTION, detail=f"tls:{type(exc).__name__}", fingerprint=fp)
        except (ConnectionError, OSError, http.client.HTTPException, ValueError, UnicodeError) as exc:
            # After the request left, anything may have happened at the receiver: ambiguous.
            outcome = OutcomeClass.TIMEOUT if sent else OutcomeClass.CONNECTION
            return SendResult(outcome, detail=type(exc).__name__, fingerprint=fp)
        finally:
            conn.close()
            span.__exit__(None, None, None)  # an exception here is classified, never recorded
        try:
            result = self._classify(delivery, status, data, retry_after, receipt, fp)
            return _steered(result, steering)
        except Exception as exc:  # never: but a provider answer must never crash the consumer
            return SendResult(
                OutcomeClass.TRANSIENT, status, detail=f"unclassifiable:{type(exc).__name__}", fingerprint=fp
            )

    def _classify(
        self,
        delivery: Delivery,
        status: int,
        data: bytes,
        retry_after: str | None,
        receipt: str | None,
        fp: str,
    ) -> SendResult:
        meta = {"status": str(status), "response_bytes": str(min(len(data), MAX_RESPONSE_BYTES))}
        if 300 <= status < 400:
            return SendResult(
                OutcomeClass.PERMANENT, status, detail="redirect_refused", fingerprint=fp, metadata=meta
            )
        if status == 409:
            # Standard Webhooks receivers answer 409 to a webhook-id they have already accepted.
            return SendResult(
                OutcomeClass.RECONCILED_CONFLICT,
                status,
                receipt=receipt or f"conflict:{delivery.key}",
                detail="receiver_confirmed_duplicate",
                fingerprint=fp,
                metadata=meta,
            )
        outcome = classify_http(status)
        return SendResult(
            outcome,
            status,
            receipt=(receipt or f"http-{status}:{hashlib.sha256(data).hexdigest()[:12]}")
            if outcome is OutcomeClass.ACCEPTED
            else None,
            retry_after_seconds=parse_retry_after(retry_after, self.clock.now()) if status == 429 else None,
            detail=f"http_{status}",
            fingerprint=fp,
            metadata=meta,
        )


def _steered(result: SendResult, header: str | None) -> SendResult:
    """The receiver's ``webhook-delivery`` instruction, honoured on a non-2xx answer only (a 2xx is
    an acceptance whatever else it says). Unknown values, any case or bytes, are ignored."""
    if (
        not header
        or result.outcome is OutcomeClass.ACCEPTED
        or result.outcome is OutcomeClass.RECONCILED_CONFLICT
    ):
        return result
    word = header.strip().lower()
    if word not in (STEERING_ABORT, STEERING_DISABLE):
        return result
    return SendResult(
        result.outcome,
        result.status,
        receipt=result.receipt,
        retry_after_seconds=result.retry_after_seconds,
        detail=f"receiver_{word}" if word == STEERING_ABORT else result.detail,
        fingerprint=result.fingerprint,
        metadata={**result.metadata, "steering": word},
        steering=word,
    )
