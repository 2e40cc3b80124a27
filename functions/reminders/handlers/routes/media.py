"""Request media types (issue 24 item 10): an operation with a body takes the media types its
OpenAPI document lists; any other is a 415 naming it, before Powertools parses the body."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types

from .shared import error_response


def media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _path_pattern(path: str) -> re.Pattern[str]:
    """A documented path as it matches a request's: each ``{parameter}`` is one segment."""
    segments = (
        "[^/]+" if seg.startswith("{") and seg.endswith("}") else re.escape(seg) for seg in path.split("/")
    )
    return re.compile("^" + "/".join(segments) + "$")


@functools.cache
def _body_operations(document: str) -> tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]:
    """Each documented operation that takes a body: its method, its path as a pattern (a parameter
    is one segment) and the media types its ``requestBody`` lists. Built from the OpenAPI document
    on the first request that sends a body in another media type (never on the usual path)."""
    doc = json.loads(document)
    return tuple(
        (
            method.upper(),
            _path_pattern(path),
            frozenset(media_type(m) for m in op["requestBody"].get("content", {})),
        )
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if isinstance(op, dict) and "requestBody" in op
    )


def refuse_unsupported_media(
    document: Callable[[], str], event: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An operation with a body takes the media types its document lists (application/json, in
    any case, any parameters; no content-type is taken as JSON): any other is a 415 naming it,
    before Powertools parses the body (it would parse form and multipart bodies, and raise a 500
    on a multipart type without a boundary). Returns the event to resolve (its JSON content type
    spelled as Powertools matches it) and the refusal, if any. ``document``: the API's OpenAPI
    document (JSON), which lists the operations."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    raw = str(headers.get("content-type") or "").strip()
    media = media_type(raw)
    if not raw or (
        raw.startswith(content_types.APPLICATION_JSON) and media == content_types.APPLICATION_JSON
    ):
        return event, None
    http = (event.get("requestContext") or {}).get("http") or {}
    method, path = str(http.get("method") or "").upper(), str(event.get("rawPath") or "")
    for op_method, pattern, taken in _body_operations(document()):
        if op_method == method and pattern.match(path):
            if media in taken:  # e.g. Application/JSON: as Powertools' parser spells it
                rest = raw.split(";", 1)[1:]
                fixed = ";".join([media, *rest])
                return {**event, "headers": {**headers, "content-type": fixed}}, None
            response = unsupported_media(media, sorted(taken))
            return event, {
                "statusCode": response.status_code,
                "headers": {"Content-Type": content_types.APPLICATION_JSON},
                "body": response.body,
                "isBase64Encoded": False,
                "cookies": [],
            }
    return event, None


def unsupported_media(media: str, taken: list[str]) -> Response[Any]:
    shown = media if len(media) <= 100 else media[:100] + "…"
    return error_response(
        415,
        "unsupported_media_type",
        f"content-type {shown or '(none)'} is not accepted: the body must be {' or '.join(taken)}",
        "content-type",
    )
