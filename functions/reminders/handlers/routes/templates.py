"""``/templates``: an account's email templates (issue 30), a Powertools ``Router`` included by the
API's resolver (handlers/api.py), whose exception handlers map the domain's errors (422 naming the
field, 404, 409, 403).

A template id is the account's own name (as a business key is): every route names the account it
acts for (``account_id`` in the body or the query; 403 when the caller may not act for it), and
another account's template, named under one's own account, reads as absent (404, as a missing one).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, field_validator

from ... import runtime
from ...domain.templates import (
    MAX_HTML_SOURCE,
    MAX_LOCALE_LENGTH,
    MAX_LOCALES,
    MAX_SUBJECT_SOURCE,
    MAX_TEXT_SOURCE,
    MAX_VARIABLES,
    MAX_VERSION_NUMBER,
    TemplateVersion,
)
from .shared import AccountId, as_json, caller, one_object_body, responses

router = Router()
MAX_SAMPLE_BYTES = 4096  # as a reminder's data (handlers/api.py MAX_DATA_BYTES)

TemplateId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.\-]{1,64}$")]
VersionNumber = Annotated[int, Field(ge=1, le=MAX_VERSION_NUMBER)]
LocaleTag = Annotated[str, StringConstraints(min_length=1, max_length=MAX_LOCALE_LENGTH)]
VarTypeName = Literal["string", "integer", "decimal", "boolean", "date-time", "list"]
SampleValue = str | int | float | bool | list[str] | None


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class LocaleIn(_Model):
    subject: Annotated[str, StringConstraints(min_length=1, max_length=MAX_SUBJECT_SOURCE)]
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_SOURCE)]
    html: Annotated[str, StringConstraints(min_length=1, max_length=MAX_HTML_SOURCE)]


class PutVersion(_Model):
    """A version: per locale (BCP 47) a subject, a text and an HTML body (Jinja2, sandboxed), the
    default locale, the variables it uses with their types. Immutable once written."""

    account_id: AccountId
    default_locale: LocaleTag
    locales: dict[LocaleTag, LocaleIn] = Field(min_length=1, max_length=MAX_LOCALES)
    variables: dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], VarTypeName] = Field(
        default_factory=dict, max_length=MAX_VARIABLES
    )
    #: Webhook deliveries of reminders naming this version also carry the rendered subject and text.
    webhook_rendered: StrictBool = False


class PreviewIn(_Model):
    account_id: AccountId
    #: Sample data, bounded as a reminder's is (4,096 bytes serialized).
    data: dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], SampleValue] = Field(
        default_factory=dict
    )
    locale: LocaleTag | None = None

    @field_validator("data")
    @classmethod
    def _small(cls, v: dict[str, Any]) -> dict[str, Any]:
        size = len(json.dumps(v, separators=(",", ":")).encode("utf-8", "surrogatepass"))
        if size > MAX_SAMPLE_BYTES:
            raise ValueError(f"serialized data is {size} bytes; the limit is {MAX_SAMPLE_BYTES}")
        return v


class VersionView(_Model):
    account_id: str
    template_id: str
    version: int
    default_locale: str
    locales: dict[str, dict[str, str]]
    variables: dict[str, str]
    webhook_rendered: bool
    created_at: str
    retired_at: str | None


class VersionRow(_Model):
    version: int
    created_at: str
    retired_at: str | None


class VersionsView(_Model):
    account_id: str
    template_id: str
    versions: list[VersionRow]


class PreviewView(_Model):
    locale: str
    subject: str
    text: str
    html: str


class _Error(BaseModel):
    """The API's error body (as ``api.ErrorView``): ``detail`` lists each schema problem."""

    model_config = ConfigDict(defer_build=True)
    message: str
    error: str | None = None
    field: str | None = None
    detail: list[dict[str, Any]] | None = None


_TEXTS = {
    201: "the version, written",
    404: "no such template or version for this account",
    409: "this version exists with other content (versions are immutable)",
    415: "the body is not JSON",
    422: "invalid input, naming the field",
}


def _doc(*statuses: int, ok: Any = VersionView, ok_text: str = "the template version") -> dict[int, Any]:
    return responses({**_TEXTS, 200: ok_text}, *statuses, ok=ok, error=_Error)


def _view(tv: TemplateVersion) -> VersionView:
    return VersionView(
        account_id=tv.account_id,
        template_id=tv.template_id,
        version=tv.version,
        default_locale=tv.default_locale,
        locales={
            loc: {"subject": c.subject, "text": c.text, "html": c.html}
            for loc, c in sorted(tv.locales.items())
        },
        variables={k: v.value for k, v in sorted(tv.variables.items())},
        webhook_rendered=tv.webhook_rendered,
        created_at=tv.created_at,
        retired_at=tv.retired_at,
    )


@router.put("/templates/<template_id>/versions/<version>", responses=_doc(200, 201, 403, 409, 415, 422))
def put_version(
    template_id: Annotated[TemplateId, Path()], version: Annotated[VersionNumber, Path()], body: PutVersion
) -> Response[Any]:
    """Write a version (201), or answer the stored one when this same content is written again
    (200); other content under an existing version is a 409."""
    one_object_body()
    caller().require(body.account_id)
    raw = body.model_dump()
    tv, created = runtime.templates_service().register(body.account_id, template_id, version, raw)
    return as_json(201 if created else 200, _view(tv))


@router.get("/templates/<template_id>/versions/<version>", responses=_doc(200, 403, 404, 422))
def get_version(
    template_id: Annotated[TemplateId, Path()],
    version: Annotated[VersionNumber, Path()],
    account_id: Annotated[AccountId, Query()],
) -> Response[Any]:
    caller().require(account_id)
    return as_json(200, _view(runtime.templates_service().get(account_id, template_id, version)))


@router.get(
    "/templates/<template_id>/versions",
    responses=_doc(200, 403, 404, 422, ok=VersionsView, ok_text="the template's versions, oldest first"),
)
def list_versions(
    template_id: Annotated[TemplateId, Path()], account_id: Annotated[AccountId, Query()]
) -> Response[Any]:
    caller().require(account_id)
    rows = runtime.templates_service().versions(account_id, template_id)
    return as_json(
        200,
        VersionsView(
            account_id=account_id,
            template_id=template_id,
            versions=[
                VersionRow(version=r.version, created_at=r.created_at, retired_at=r.retired_at) for r in rows
            ],
        ),
    )


@router.post("/templates/<template_id>/versions/<version>/retire", responses=_doc(200, 403, 404, 422))
def retire_version(
    template_id: Annotated[TemplateId, Path()],
    version: Annotated[VersionNumber, Path()],
    account_id: Annotated[AccountId, Query()],
) -> Response[Any]:
    """New reminders may no longer name it (422); reminders already naming it still render it."""
    caller().require(account_id)
    return as_json(200, _view(runtime.templates_service().retire(account_id, template_id, version)))


@router.post(
    "/templates/<template_id>/versions/<version>/preview",
    responses=_doc(200, 403, 404, 415, 422, ok=PreviewView, ok_text="the rendered subject, text and HTML"),
)
def preview_version(
    template_id: Annotated[TemplateId, Path()], version: Annotated[VersionNumber, Path()], body: PreviewIn
) -> Response[Any]:
    """Render the version with sample ``data`` in ``locale`` (or its fallback). Writes nothing."""
    one_object_body()
    caller().require(body.account_id)
    locale = _locale(body.locale)
    out = runtime.templates_service().preview(body.account_id, template_id, version, dict(body.data), locale)
    return as_json(200, PreviewView(locale=out.locale, subject=out.subject, text=out.text, html=out.html))


def _locale(tag: str | None) -> str | None:
    from ...domain.errors import ValidationError
    from ...domain.templates import canonical_locale

    if tag is None:
        return None
    try:
        return canonical_locale(tag)
    except ValueError as exc:
        raise ValidationError("locale", str(exc)) from None
