"""Email templates (issue 30): an account's versioned, immutable messages.

A template version holds, per locale, a subject, a plain-text body and an HTML body (Jinja2 source,
rendered by ``services/templating.py``), a default locale, and the variables it uses with their
types. A version, once written, never changes: it can only be retired (new reminders may no longer
name it; reminders already pinned to it still render, so a version outlives every reminder naming
it). Pure: no I/O.

Variable types, what a reminder's ``data`` must carry for each, and how ``{{ name }}`` renders it:

============  ===================================  =================================================
type          accepted JSON value                  renders as
============  ===================================  =================================================
string        a string                             the text as given (HTML-escaped in the HTML part)
integer       an integer (not a boolean)           its decimal digits, e.g. ``42``
decimal       a number (integer or fraction)       plain decimal notation, never an exponent:
                                                   ``19.9``, ``100000000000000000000``
boolean       true / false                         ``true`` / ``false`` (usable in ``{% if %}``)
date-time     an ISO 8601 string with an offset    UTC, ``2027-03-28T09:00:00Z``; its fields
                                                   (``.year``, ``.strftime('%d %B')``) are usable
list          a list of strings                    the items joined by ``", "``; iterable in
                                                   ``{% for %}``
============  ===================================  =================================================

Bounds (stated in docs/templates.md): at most ``MAX_LOCALES`` locales, ``MAX_VARIABLES`` variables; per
locale a subject of at most ``MAX_SUBJECT_SOURCE`` characters, a text body of at most
``MAX_TEXT_SOURCE`` and an HTML body of at most ``MAX_HTML_SOURCE``; the whole version at most
``MAX_VERSION_BYTES`` bytes of UTF-8 (a DynamoDB item holds 400 KB).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from .errors import ValidationError

MAX_LOCALES = 8
MAX_VARIABLES = 50
MAX_SUBJECT_SOURCE = 1_000
MAX_TEXT_SOURCE = 20_000
MAX_HTML_SOURCE = 60_000
MAX_VERSION_BYTES = 300_000
#: Versions are numbered 1..MAX_VERSIONS: a template holds at most that many (a list reads them all).
MAX_VERSIONS = 1_000
MAX_VERSION_NUMBER = MAX_VERSIONS
MAX_LIST_ITEMS = 100  # a list-of-strings variable's items
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
TEMPLATE_ID = re.compile(r"^[A-Za-z0-9:_.\-]{1,64}$")  # as a reminder's ``template.id``
PARTS = ("subject", "text", "html")

#: BCP 47 language tags (RFC 5646) in the shape products use: language, optional script, optional
#: region, optional variants (no extensions or private use). Matched case-insensitively.
_LANGTAG = re.compile(
    r"^(?P<lang>[A-Za-z]{2,3})"
    r"(?:-(?P<script>[A-Za-z]{4}))?"
    r"(?:-(?P<region>[A-Za-z]{2}|[0-9]{3}))?"
    r"(?P<variants>(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*)$"
)
MAX_LOCALE_LENGTH = 35


class RenderError(Exception):
    """A template that cannot be rendered with this data (undefined, too big, too long, refused)."""


class VarType(StrEnum):
    STRING = "string"
    INTEGER = "integer"
    DECIMAL = "decimal"
    BOOLEAN = "boolean"
    DATETIME = "date-time"
    LIST = "list"  # a list of strings


def canonical_locale(tag: str) -> str:
    """The tag in its canonical case (``en``, ``zh-Hant-TW``, ``de-CH-1901``), or ValueError."""
    m = _LANGTAG.fullmatch(tag) if len(tag) <= MAX_LOCALE_LENGTH else None
    if m is None:
        raise ValueError("not a BCP 47 language tag (e.g. en, en-GB, zh-Hant-TW)")
    out = m["lang"].lower()
    if m["script"]:
        out += "-" + m["script"].title()
    if m["region"]:
        out += "-" + m["region"].upper()
    if m["variants"]:
        out += m["variants"].lower()
    return out


def lookup_locale(requested: str | None, available: tuple[str, ...], default: str) -> str:
    """RFC 4647 lookup: the requested tag, then it shortened one subtag at a time (``fr-CA`` →
    ``fr``), then the version's default locale."""
    if requested:
        parts = requested.split("-")
        while parts:
            candidate = "-".join(parts)
            if candidate in available:
                return candidate
            parts.pop()
    return default


@dataclass(frozen=True, slots=True)
class LocaleContent:
    subject: str
    text: str
    html: str

    def part(self, name: str) -> str:
        return str(getattr(self, name))


@dataclass(frozen=True, slots=True)
class TemplateVersion:
    """One immutable version of an account's template. ``retired_at`` is the only field that ever
    changes (once), and never changes what the version renders."""

    account_id: str
    template_id: str
    version: int
    default_locale: str
    locales: dict[str, LocaleContent]
    variables: dict[str, VarType]
    #: Webhook deliveries of reminders naming this version carry ``rendered`` (subject and text)
    #: beside the template reference and data (receivers usually render their own).
    webhook_rendered: bool = False
    created_at: str = ""
    retired_at: str | None = None

    def content(self) -> dict[str, Any]:
        """What the version is (the immutable part), as stored and compared by a repeated PUT."""
        return {
            "default_locale": self.default_locale,
            "locales": {
                loc: {"subject": c.subject, "text": c.text, "html": c.html}
                for loc, c in sorted(self.locales.items())
            },
            "variables": {k: v.value for k, v in sorted(self.variables.items())},
            "webhook_rendered": self.webhook_rendered,
        }

    def encode(self) -> str:
        return json.dumps(self.content(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def locale_for(self, requested: str | None) -> str:
        return lookup_locale(requested, tuple(self.locales), self.default_locale)

    @classmethod
    def decode(
        cls,
        account_id: str,
        template_id: str,
        version: int,
        doc: str,
        created_at: str = "",
        retired_at: str | None = None,
    ) -> TemplateVersion:
        raw = json.loads(doc)
        return cls(
            account_id=account_id,
            template_id=template_id,
            version=version,
            default_locale=raw["default_locale"],
            locales={loc: LocaleContent(**c) for loc, c in raw["locales"].items()},
            variables={k: VarType(v) for k, v in raw["variables"].items()},
            webhook_rendered=bool(raw.get("webhook_rendered", False)),
            created_at=created_at,
            retired_at=retired_at,
        )


@dataclass(frozen=True, slots=True)
class VersionRef:
    """(account, template id, version): every stored or cached reference carries the account."""

    account_id: str
    template_id: str
    version: int


def new_version(
    account_id: str,
    template_id: str,
    version: int,
    *,
    default_locale: str,
    locales: dict[str, dict[str, str]],
    variables: dict[str, str],
    webhook_rendered: bool = False,
    created_at: str = "",
) -> TemplateVersion:
    """A checked version, or a :class:`ValidationError` naming the field (``locales.fr.html``, ...).
    The sources' syntax and their use of undeclared variables are checked by the renderer."""
    if not TEMPLATE_ID.match(template_id):
        raise ValidationError("template_id", "1-64 characters of A-Z a-z 0-9 : _ . -")
    if not 1 <= version <= MAX_VERSION_NUMBER:
        raise ValidationError("version", f"must be 1 to {MAX_VERSION_NUMBER}")
    if not locales:
        raise ValidationError("locales", "at least one locale")
    if len(locales) > MAX_LOCALES:
        raise ValidationError("locales", f"at most {MAX_LOCALES} locales")
    content: dict[str, LocaleContent] = {}
    for tag, parts in locales.items():
        try:
            canon = canonical_locale(tag)
        except ValueError as exc:
            raise ValidationError(f"locales.{tag}", str(exc)) from None
        if canon in content:
            raise ValidationError(f"locales.{tag}", f"names the locale {canon} twice")
        for part, limit in (
            ("subject", MAX_SUBJECT_SOURCE),
            ("text", MAX_TEXT_SOURCE),
            ("html", MAX_HTML_SOURCE),
        ):
            value = parts.get(part)
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"locales.{tag}.{part}", "required, non-empty text")
            if len(value) > limit:
                raise ValidationError(f"locales.{tag}.{part}", f"at most {limit} characters")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValidationError(
                    f"locales.{tag}.{part}", "not valid Unicode text (a lone surrogate)"
                ) from None
        if "\r" in parts["subject"] or "\n" in parts["subject"]:
            raise ValidationError(f"locales.{tag}.subject", "one line: no CR or LF")
        content[canon] = LocaleContent(parts["subject"], parts["text"], parts["html"])
    try:
        default = canonical_locale(default_locale)
    except ValueError as exc:
        raise ValidationError("default_locale", str(exc)) from None
    if default not in content:
        raise ValidationError("default_locale", "must be one of the version's locales")
    if len(variables) > MAX_VARIABLES:
        raise ValidationError("variables", f"at most {MAX_VARIABLES} variables")
    typed: dict[str, VarType] = {}
    for name, kind in variables.items():
        if not VARIABLE_NAME.match(name):
            raise ValidationError(f"variables.{name}", "a name of letters, digits and _ (not first)")
        try:
            typed[name] = VarType(kind)
        except ValueError:
            allowed = ", ".join(t.value for t in VarType)
            raise ValidationError(f"variables.{name}", f"type must be one of {allowed}") from None
    tv = TemplateVersion(
        account_id=account_id,
        template_id=template_id,
        version=version,
        default_locale=default,
        locales=content,
        variables=typed,
        webhook_rendered=webhook_rendered,
        created_at=created_at,
    )
    size = len(tv.encode().encode())
    if size > MAX_VERSION_BYTES:
        raise ValidationError("locales", f"the version is {size} bytes; the limit is {MAX_VERSION_BYTES}")
    return tv


def _datetime(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    if parsed.tzinfo is None:
        raise ValueError("needs an offset")
    return parsed.astimezone(UTC)


def typed_data(variables: dict[str, VarType], data: dict[str, Any]) -> dict[str, Any]:
    """The template's variables as typed values (what the renderer sees), or a
    :class:`ValidationError` naming ``data.<name>``: a declared variable missing or of the wrong
    type. Data keys the version does not declare are left out (the webhook still carries them)."""
    out: dict[str, Any] = {}
    for name, kind in sorted(variables.items()):
        where = f"data.{name}"
        if name not in data or data[name] is None:
            raise ValidationError(where, f"required by the template ({kind.value})")
        v = data[name]
        if kind is VarType.STRING:
            if not isinstance(v, str):
                raise ValidationError(where, "must be a string")
            out[name] = v
        elif kind is VarType.INTEGER:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValidationError(where, "must be an integer")
            out[name] = v
        elif kind is VarType.DECIMAL:
            if isinstance(v, bool) or not isinstance(v, int | float | Decimal):
                raise ValidationError(where, "must be a number")
            out[name] = Decimal(str(v))
        elif kind is VarType.BOOLEAN:
            if not isinstance(v, bool):
                raise ValidationError(where, "must be true or false")
            out[name] = v
        elif kind is VarType.DATETIME:
            try:
                out[name] = _datetime(v) if isinstance(v, str) else _datetime("")
            except (ValueError, OverflowError):
                raise ValidationError(where, "must be an ISO 8601 date-time with an offset") from None
        else:
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ValidationError(where, "must be a list of strings")
            if len(v) > MAX_LIST_ITEMS:
                raise ValidationError(where, f"at most {MAX_LIST_ITEMS} items")
            out[name] = tuple(v)
    return out
