"""Template versions and their sandboxed, bounded renderer (issue 30): the domain's checks, how each
variable type renders, locale fallback, purity, and hostile templates (attribute escapes, huge loops,
amplification, recursion) refused by step and size, never by a clock."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from reminders.domain.errors import ValidationError
from reminders.domain.templates import (
    MAX_HTML_SOURCE,
    TemplateVersion,
    canonical_locale,
    lookup_locale,
    new_version,
)
from reminders.services.templating import (
    MAX_OPERATIONS,
    MAX_SUBJECT,
    RenderError,
    check_sources,
    render_version,
)

VARS = {"name": "string", "n": "integer", "amount": "decimal", "ok": "boolean", "when": "date-time"}
VARS["tags"] = "list"
DATA: dict[str, Any] = {
    "name": "<b>Ann</b>",
    "n": 3,
    "amount": 1e20,
    "ok": True,
    "when": "2027-03-28T09:00:00+02:00",
    "tags": ["a", "b"],
}


def version(
    text: str = "{{ name }}", subject: str = "Hi {{ name }}", html: str = "<p>{{ name }}</p>", **more: Any
) -> TemplateVersion:
    locales = more.pop("locales", {"en": {"subject": subject, "text": text, "html": html}})
    tv = new_version(
        "acct-a",
        "renewal",
        1,
        default_locale=more.pop("default_locale", "en"),
        locales=locales,
        variables=more.pop("variables", VARS),
    )
    check_sources(tv)
    return tv


# -- the version ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tag", "canonical"),
    [("en", "en"), ("EN-gb", "en-GB"), ("zh-hant-tw", "zh-Hant-TW"), ("de-CH-1901", "de-CH-1901")],
)
def test_a_bcp47_tag_is_canonicalised(tag: str, canonical: str) -> None:
    assert canonical_locale(tag) == canonical


@pytest.mark.parametrize("tag", ["", "english", "en_GB", "e", "en-", "en-GB-x", "a" * 40, "en\n"])
def test_a_locale_is_refused_when_it_is_not_a_bcp47_tag(tag: str) -> None:
    with pytest.raises(ValueError):
        canonical_locale(tag)


def test_a_locale_falls_back_to_its_language_then_to_the_default_when_the_version_lacks_it() -> None:
    available = ("en", "fr", "pt-BR")
    assert lookup_locale("fr-CA", available, "en") == "fr"
    assert lookup_locale("pt-BR", available, "en") == "pt-BR"
    assert lookup_locale("pt", available, "en") == "en"
    assert lookup_locale(None, available, "en") == "en"


@pytest.mark.parametrize(
    ("more", "field"),
    [
        ({"default_locale": "de"}, "default_locale"),
        ({"locales": {"en-": {"subject": "s", "text": "t", "html": "h"}}}, "locales.en-"),
        ({"locales": {"en": {"subject": "s", "text": "", "html": "h"}}}, "locales.en.text"),
        ({"locales": {"en": {"subject": "a\r\nBcc: x", "text": "t", "html": "h"}}}, "locales.en.subject"),
        (
            {"locales": {"en": {"subject": "s", "text": "t", "html": "h" * (MAX_HTML_SOURCE + 1)}}},
            "locales.en.html",
        ),
        ({"variables": {"1x": "string"}}, "variables.1x"),
        ({"variables": {"x": "money"}}, "variables.x"),
        ({"text": "{{ nobody }}"}, "locales.en.text"),
        ({"text": "{% for x in tags %}"}, "locales.en.text"),
        ({"text": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"}, "locales.en.text"),
        ({"text": "{% for x in tags recursive %}{{ loop(x) }}{% endfor %}"}, "locales.en.text"),
        ({"text": "{{ name|center(1000000000) }}"}, "locales.en.text"),
        ({"text": "{{ name|random }}"}, "locales.en.text"),
        ({"text": "{{ lipsum() }}"}, "locales.en.text"),
        ({"text": "{% include '/etc/passwd' %}"}, "locales.en.text"),
        ({"text": "{% extends 'base.html' %}"}, "locales.en.text"),
        ({"text": "{% from 'x' import y %}"}, "locales.en.text"),
        ({"text": "{% for a in tags %}" * 30 + "{% endfor %}" * 30}, "locales.en.text"),
        ({"text": "{% if ok %}" * 200 + "{% endif %}" * 200}, "locales.en.text"),
        ({"text": "{{ " + "(" * 3000 + "n" + ")" * 3000 + " }}"}, "locales.en.text"),
        ({"text": "hi \ud800"}, "locales.en.text"),
    ],
)
def test_a_version_is_refused_naming_the_field_when_it_is_malformed(more: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        version(**more)
    assert exc.value.field == field


# -- how each type renders ----------------------------------------------------------------------------------
def test_each_variable_type_renders_as_documented() -> None:
    tv = version(
        text="{{ name }}|{{ n }}|{{ amount }}|{{ ok }}|{{ when }}|{{ tags }}|{{ when.strftime('%d %B') }}"
    )
    out = render_version(tv, None, DATA)
    assert out.text == "<b>Ann</b>|3|100000000000000000000|true|2027-03-28T07:00:00Z|a, b|28 March"


def test_html_part_is_escaped_and_subject_and_text_are_not() -> None:
    out = render_version(version(), None, DATA)
    assert (out.subject, out.text, out.html) == (
        "Hi <b>Ann</b>",
        "<b>Ann</b>",
        "<p>&lt;b&gt;Ann&lt;/b&gt;</p>",
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({k: v for k, v in DATA.items() if k != "n"}, "data.n"),
        ({**DATA, "n": "3"}, "data.n"),
        ({**DATA, "n": True}, "data.n"),
        ({**DATA, "amount": "1"}, "data.amount"),
        ({**DATA, "ok": 1}, "data.ok"),
        ({**DATA, "when": "2027-03-28T09:00"}, "data.when"),
        ({**DATA, "when": 5}, "data.when"),
        ({**DATA, "tags": ["a", 1]}, "data.tags"),
        ({**DATA, "name": None}, "data.name"),
    ],
)
def test_render_is_refused_naming_the_variable_when_data_lacks_it_or_has_the_wrong_type(
    data: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        render_version(version(), None, data)
    assert exc.value.field == field


def test_the_locale_asked_for_renders_and_an_unknown_one_falls_back_to_the_default() -> None:
    parts = {"subject": "S", "text": "T", "html": "H"}
    tv = version(locales={"en": parts, "fr": {**parts, "text": "Bonjour {{ name }}"}})
    assert render_version(tv, "fr-CA", DATA).text == "Bonjour <b>Ann</b>"
    assert (render_version(tv, "de", DATA).locale, render_version(tv, "de", DATA).text) == ("en", "T")


def test_rendering_is_a_pure_function_of_version_locale_and_data_across_threads() -> None:
    tv = version(text="{% for t in tags %}{{ loop.index }}{{ t }}{% endfor %}{{ amount }}")
    outs: list[object] = []

    def run() -> None:
        for _ in range(20):
            outs.append(render_version(tv, None, DATA))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outs) == 80 and len(set(map(repr, outs))) == 1


# -- hostile templates --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "{{ ''.__class__ }}",
        "{{ name.__class__.__mro__[1].__subclasses__() }}",
        "{{ range.__globals__ }}",
        "{{ namespace.__init__.__globals__ }}",
        "{{ name.format.__globals__ }}",
        "{{ '{0.__class__}'.format(name) }}",
        "{{ '%s' % name }}",
        "{{ name.join(tags) }}",
        "{{ tags.append('x') }}",
        "{{ when.replace(year=1) }}",
    ],
)
def test_an_attribute_escape_is_refused_when_a_template_reaches_for_python_internals(text: str) -> None:
    with pytest.raises(RenderError):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize(
    "text",
    [
        "{% for i in range(10**9) %}x{% endfor %}",
        "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
        "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}"
        "{% endfor %}{% endfor %}{% endfor %}",
        "{% for a in tags %}{% for i in range(1000) %}{% for j in range(1000) %}{{ a }}{% endfor %}"
        "{% endfor %}{% endfor %}",
        "{% for i in range(1000) %}{{ tags|sort|join(',') }}{{ name|upper }}{{ name.upper() }}"
        "{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}"
        "{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}"
        "{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}"
        "{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{{ name.upper() }}{% endfor %}",
    ],
)
def test_a_long_render_stops_after_its_step_bound_when_a_template_loops_hugely(text: str) -> None:
    with pytest.raises(RenderError, match=r"steps|range"):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize(
    "text",
    [
        "{{ 'a' * 10**9 }}",
        "{{ (name ~ name) * 100000000 }}",
        "{{ tags * 100000000 }}",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "{% for i in range(1000) %}" + "x" * 1000 + "{% endfor %}",
        "{% set ns = namespace(n=2) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
        "{{ 10 ** 100000 }}",
        "{% for i in range(999) %}{% set s %}{% for j in range(999) %}yyyy{% endfor %}{% endset %}"
        "{% endfor %}",
    ],
)
def test_an_amplifying_render_stops_at_its_size_bound_when_a_template_multiplies_its_output(
    text: str,
) -> None:
    with pytest.raises(RenderError):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize("brk", ["\r\n", "\n", "\r", "\x0b", "\x0c", "\x85", "\u2028", "\x00", "\x1b"])
def test_a_rendered_subject_is_refused_when_data_puts_a_line_break_in_it(brk: str) -> None:
    with pytest.raises(RenderError, match="line break"):
        render_version(version(), None, {**DATA, "name": f"Ann{brk}Bcc: victim@example.com"})


def test_a_rendered_subject_is_refused_when_it_is_longer_than_one_header_line() -> None:
    with pytest.raises(RenderError, match="subject"):
        render_version(version(), None, {**DATA, "name": "x" * MAX_SUBJECT})


def test_a_render_within_the_bounds_succeeds_when_it_loops_as_much_as_an_email_needs() -> None:
    text = "{% for i in range(200) %}{% for t in tags %}{{ i }}{{ t }} {% endfor %}{% endfor %}"
    assert MAX_OPERATIONS > 600
    out = render_version(version(text=text), None, DATA)
    assert out.text.startswith("0a 0b 1a") and out.text.count(" ") == 400


def test_a_render_stops_at_its_budget_when_a_loop_works_repeatedly_on_a_large_string() -> None:
    text = (
        "{% set s = tags|join('x' * 1000) %}{% set ns = namespace(n=0) %}"
        "{% for i in range(1000) %}{% set ns.n = ns.n + (s|striptags|length) + s.upper()|length %}"
        "{% endfor %}"
    )
    with pytest.raises(RenderError, match="characters"):
        render_version(version(text=text, variables={**VARS}), None, {**DATA, "tags": ["a"] * 100})


@pytest.mark.parametrize(
    "test",
    [
        "'zz' in s",
        "'zz' not in s",
        "'zz' is in s",
        "'zz' in l",
        "not ('zz' in l)",
    ],
)
def test_a_render_stops_at_its_budget_when_a_loop_tests_membership_in_a_large_value(test: str) -> None:
    """A membership test's work is linear in the string or list it searches: each one is paid for."""
    text = (
        "{% set s = tags|join('x' * 1000) %}{% set l = tags * 1000 %}"
        "{% for i in range(1000) %}{% if " + test + " %}y{% endif %}{% endfor %}"
    )
    with pytest.raises(RenderError, match="characters"):
        render_version(version(text=text, variables={**VARS}), None, {**DATA, "tags": ["a"] * 100})


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("{{ 'b' in tags }}|{{ 'z' not in name }}|{{ 'a' is in tags }}", "true|true|true"),
        ("{{ 1 < 2 in [True] }}|{{ 'n' in name < 'zzz' }}|{{ 'q' in tags == false }}", "false|true|false"),
    ],
)
def test_membership_tests_render_as_jinja_does_when_metered(text: str, out: str) -> None:
    assert render_version(version(text=text), None, DATA).text == out


@pytest.mark.parametrize(
    "make",
    [
        "([s] * 100)|string",
        "([s] * 100)|e",
        "([s] * 100)|upper",
        "([s] * 100)|trim",
        "([l] * 1000)|sum(start=[])",
        "(({'a': s}.items()|list) * 100)|string",
    ],
)
def test_a_render_stops_at_its_budget_when_a_template_stringifies_or_sums_a_list_of_large_values(
    make: str,
) -> None:
    """``[s] * 100`` pays for 100 items, not for the 100 copies of ``s`` that ``str()`` (every string
    filter, ``~``) or ``sum`` then writes out: the work must be paid for before it is done."""
    text = "{% set s = 'x' * 5000 %}{% set l = range(1000)|list %}{% set t = " + make + " %}done"
    with pytest.raises(RenderError):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize(
    "use",
    [
        "{% set t = ns.a|string %}",
        "{{ ns.a == ns.b }}",
        "{{ ns.a in [ns.b] }}",
        "{{ [ns.a, ns.b]|max|length }}",
    ],
)
def test_a_render_stops_at_its_budget_when_a_template_nests_a_list_in_itself(use: str) -> None:
    """``[a, a]`` 18 times is 2**18 leaves for 20 steps: printing or comparing it is exponential work."""
    text = (
        "{% set ns = namespace(a=['x'], b=['x']) %}{% for i in range(18) %}"
        "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}" + use
    )
    with pytest.raises(RenderError):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        (
            "{% set ns = namespace(l=[]) %}{% for t in tags %}{% set ns.l = ns.l + [t|upper] %}{% endfor %}"
            "{{ ns.l|join('-') }}",
            "A-B",
        ),
        ("{% for k, v in {'a': 1, 'b': n}.items() %}{{ k }}{{ v }}{% endfor %}", "a1b3"),
        ("{% for k, v in [(name, 1), ('x', n)] %}{{ k }}{{ v }}{% endfor %}", "<b>Ann</b>1x3"),
        ("{{ {'a': name}.get('a') }}|{{ (['c'] * 2)|length }}|{{ (1, 2)|sum }}", "<b>Ann</b>|2|3"),
    ],
)
def test_flat_lists_dicts_and_namespaces_render_as_jinja_does_when_nesting_is_refused(
    text: str, out: str
) -> None:
    assert render_version(version(text=text), None, DATA).text == out


@pytest.mark.parametrize(
    "text",
    [
        "{% set d = {} %}{{ d.update(a=d) }}",
        "{% set d = {'a': [name]} %}",
        "{% set ns = namespace() %}{% set ns.me = ns %}",
        "{% set ns = namespace(a=namespace()) %}",
        "{% set t = (name, n) %}{% set l = [(t, t)] %}",
    ],
)
def test_a_render_is_refused_when_a_template_nests_a_container_in_a_container(text: str) -> None:
    with pytest.raises(RenderError):
        render_version(version(text=text), None, DATA)


@pytest.mark.parametrize("method", ["floor", "ceil", "common"])
def test_a_render_is_refused_before_the_work_when_round_asks_for_a_huge_precision(method: str) -> None:
    """``round(p, 'floor')`` computes ``10**p`` inside the filter, outside every operator bound:
    ``10**(10**8)`` is minutes of one core for a few bytes of template."""
    text = "{{ 1.5|round(10 ** 5, '" + method + "') }}"
    with pytest.raises(RenderError, match="precision"):
        render_version(version(text=text), None, DATA)


def test_a_render_stops_at_its_budget_when_a_loop_calls_a_method_with_a_large_argument() -> None:
    """``when.strftime(f)`` writes about 12 characters per ``%c`` of ``f``; the call paid for ``when``."""
    text = "{% set f = '%c' * 20000 %}{% for i in range(100) %}{% set x = when.strftime(f) %}{% endfor %}done"
    with pytest.raises(RenderError, match="characters"):
        render_version(version(text=text), None, DATA)
