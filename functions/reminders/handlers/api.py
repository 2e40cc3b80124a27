"""The HTTP API: one Powertools resolver composing a ``Router`` per resource (handlers/routes/), with
pydantic validation and one OpenAPI document. The routers are included lazily, in one order, and the
document is built once per instance: handlers/composition.py.

Domain exceptions map to HTTP here, so routes hold no try/except. Bad input gets a 4xx that names
the field; nothing is written. The tenant check every IAM route makes is ``caller()``
(routes/shared.py, beside the routes that call it: imported from here it would be an import circle).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from ..domain.errors import (
    ConfigurationError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PreconditionFailedError,
    ProducersPausedError,
    StoreConflictError,
    ValidationError,
    field_name,
)
from ..domain.receipts import ReceiptRejectedError
from ..domain.unsubscribe import ExpiredTokenError, InvalidTokenError
from ..services.endpoints import EndpointInUseError
from .composition import Composition
from .entry import entry_point
from .routes import media
from .routes.shared import caller, error_response
from .routes.shared import number_problem as _number_problem

__all__ = [
    "_number_problem",
    "app",
    "caller",
    "handler",
    "refuse_unsupported_media",
    "reset_openapi_document",
]

CONCURRENT_RETRY_AFTER_SECONDS = 1  # Retry-After of a 409 concurrent_update (a request that lost a race)

app = APIGatewayHttpResolver(enable_validation=True)

composition = Composition(app, title="Reminders API", version="1")
refuse_unsupported_media = composition.refuse_unsupported_media  # the public function's guard too
reset_openapi_document = composition.reset_openapi_document


@app.not_found
def _route_not_found(exc: Exception) -> Response[Any]:
    """As API Gateway HTTP APIs answer a route they do not have."""
    return Response(404, content_types.APPLICATION_JSON, json.dumps({"message": "Not Found"}))


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@app.get("/openapi.json")
def openapi() -> Response[Any]:
    return Response(200, content_types.APPLICATION_JSON, composition.openapi_document())


#: The domain errors whose answer is fixed: status, error code, the field it names (if any).
FIXED_ANSWERS: dict[type[Exception], tuple[int, str, str | None]] = {
    ForbiddenError: (403, "forbidden", None),
    NotFoundError: (404, "not_found", None),
    PreconditionFailedError: (412, "precondition_failed", "If-Match"),
    InvalidTokenError: (400, "invalid_token", "token"),
    ExpiredTokenError: (410, "expired_token", "token"),
    ConfigurationError: (503, "unavailable", None),  # our own configuration (a signing secret): never a 500
    ProducersPausedError: (503, "producers_paused", None),
}


def _fixed_answer(status: int, code: str, field: str | None, exc: Exception) -> Response[Any]:
    return error_response(status, code, str(exc), field)


for _exc, (_status, _code, _field) in FIXED_ANSWERS.items():
    app.exception_handler(_exc)(functools.partial(_fixed_answer, _status, _code, _field))


@app.exception_handler(ValidationError)
def _invalid(exc: ValidationError) -> Response[Any]:
    return error_response(422, "invalid", str(exc), exc.field)


@app.exception_handler(ReceiptRejectedError)
def _receipt_refused(exc: ReceiptRejectedError) -> Response[Any]:
    return error_response(exc.status, exc.code, str(exc), exc.field)


@app.exception_handler(RequestValidationError)
def _request_invalid(exc: RequestValidationError) -> Response[Any]:
    """Schema errors: every problem with its location and message (never the offending input)."""
    detail = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()
    ] or [{"loc": ["body"], "msg": "invalid request", "type": "invalid"}]
    field = field_name(detail[0]["loc"])  # as our own checks name it: no "body."/"query." (issue 28.5)
    body = {"error": "invalid", "field": field, "message": f"{field}: {detail[0]['msg']}", "detail": detail}
    return Response(422, content_types.APPLICATION_JSON, json.dumps(body))


@app.exception_handler(RequestUnsupportedContentType)
def _unsupported(exc: RequestUnsupportedContentType) -> Response[Any]:
    """Powertools' own refusal (a body route its document does not list): the same 415 shape."""
    raw = str(app.current_event.headers.get("content-type") or "")
    return media.unsupported_media(media.media_type(raw), [content_types.APPLICATION_JSON])


@app.exception_handler(UnicodeDecodeError)
def _not_text(exc: UnicodeDecodeError) -> Response[Any]:
    """A body that is not UTF-8 (API Gateway hands it over base64-encoded) is not JSON either."""
    return error_response(422, "invalid", "body: not UTF-8 encoded JSON", "body")


@app.exception_handler(RecursionError)
def _too_deep(exc: RecursionError) -> Response[Any]:
    """A JSON body nested deeper than the decoder recurses (Powertools parses it before any route
    runs): bad input, never a 5xx (review 29). The message names no part of the body."""
    return error_response(422, "invalid", "body: JSON nested too deeply", "body")


@app.exception_handler(ConflictError)
def _conflict(exc: ConflictError) -> Response[Any]:
    if isinstance(exc, EndpointInUseError):
        body = {"error": "endpoint_in_use", "message": str(exc), "open_deliveries": exc.count}
        return Response(409, content_types.APPLICATION_JSON, json.dumps(body))
    return error_response(409, exc.code, str(exc), getattr(exc, "field", None))


@app.exception_handler(StoreConflictError)
def _busy(exc: StoreConflictError) -> Response[Any]:
    """Concurrent writes kept winning (a reminder changing, transactions conflicting on an endpoint):
    transient, so the same request can be sent again (``Retry-After``), never a 5xx."""
    resp = error_response(409, "concurrent_update", str(exc))
    resp.headers["Retry-After"] = str(CONCURRENT_RETRY_AFTER_SECONDS)
    return resp


@entry_point
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    event, refused = refuse_unsupported_media(event)
    return refused if refused is not None else app.resolve(event, context)
