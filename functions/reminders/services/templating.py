"""The template renderer (issue 30): Jinja2's ``SandboxedEnvironment``, bounded.

Why Jinja2: the most used and best kept Python template engine, with a sandbox designed for
untrusted templates (no ``__class__``/``__globals__``/``mro`` escapes, unsafe callables refused) and
strict undefined variables. What this module adds to it, for templates written by any account and
rendered inside the consumer's worker threads:

- **No file, network or module access**: no loader (``{% include %}``/``{% import %}``/
  ``{% extends %}`` find nothing), globals reduced to ``range`` (bounded) and ``namespace``, filters
  reduced to an allow-list of pure, non-amplifying ones (no ``random``, ``center``, ``indent``,
  ``wordwrap``, ``format``, ``replace``, ``batch``, ``urlize``, ``pprint``...; ``join`` is bounded).
  Macros, call blocks, recursive loops, include, import and extends are refused when the
  version is registered.
- **Attributes**: the sandbox refuses private and internal attributes; on strings, numbers,
  lists, tuples and booleans only a fixed allow-list of methods is reachable (no ``format``,
  ``center``, ``ljust``, ``join``, ``replace``, ``zfill``...: nothing that multiplies its input).
- **Autoescape for the HTML part only**: the subject and the text part are plain text.
- **A time bound that works in any thread, without signals: bounded operations.** Every render
  carries a budget (a ``ContextVar``, so concurrent renders in worker threads each have their own).
  The code generator wraps the iterable of every ``{% for %}`` so that each iteration spends one
  operation and, in output bytes, the size of the loop body's literal text; every call from the
  template (the sandbox's ``call`` hook) and every filter spends one operation and the size of the
  string or list it works on (its work is at most linear in it); every ``{{ }}`` output spends its
  length (the environment's ``finalize``); ``~``, ``+``, ``*``, ``**`` and ``%`` are intercepted and
  refused past the size bound; every membership test (``in``, ``not in``, the ``in`` test) spends one
  operation and the size of the string or list searched plus the value searched for (a search is
  at most linear in them). Containers a template builds are flat (a list, tuple or dict literal, a
  ``namespace`` attribute never holds another container or namespace: nesting ``[a, a]`` would
  double a value per step) and sized by what ``str()`` of them writes, so ``[s] * 100`` pays for 100
  copies of ``s`` and a string filter, ``sum`` or comparison on it costs what it was paid.
  Straight-line template code is bounded by the source's size, so
  ``MAX_OPERATIONS`` bounds the work of a render: a template looping ``range(10**9)``, or nesting
  loops, stops with :class:`RenderError` after ``MAX_OPERATIONS`` steps, whatever the clock.
- **An output-size bound**: every byte a render ever produces (outputs, literal text repeated by
  loops, concatenations) counts against ``MAX_RENDER_BYTES``; each part's final size is bounded too
  (subject ``MAX_SUBJECT``, one line: CR or LF in a rendered subject is refused).

The result is a pure function of (version, locale, data): no clock, no randomness, the same bytes
on every retry (compiled templates are cached by their source text, which is account-neutral).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from jinja2 import StrictUndefined, TemplateError, nodes
from jinja2.compiler import CodeGenerator, Frame, operators
from jinja2.filters import FILTERS
from jinja2.meta import find_undeclared_variables
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace

from ..domain.errors import ValidationError
from ..domain.templates import PARTS, RenderError, TemplateVersion, typed_data

MAX_OPERATIONS = 20_000  # loop iterations + calls per render
MAX_RENDER_BYTES = 400_000  # every byte a render produces, intermediate ones included
MAX_RANGE = 1_000
MAX_SUBJECT = 998  # one header line (RFC 5322)
MAX_TEXT = 100_000
MAX_HTML = 250_000
MAX_INT_BITS = 256  # integers a template computes (``*``, ``**``) stay small
#: Filters that are pure (no ``random``) and produce at most a small multiple of their input.
SAFE_FILTERS = (
    "abs",
    "capitalize",
    "count",
    "d",
    "default",
    "e",
    "escape",
    "filesizeformat",
    "first",
    "float",
    "int",
    "last",
    "length",
    "list",
    "lower",
    "max",
    "min",
    "reverse",
    "round",
    "safe",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "wordcount",
)
#: Methods reachable on plain values (strings, numbers, lists, tuples, booleans, date-times).
SAFE_METHODS = frozenset(
    {
        "upper",
        "lower",
        "title",
        "capitalize",
        "strip",
        "lstrip",
        "rstrip",
        "startswith",
        "endswith",
        "split",
        "isdigit",
        "isalpha",
        "count",
        "index",
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "second",
        "weekday",
        "isoformat",
        "strftime",
        "items",
        "keys",
        "values",
        "get",
    }
)
_PLAIN = (str, int, float, bool, Decimal, list, tuple, dict, datetime)


@dataclass(slots=True)
class _Budget:
    operations: int = 0
    output: int = 0

    def spend(self, operations: int = 0, output: int = 0) -> None:
        self.operations += operations
        self.output += output
        if self.operations > MAX_OPERATIONS:
            raise RenderError(f"the template took more than {MAX_OPERATIONS} steps (loops and calls)")
        if self.output > MAX_RENDER_BYTES:
            raise RenderError(f"the template produced more than {MAX_RENDER_BYTES} characters")


_BUDGET: ContextVar[_Budget | None] = ContextVar("template_budget", default=None)


def _budget() -> _Budget:
    b = _BUDGET.get()
    if b is None:  # compile-time constant folding: nothing to bound
        return _Budget()
    return b


def _literal_size(body: Iterable[nodes.Node]) -> int:
    """The literal text a loop body writes per iteration (template data and constants)."""
    size = 0
    for node in body:
        for data in node.find_all(nodes.TemplateData):
            size += len(data.data)
        for const in node.find_all(nodes.Const):
            size += len(const.value) if isinstance(const.value, str) else 1
    return size + 1


class _Membership:
    """The right side of ``in`` / ``not in``: the search is paid for before it runs."""

    __slots__ = ("container",)

    def __init__(self, container: Any) -> None:
        self.container = container

    def __contains__(self, item: Any) -> bool:
        _budget().spend(operations=1, output=_size(self.container) + _size(item))
        return item in self.container


_MEMBERSHIP = frozenset({"in", "notin"})


class _BoundedCodeGenerator(CodeGenerator):
    """Every loop's iterable is passed through ``environment.bounded_iter``; every ``~`` through
    ``environment.bounded_text``; the right side of every ``in`` / ``not in`` through
    ``environment.membership`` (``environment.charged_operand`` inside a chained comparison, where
    it is also the left side of the next one). Macros, call blocks and recursive loops are refused."""

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        if not any(op.op in _MEMBERSHIP for op in node.ops):
            super().visit_Compare(node, frame)
            return
        self.write("(")
        self.visit(node.expr, frame)
        last = len(node.ops) - 1
        for i, op in enumerate(node.ops):
            self.write(f" {operators[op.op]} ")
            if op.op in _MEMBERSHIP:
                self.write("environment.membership(" if i == last else "environment.charged_operand(")
                self.visit(op.expr, frame)
                self.write(")")
            else:
                self.visit(op.expr, frame)
        self.write(")")

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        if node.recursive:
            self.fail("recursive loops are not allowed", node.lineno)
        weight = nodes.Const(_literal_size([*node.body, *(node.else_ or [])]), lineno=node.lineno)
        node.iter = nodes.Call(
            nodes.EnvironmentAttribute("bounded_iter", lineno=node.lineno),
            [node.iter, weight],
            [],
            None,
            None,
            lineno=node.lineno,
        )
        super().visit_For(node, frame)

    def _flat(self, visit: Any, node: nodes.Node, frame: Frame) -> None:
        if getattr(node, "ctx", "load") != "load":
            visit(node, frame)
            return
        self.write("environment.flat(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self._flat(super().visit_List, node, frame)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        self._flat(super().visit_Tuple, node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self._flat(super().visit_Dict, node, frame)

    def visit_Macro(self, node: nodes.Macro, frame: Frame) -> None:
        self.fail("macros are not allowed", node.lineno)

    def visit_CallBlock(self, node: nodes.CallBlock, frame: Frame) -> None:
        self.fail("call blocks are not allowed", node.lineno)

    def visit_Extends(self, node: nodes.Extends, frame: Frame) -> None:
        self.fail("a template stands alone: no extends", node.lineno)

    def visit_Include(self, node: nodes.Include, frame: Frame) -> None:
        self.fail("a template stands alone: no include", node.lineno)

    def visit_Import(self, node: nodes.Import, frame: Frame) -> None:
        self.fail("a template stands alone: no import", node.lineno)

    def visit_FromImport(self, node: nodes.FromImport, frame: Frame) -> None:
        self.fail("a template stands alone: no import", node.lineno)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_text(")
        super().visit_Concat(node, frame)
        self.write(")")


def _finalize(value: Any) -> Any:
    """How each variable type renders (domain/templates.py), and each output's size counted."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, Decimal):
        value = format(value, "f")
    elif isinstance(value, datetime):
        value = value.strftime("%Y-%m-%dT%H:%M:%SZ")
    elif isinstance(value, list | tuple) and all(isinstance(x, str) for x in value):
        value = _join(value, ", ")
    _budget().spend(output=_size(value) if isinstance(value, (str, *_CONTAINERS)) else 64)
    return value


def _join(value: Iterable[Any], d: str = "") -> str:
    items = [str(x) for x in value]
    size = sum(len(x) for x in items) + len(d) * max(len(items) - 1, 0)
    _budget().spend(output=size)
    return d.join(items)


_CONTAINERS = (list, tuple, dict, range, Namespace)
_SCALAR_SIZE = 24  # what str() of a number, boolean or date-time writes at most (ints stay small)


def _size(value: Any) -> int:
    """What ``str()`` of ``value`` writes, at most: a string's length; a container's items' sizes
    plus their separators. Containers are flat (``BoundedEnvironment.flat``, ``_FlatNamespace``), so
    this is linear in what was paid for when the container was built."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Namespace):
        value = object.__getattribute__(value, "_Namespace__attrs")
    if isinstance(value, dict):
        return sum(_size(k) + _size(v) + 4 for k, v in value.items()) + 2
    if isinstance(value, range):
        return len(value) * _SCALAR_SIZE
    if isinstance(value, list | tuple):
        # Items are values, or the (key, value) pairs of ``d.items()|list``: two levels at most.
        return (
            sum(_size(x) if isinstance(x, str | tuple) else _SCALAR_SIZE for x in value) + 2 * len(value) + 2
        )
    return 1


class _FlatNamespace(Namespace):
    """``namespace()``: its attributes may hold lists and values, never another namespace (nesting
    would let a template double a value's size per step)."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # Namespace's own signature (self in args)
        for v in [*args[1:], *kwargs.values()]:
            _refuse_nesting(v)
        Namespace.__init__(*args, **kwargs)

    def __setitem__(self, name: str, value: Any) -> None:
        _refuse_nesting(value)
        super().__setitem__(name, value)


def _refuse_nesting(value: Any) -> None:
    if isinstance(value, Namespace):
        raise RenderError("a namespace cannot hold a namespace")
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
    if any(isinstance(x, _CONTAINERS) and not _pair(x) for x in items):
        raise RenderError("a list or dict holds values or tuples of values, never a list, dict or namespace")


def _pair(x: Any) -> bool:
    """A tuple of plain values (``[(name, 1), (plan, 2)]``): two levels at most, like ``d.items()``."""
    return type(x) is tuple and not any(isinstance(y, _CONTAINERS) for y in x)


def _charged(f: Any) -> Any:
    """A filter that spends a step and the size of its input (a filter's work is at most linear in
    it): a loop calling a filter on a large string pays for it each time."""
    pass_arg = getattr(f, "jinja_pass_arg", None)
    at = 0 if pass_arg is None else 1

    def charged(*args: Any, **kwargs: Any) -> Any:
        _budget().spend(operations=1, output=_size(args[at]) if len(args) > at else 1)
        return f(*args, **kwargs)

    if pass_arg is not None:
        charged.jinja_pass_arg = pass_arg  # type: ignore[attr-defined]
    return charged


def _test_in(value: Any, seq: Any) -> bool:
    """The ``in`` test (``x is in seq``), paid for as ``x in seq`` is."""
    return value in _Membership(seq)


MAX_ROUND_PRECISION = 32


def _bounded_round(value: Any, precision: int = 0, method: str = "common") -> Any:
    """``round``: its floor and ceil compute ``10**precision``, so the precision is bounded first."""
    if not isinstance(precision, int) or abs(precision) > MAX_ROUND_PRECISION:
        raise RenderError(f"round takes a precision of at most {MAX_ROUND_PRECISION} digits")
    return FILTERS["round"](value, precision, method)


def _bounded_range(*args: int) -> range:
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise RenderError(f"range() of more than {MAX_RANGE} items")
    return rng


class BoundedEnvironment(SandboxedEnvironment):
    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self, *, html: bool) -> None:
        super().__init__(
            autoescape=html,
            undefined=StrictUndefined,
            finalize=_finalize,
            loader=None,
            auto_reload=False,
            cache_size=0,
            keep_trailing_newline=True,
        )
        self.globals.clear()
        self.globals.update({"range": _bounded_range, "namespace": _FlatNamespace})
        self.filters = {name: _charged(FILTERS[name]) for name in SAFE_FILTERS}
        self.filters["join"] = _charged(_join)
        self.filters["round"] = _charged(_bounded_round)
        self.tests["in"] = _test_in

    def wrap_str_format(self, value: Any) -> None:
        """``str.format`` is not reachable at all (a width multiplies its input)."""
        return None

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, _PLAIN) and attr not in SAFE_METHODS:
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        # A method's work is at most linear in its object (``s.upper()``, ``s.split()``).
        # Its arguments too (``when.strftime(f)`` writes a few characters per character of ``f``).
        size = _size(getattr(__obj, "__self__", None)) + sum(
            len(a) for a in (*args, *kwargs.values()) if isinstance(a, str)
        )
        _budget().spend(operations=1, output=size)
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget().spend(operations=1)
        if operator == "%" and isinstance(left, str):
            raise RenderError("string formatting with % is not allowed")
        if operator == "**" and (not isinstance(right, int | float) or abs(right) > 64):
            raise RenderError("** takes an exponent of at most 64")
        if operator == "*":
            if isinstance(left, int) and isinstance(right, int):
                if abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
                    raise RenderError("a product too large")
            elif isinstance(left, str | list | tuple) or isinstance(right, str | list | tuple):
                count = right if isinstance(left, str | list | tuple) else left
                seq = left if isinstance(left, str | list | tuple) else right
                if isinstance(count, int):
                    _budget().spend(output=max(count, 0) * _size(seq))
        if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
            _budget().spend(output=_size(left) + _size(right))
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, int) and not isinstance(result, bool) and result.bit_length() > MAX_INT_BITS:
            raise RenderError("a number too large")
        return result

    @staticmethod
    def bounded_iter(iterable: Any, weight: int) -> Iterator[Any]:
        budget = _budget()
        for item in iterable:
            budget.spend(operations=1, output=weight)
            yield item

    @staticmethod
    def flat(value: Any) -> Any:
        """A list, tuple or dict the template writes: paid for by its size, holding no container."""
        _refuse_nesting(value)
        _budget().spend(operations=1, output=_size(value))
        return value

    @staticmethod
    def membership(container: Any) -> _Membership:
        return _Membership(container)

    @staticmethod
    def charged_operand(container: Any) -> Any:
        _budget().spend(operations=1, output=_size(container))
        return container

    @staticmethod
    def bounded_text(text: str) -> str:
        _budget().spend(output=len(text))
        return text


@functools.cache
def _environment(html: bool) -> BoundedEnvironment:
    return BoundedEnvironment(html=html)


@functools.lru_cache(maxsize=256)
def _compiled(source: str, html: bool) -> Any:
    """The compiled template of ``source`` (keyed by the text itself: account-neutral)."""
    return _environment(html).from_string(source)


GLOBALS = frozenset({"range", "namespace", "loop"})
#: Everything ``str.splitlines`` splits on: none may reach the Subject header.
_LINE_BREAKS = frozenset("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def check_sources(version: TemplateVersion) -> None:
    """Every part compiles, under the bounds, and uses only declared variables: a
    :class:`ValidationError` naming ``locales.<locale>.<part>`` otherwise."""
    for loc, content in version.locales.items():
        for part in PARTS:
            where = f"locales.{loc}.{part}"
            source = content.part(part)
            env = _environment(part == "html")
            try:
                ast = env.parse(source)
                unknown = sorted(find_undeclared_variables(ast) - set(version.variables) - GLOBALS)
                _compiled(source, part == "html")
            except TemplateError as exc:
                raise ValidationError(where, f"line {getattr(exc, 'lineno', '?')}: {exc.message}") from None
            except (RecursionError, SyntaxError, MemoryError):  # Python's own nesting limits
                raise ValidationError(where, "nested too deeply") from None
            if unknown:
                raise ValidationError(where, f"uses undeclared variables: {', '.join(unknown)}")


@dataclass(frozen=True, slots=True)
class RenderedEmail:
    locale: str
    subject: str
    text: str
    html: str


__all__ = ["RenderError", "RenderedEmail", "check_sources", "render_version"]


def render_version(version: TemplateVersion, locale: str | None, data: dict[str, Any]) -> RenderedEmail:
    """The subject, text and HTML of ``version`` in ``locale`` (looked up, then the default) with
    ``data``: a pure function of the three. :class:`ValidationError` (``data.<name>``) when the data
    does not carry a declared variable with its type; :class:`RenderError` when the template cannot
    be rendered with it (bounds, a refused operation, an undefined attribute)."""
    values = typed_data(version.variables, data)
    chosen = version.locale_for(locale)
    content = version.locales[chosen]
    token = _BUDGET.set(_Budget())
    try:
        out: dict[str, str] = {}
        for part, limit in (("subject", MAX_SUBJECT), ("text", MAX_TEXT), ("html", MAX_HTML)):
            try:
                text = _compiled(content.part(part), part == "html").render(values)
            except RenderError:
                raise
            except TemplateError as exc:
                raise RenderError(f"{part}: {exc.message}") from None
            except (
                ArithmeticError,
                AttributeError,
                TypeError,
                ValueError,
                LookupError,
                RecursionError,
            ) as exc:
                raise RenderError(f"{part}: {type(exc).__name__}") from None
            if len(text) > limit:
                raise RenderError(f"the rendered {part} is longer than {limit} characters")
            out[part] = text
    finally:
        _BUDGET.reset(token)
    if any(c in _LINE_BREAKS or (ord(c) < 32 and c != "\t") or ord(c) == 127 for c in out["subject"]):
        raise RenderError("the rendered subject contains a line break (CR or LF) or a control character")
    return RenderedEmail(chosen, out["subject"].strip(), out["text"], out["html"])
