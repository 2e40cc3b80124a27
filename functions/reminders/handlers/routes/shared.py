"""What every route module shares: the base model and the field types of ids, the error body and
the OpenAPI documentation helpers (responses, links), the JSON answers, the one-object body rule
and THE tenant check (``caller()``). Nothing here registers a route."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import BaseProxyEvent, BaseRouter
from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, StringConstraints

from ... import runtime
from ...domain.errors import ValidationError
from ...domain.localtime import iso_text_only
from ...domain.tenancy import Caller

#: What a DynamoDB number holds exactly: 38 significant digits, magnitude 1e-130 .. <1e126; boto3's
#: own context starts at 1e-128 for 38 digits, so that is the floor here.
NUMBER_DIGITS = 38
NUMBER_MIN_EXPONENT = -128
NUMBER_MAX_EXPONENT = 125

Key = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,256}$")]
AccountId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,128}$")]
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,64}$")]
ReminderId = Annotated[str, StringConstraints(pattern=r"^rem_[0-9a-f]{32}$")]
EndpointId = Annotated[str, StringConstraints(pattern=r"^ep_[0-9a-f]{32}$")]
#: Every time field (body or query): ISO-8601 text with an offset; an epoch number is a 422.
Instant = Annotated[AwareDatetime, BeforeValidator(iso_text_only)]


class ApiModel(BaseModel):
    """Every model of the API: its validation schema is built when a request first needs it
    (``defer_build``), not at import (~2 ms a model, 29 models, on every cold start of a function
    whose first request uses two or three of them)."""

    model_config = ConfigDict(defer_build=True)


def valid_text(v: str, what: str) -> str:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (a lone surrogate)") from None
    return v


def number_problem(v: int | float) -> str | None:
    """Why DynamoDB cannot store ``v`` exactly (or boto3 refuses to send it), or None."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN and Infinity cannot be stored"
    if isinstance(v, int):
        if len(str(abs(v))) > NUMBER_DIGITS:
            return f"integers have at most {NUMBER_DIGITS} digits"
        return None
    d = Decimal(str(v))  # what the store writes
    if d == 0:
        return None
    if len(d.as_tuple().digits) > NUMBER_DIGITS:  # pragma: no cover - a float's repr has <= 17
        return f"at most {NUMBER_DIGITS} significant digits"
    if not NUMBER_MIN_EXPONENT <= d.adjusted() <= NUMBER_MAX_EXPONENT:
        return "numbers must lie between 1e-128 and 1e126 in magnitude (or be 0)"
    if _answered_digits(d) > NUMBER_DIGITS:
        return (
            f"DynamoDB would return it as {_answered_digits(d)} digits and boto3 reads at most "
            f"{NUMBER_DIGITS} (e.g. 1e38 and above with few significant digits: send it as text)"
        )
    return None


def _answered_digits(d: Decimal) -> int:
    """The significant digits of ``d`` as DynamoDB answers it: the full digit expansion without
    trailing fractional zeros (``1e125`` → 126 digits, ``1.5e-5`` → ``0.000015``: 2). boto3's
    decoder refuses more than 38 (issue 25 item 13)."""
    _, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    kept = len(digits)
    while kept > 1 and digits[kept - 1] == 0:
        kept, exponent = kept - 1, exponent + 1
    return kept + max(exponent, 0)


class ErrorView(ApiModel):
    """Every 4xx/5xx body: ``message`` always; ``error`` (a code) and ``field`` where they apply; for
    schema errors ``detail`` lists each problem. A route the API does not have answers as API Gateway
    does: ``{"message": "Not Found"}``."""

    message: str
    error: str | None = None
    field: str | None = None
    detail: list[dict[str, Any]] | None = None


UNSUPPORTED_MEDIA_TEXT = "a body in a media type other than application/json, naming it; nothing was written"
#: What most routes answer these statuses with (a route words its own where it differs).
ERROR_TEXTS = {
    403: "the caller's IAM principal may not act for this account",
    415: UNSUPPORTED_MEDIA_TEXT,
    422: "invalid input, naming the field; nothing was written",
}


def responses(texts: dict[int, str], *statuses: int, ok: Any, error: Any = ErrorView) -> dict[int, Any]:
    """OpenAPI responses: each of ``statuses`` (default: those ``texts`` names), in that order, with
    its text (``texts``, else ERROR_TEXTS) and its body's model: ``ok`` for a 2xx, else ``error``."""
    return {
        code: {
            "description": texts.get(code) or ERROR_TEXTS[code],
            "content": {"application/json": {"model": ok if code < 300 else error}},
        }
        for code in statuses or tuple(texts)
    }


# OpenAPI links (issue 24 item 10): what an answer's ids open next, so a stateful client (the
# suite's stateful fuzz run) follows create -> read -> correct -> delete.
def op_ref(path: str, method: str) -> str:
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def links_to(path: str, parameters: dict[str, str], *methods: str, **more: dict[str, Any]) -> dict[str, Any]:
    """A link per ``method`` of ``path``, its ``parameters`` runtime expressions of this answer."""
    links = {
        method + re.sub(r"[^A-Za-z0-9]+", "_", path).rstrip("_"): {
            "operationRef": op_ref(path, method),
            "parameters": parameters,
        }
        for method in methods
    }
    return links | more


def linked(responses: dict[int, Any], links: dict[str, Any], *statuses: int) -> dict[int, Any]:
    for status in statuses:
        responses[status]["links"] = links
    return responses


def as_json(status: int, body: BaseModel | dict[str, Any], etag: int | None = None) -> Response[Any]:
    payload = body.model_dump(mode="json", exclude_none=False) if isinstance(body, BaseModel) else body
    headers = {"ETag": f'"{etag}"'} if etag is not None else None
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(payload),
        headers=headers,
    )


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response[Any]:
    body: dict[str, Any] = {"error": code, "message": message}
    if field:
        body["field"] = field
    return Response(status, content_types.APPLICATION_JSON, json.dumps(body))


def caller() -> Caller:
    """THE tenant check: the caller of this request (its IAM principal, from the HTTP API's
    ``requestContext.authorizer.iam.userArn``) and the accounts it may act for. Every IAM route calls
    it once: ``caller().require(account_id)`` before acting for an account (403), and
    ``caller().check_visible(resource.account_id, what)`` / ``visible=caller().sees`` for a resource
    read by id (another account's reads as absent: 404)."""
    event = current_event().raw_event
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    iam = authorizer.get("iam") or {} if isinstance(authorizer, dict) else {}
    arn = iam.get("userArn") if isinstance(iam, dict) else None
    return runtime.tenancy().caller(arn if isinstance(arn, str) and arn else None)


def one_object_body() -> None:
    """Powertools' validation takes the first element of a JSON array as the body model (its list
    normalisation for multi-value parameters), silently dropping the rest: a body is one object."""
    if not isinstance(current_event().json_body, dict):
        raise ValidationError("body", "must be a single JSON object")


def current_event() -> BaseProxyEvent:
    """The request being resolved: Powertools keeps it on ``BaseRouter`` for the resolver and every
    Router it includes."""
    return BaseRouter.current_event
