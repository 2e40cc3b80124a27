"""schemathesis against the API as the template wires it: the synthesized stack's HTTP API routes in
front of its ApiFunction handler, served on 127.0.0.1 by the local runtime's HTTP API (each request an
API Gateway payload-2.0 event), on moto. Every operation of ``/openapi.json`` gets schema-conforming
and schema-violating requests from a fixed seed; no answer may be a 5xx, and every answer must be
one the document describes (status code, content type, body schema). Beside it, from the same
document: every method on every path, every content type on every operation, and schemathesis'
stateful run over the document's links (create -> read -> correct -> delete). Each part is
budgeted in examples; each counts, server side, the requests that reached every operation, and
fails when the document has an operation it did not exercise (or the template a route the
document lacks), so a new route cannot escape the fuzzer.

Also here: routes and methods the template does not have are answered as API Gateway HTTP APIs
answer them (404 ``{"message":"Not Found"}``), and the document lists every status the API returns.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.infra.conftest import Synthesized

SEED = 20261201
EXAMPLES_PER_OPERATION_AND_MODE = 100
#: Generated content types (and bodies) per operation.
CONTENT_TYPE_EXAMPLES_PER_OPERATION = 12
#: The stateful run over the document's links: scenarios (a creation, then every link in a drawn
#: order, each followed when an answer of the scenario starts it).
STATEFUL_SCENARIOS = 40
#: Every method tried on every documented path: API Gateway's, and ones no HTTP API route can name.
METHODS = (
    "GET",
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "HEAD",
    "OPTIONS",
    "TRACE",
    "CONNECT",
    "PROPFIND",
    "X-FUZZ",
)
HTTP_API_METHODS = frozenset(METHODS[:7])


def _resolve(host: str, port: int) -> list[str]:
    """No DNS in tests: every generated host name resolves to one public address (so the request
    goes on past the SSRF guard and reaches the store)."""
    return ["93.184.216.34"]


Operation = tuple[str, str]  # (METHOD, documented path)


def _documented(doc: dict[str, Any]) -> list[Operation]:
    return [(method.upper(), path) for path, ops in doc["paths"].items() for method in ops]


def _operation_of(method: str, path: str, documented: list[Operation]) -> Operation | None:
    """The documented operation a request reached: its method, the path template matching the
    path with the most literal segments (as the router picks ``/reminders/preview`` over
    ``/reminders/{reminder_id}``)."""
    best: tuple[int, Operation] | None = None
    for op_method, template in documented:
        if op_method != method:
            continue
        segments = template.split("/")
        pattern = "/".join("[^/]+" if s.startswith("{") else re.escape(s) for s in segments)
        if re.fullmatch(pattern, path):
            literal = sum(1 for s in segments if not s.startswith("{"))
            if best is None or literal > best[0]:
                best = (literal, (op_method, template))
    return best[1] if best else None


def _unexercised(documented: list[Operation], seen: list[tuple[str, str, int]]) -> list[str]:
    """The documented operations no request of ``seen`` reached (as ``METHOD path``)."""
    reached = Counter(_operation_of(m, p, documented) for m, p, _ in seen)
    return [f"{m} {p}" for m, p in documented if not reached[(m, p)]]


@dataclass
class LocalApi:
    url: str
    port: int
    #: every request the server answered: (method, path, status), recorded server side
    seen: list[tuple[str, str, int]] = field(default_factory=list)

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, str, Any]:
        """One request; the answer's body parsed as JSON when it says it is JSON, else its text."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers={"content-type": content_type})
            resp = conn.getresponse()
            raw = resp.read()
            media = resp.getheader("content-type") or ""
            payload = json.loads(raw) if raw and media.startswith("application/json") else raw.decode()
            return resp.status, media, payload or None
        finally:
            conn.close()


@pytest.fixture(scope="module")
def local_api(synthesized: Synthesized) -> Iterator[LocalApi]:
    from moto import mock_aws
    from reminders import runtime
    from reminders.adapters.destinations import DestinationPolicy
    from reminders_ops.local.http_api import HttpApi
    from reminders_ops.local.lambdas import LocalFunction
    from reminders_ops.local.spec import FunctionSpec, RouteSpec
    from reminders_ops.provision import Inventory

    from tests.support.aws import create_resources

    inv = Inventory.from_template(synthesized.template)
    routes = [RouteSpec(r.route_key, r.function, r.authorization_type) for r in inv.routes if r.function]
    assert routes, "the template has no API routes"
    functions = {}
    for fid in {r.function_id for r in routes}:
        f = inv.functions[fid]
        spec = FunctionSpec(fid, f.name, f.handler, float(f.timeout_seconds), f.memory_mb, {})
        functions[fid] = LocalFunction(spec, "111111111111", "us-east-1")
    policy = DestinationPolicy(resolver=_resolve)
    with mock_aws(), pytest.MonkeyPatch.context() as mp:
        for k, v in create_resources().items():
            mp.setenv(k, v)
        mp.delenv("ALLOW_DESTINATION_NETWORKS")  # as in AWS: no loopback destinations
        mp.setenv("UNSUBSCRIBE_SIGNING_SECRET", "fuzz-unsubscribe-key")  # issue 19: tokens verify
        mp.setattr(runtime, "destination_policy", functools.cache(lambda: policy))
        runtime.reset()
        # The fuzz reaches the handlers: it trusts the caller (no SigV4; test_local_sigv4.py covers it).
        api = HttpApi(routes, functions, account_id="111111111111", port=0, host="127.0.0.1", sigv4=False)
        local = LocalApi(api.url, int(api.server.server_address[1]))
        answer = api.handle

        def recorded(method: str, target: str, *rest: Any) -> tuple[int, list[tuple[str, str]], bytes]:
            out = answer(method, target, *rest)
            local.seen.append((method.upper(), urlsplit(target).path, out[0]))
            return out

        api.handle = recorded  # type: ignore[method-assign]
        api.start()
        try:
            yield local
        finally:
            api.stop()
            runtime.reset()
    runtime.reset()


def _fuzz(
    op: Any,
    mode: GenerationMode,
    base_url: str,
    checks: list[Any],
    findings: dict[str, list[str]],
    label: str,
) -> int:
    """Run one operation in one generation mode; findings are collected, not raised. Returns the count."""
    count = 0

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES_PER_OPERATION_AND_MODE,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=op.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        nonlocal count
        count += 1
        try:
            case.call_and_validate(base_url=base_url, checks=checks)
        except (Exception, BaseExceptionGroup) as exc:  # a finding: keep going, report all at the end
            text = str(exc)
            kinds = [line.strip("- ").strip() for line in text.splitlines() if line.startswith("- ")]
            status = re.search(r"\[(\d{3})\]", text)
            kind = f"{label}: {'; '.join(kinds) or type(exc).__name__} ({status.group(1) if status else '?'})"
            findings.setdefault(kind, []).append(text[:1500])

    try:
        run()
    except Unsatisfiable:  # nothing to violate (GET /health has no parameters): no negative requests
        assert mode is GenerationMode.NEGATIVE, label
    return count


def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(local_api: LocalApi) -> None:
    import schemathesis
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    _, _, doc = local_api.request("GET", "/openapi.json")
    # schemathesis leaves out the operation it loads the document from (GET /openapi.json): its
    # load is that operation's request here (the coverage check below found it missing)
    first = len(local_api.seen)
    schema = schemathesis.openapi.from_url(f"{local_api.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 6, [op.label for op in operations]
    findings: dict[str, list[str]] = {}  # kind of finding -> its reports
    examples: dict[str, int] = {}
    started = time.monotonic()
    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            label = f"{op.label} [{mode.value}]"
            examples[label] = _fuzz(op, mode, local_api.url, checks, findings, label)
    elapsed = time.monotonic() - started  # reported, not asserted: the run is budgeted in examples
    total = sum(examples.values())
    print(f"\nschemathesis: {total} requests over {len(examples)} operation/mode pairs in {elapsed:.1f} s")
    summary = "\n".join(f"{len(v):4d} x {k}" for k, v in sorted(findings.items()))
    assert not findings, summary + "\n\n" + "\n\n".join(v[0] for v in findings.values())
    assert total >= len(operations) * 2 * 10, examples  # it really generated requests
    assert not _unexercised(_documented(doc), local_api.seen[first:]), "operations the run never reached"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/nope"),
        ("GET", "/reminders/rem_0123456789abcdef0123456789abcdef/history"),
        ("PUT", "/reminders"),
        ("POST", "/health"),
        ("DELETE", "/openapi.json"),
        ("HEAD", "/nope"),
        ("GET", "/"),
    ],
)
def test_unknown_routes_and_methods_are_404_json_as_api_gateway_answers(
    local_api: LocalApi, method: str, path: str
) -> None:
    status, content_type, body = local_api.request(method, path)
    assert status == 404
    if method != "HEAD":
        assert content_type.startswith("application/json") and body == {"message": "Not Found"}


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "CONNECT", "FOO"])
@pytest.mark.parametrize("path", ["/reminders", "/health", "/reminders/rem_0123456789abcdef0123456789abcdef"])
def test_unknown_method_answers_api_gateway_404_json(local_api: LocalApi, method: str, path: str) -> None:
    status, content_type, body = local_api.request(method, path)
    assert (status, body) == (404, {"message": "Not Found"}), body
    assert content_type.startswith("application/json")


@pytest.mark.parametrize(
    "resource", ["reminders/rem_0123456789abcdef0123456789abcdef", "endpoints/ep_" + "0" * 32]
)
@pytest.mark.parametrize("content_type", ["multipart/form-data", "multipart/form-data; boundary=x"])
def test_multipart_body_on_patch_answers_4xx_not_500(
    local_api: LocalApi, resource: str, content_type: str
) -> None:
    body = json.dumps({"description": "x", "data": {"seats": 1}}).encode()
    status, media, err = local_api.request("PATCH", f"/{resource}", body, content_type)
    assert status == 415, err
    assert media.startswith("application/json") and err["field"] == "content-type"
    assert "multipart/form-data" in err["message"] and "application/json" in err["message"]


def test_a_body_in_a_content_type_an_operation_does_not_take_is_415_naming_it(local_api: LocalApi) -> None:
    """Every operation with a request body takes application/json (any case, any parameters) and
    nothing else; a body in another media type is refused before it is parsed, whatever its bytes."""
    _, _, doc = local_api.request("GET", "/openapi.json")
    with_body = [
        (method.upper(), _concrete(path))
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if "requestBody" in op
    ]
    assert len(with_body) >= 6, with_body
    refused = [
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=----x",
        "text/plain",
        "application/xml",
        "application/json-patch+json",
        "application/jsonx",
    ]
    for method, path in with_body:
        for content_type in refused:
            status, media, err = local_api.request(method, path, b'{"a":1}', content_type)
            assert status == 415 and media.startswith("application/json"), (method, path, content_type, err)
            assert err["field"] == "content-type" and content_type.split(";")[0] in err["message"], err
        for content_type in ("Application/JSON", "application/json; charset=utf-8"):
            status, _, err = local_api.request(method, path, b"[]", content_type)
            assert status == 422, (method, path, content_type, err)  # parsed as JSON: not one object


def _concrete(path: str) -> str:
    """A documented path with each parameter filled in by a value of its shape."""
    values = {
        "reminder_id": "rem_" + "0" * 32,
        "endpoint_id": "ep_" + "0" * 32,
        "account_id": "acct-1",
        "address_hash": "0" * 64,
        "token": "x.y",
    }
    return re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), "x"), path)


def test_a_path_the_route_matches_but_the_function_does_not_is_404_json_too(local_api: LocalApi) -> None:
    """``/reminders/`` reaches the function through ``GET /reminders`` (trailing slash): its own
    not-found answer has the API Gateway shape as well."""
    status, _, body = local_api.request("GET", "/reminders/")
    assert status in (404, 422)
    if status == 404:
        assert body == {"message": "Not Found"}


def test_the_openapi_document_lists_every_status_each_operation_can_return(local_api: LocalApi) -> None:
    _, _, doc = local_api.request("GET", "/openapi.json")
    statuses = {
        (path, method): set(op["responses"])
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
    }
    assert {"201", "200", "409", "422", "503"} <= statuses[("/reminders", "post")]
    assert {"200", "404", "422"} <= statuses[("/reminders", "get")]
    assert {"200", "404", "422"} <= statuses[("/reminders/{reminder_id}", "get")]
    assert {"200", "404", "409", "422"} <= statuses[("/reminders/{reminder_id}", "patch")]
    assert {"200", "404", "409", "422"} <= statuses[("/reminders/{reminder_id}", "delete")]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert ("415" in op["responses"]) == ("requestBody" in op), (path, method)
    for (path, method), codes in statuses.items():
        for code in codes - {"200", "201"}:
            media = doc["paths"][path][method]["responses"][code].get("content", {})
            assert "application/json" in media, (path, method, code)


# -- every method, every content type, the links: the rest of "every request" (issue 24 item 10) --
def test_every_method_on_every_documented_path_answers_as_api_gateway(local_api: LocalApi) -> None:
    """Each method of ``METHODS`` on each documented path (its parameters filled in): never a 5xx,
    always JSON; a method no route names, or one no documented operation of that path takes, is
    API Gateway's 404 ``{"message": "Not Found"}`` unless another route's template takes it (a
    ``PATCH /reminders/preview`` reaches ``PATCH /reminders/{reminder_id}``: a 422)."""
    _, _, doc = local_api.request("GET", "/openapi.json")
    documented = _documented(doc)
    first = len(local_api.seen)
    for template in doc["paths"]:
        path = _concrete(template)
        for method in METHODS:
            status, media, body = local_api.request(method, path, b"{}")
            label = (method, path, status, body)
            assert status < 500, label
            if method != "HEAD":
                assert media.startswith("application/json"), label
            if method not in HTTP_API_METHODS or _operation_of(method, path, documented) is None:
                assert status == 404, label
                if method != "HEAD":
                    assert body == {"message": "Not Found"}, label
    assert not _unexercised(documented, local_api.seen[first:])
    assert {m for m, _, _ in local_api.seen[first:]} == set(METHODS)


def _media_types() -> st.SearchStrategy[str]:
    """Content types: the ones clients send, their spellings, and printable nonsense."""
    token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.+-", min_size=1, max_size=16)
    return st.one_of(
        st.sampled_from(
            [
                "application/json",
                "Application/JSON; charset=UTF-8",
                "application/x-www-form-urlencoded",
                "multipart/form-data",
                "multipart/form-data; boundary=b",
                "text/plain",
                "application/xml",
                "application/octet-stream",
                "application/json-patch+json",
                "",
            ]
        ),
        st.builds(
            lambda t, s, p: f"{t}/{s}{p}", token, token, st.sampled_from(["", "; charset=utf-8", ";", "; x"])
        ),
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    )


def _bodies() -> st.SearchStrategy[bytes]:
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=6,
    )
    form = st.sampled_from(
        [b"a=1&b=2", b"--b\r\ncontent-disposition: form-data; name=a\r\n\r\n1\r\n--b--\r\n"]
    )
    return st.one_of(st.binary(max_size=64), json_values.map(lambda v: json.dumps(v).encode()), form)


def _content_types_run(local_api: LocalApi, method: str, path: str, taken: set[str]) -> Any:
    @seed(SEED)
    @settings(
        max_examples=CONTENT_TYPE_EXAMPLES_PER_OPERATION,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(content_type=_media_types(), body=_bodies())
    def run(content_type: str, body: bytes) -> None:
        status, media, answer = local_api.request(method, path, body, content_type)
        label = (method, path, content_type, status, answer)
        assert status < 500 and (method == "HEAD" or media.startswith("application/json")), label
        given_media = content_type.split(";", 1)[0].strip().lower()
        if taken and content_type.strip() and given_media not in taken:
            assert status == 415 and answer["field"] == "content-type", label
            assert given_media[:100] in answer["message"], label
        else:
            assert status != 415, label

    return run


def test_every_content_type_on_every_operation_is_taken_or_a_415_naming_it(local_api: LocalApi) -> None:
    """Each documented operation, with generated content types and bodies (``CONTENT_TYPE_EXAMPLES_
    PER_OPERATION`` each): never a 5xx; an operation with a body answers a media type its document
    does not list with a 415 naming it (nothing parsed, nothing written)."""
    _, _, doc = local_api.request("GET", "/openapi.json")
    documented = _documented(doc)
    first = len(local_api.seen)
    for method, template in documented:
        op = doc["paths"][template][method.lower()]
        taken = {m.lower() for m in op.get("requestBody", {}).get("content", {})}
        _content_types_run(local_api, method, _concrete(template), taken)()
    assert not _unexercised(documented, local_api.seen[first:])


def _pointer(document: Any, expression: Any) -> Any:
    """A link's value: ``$response.body#/a/b`` read from the answer (None when absent); a dict or list
    of them, each read; anything else as it is."""
    if isinstance(expression, dict):
        return {k: _pointer(document, v) for k, v in expression.items()}
    if not isinstance(expression, str) or not expression.startswith("$response.body#"):
        return expression
    value = document
    for part in expression.removeprefix("$response.body#").split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _creations() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """Bodies the creating operations take (generated ones rarely pass the URL guard and the due
    range): reminders with email or webhook channels, endpoints, keys drawn so some repeat."""
    key = st.sampled_from(["fuzz:a", "fuzz:b"])
    account = st.sampled_from(["acct-fuzz-1", "acct-fuzz-2"])
    channel = st.one_of(
        st.just({"type": "email", "to": "user@example.com"}),
        st.sampled_from(["a", "b"]).map(
            lambda p: {"type": "webhook", "url": f"https://hooks.example.com/{p}"}
        ),
    )
    reminder = st.fixed_dictionaries(
        {
            "key": key,
            "account_id": account,
            "kind": st.just("renewal"),
            "due_at": st.integers(60, 30 * 86400).map(
                lambda s: (datetime.now(UTC) + timedelta(seconds=s)).isoformat()
            ),
            "channels": st.lists(channel, min_size=1, max_size=2),
            "template": st.just({"id": "renewal", "version": 1}),
        }
    )
    endpoint = st.fixed_dictionaries(
        {
            "account_id": account,
            "url": st.sampled_from(["https://hooks.example.com/e", "https://b.example.org/e"]),
        },
        optional={"bare_urls": st.booleans(), "rate_per_second": st.sampled_from([1.0, 50.0])},
    )
    return st.one_of(reminder.map(lambda b: ("/reminders", b)), endpoint.map(lambda b: ("/endpoints", b)))


def test_every_link_of_the_document_is_followed_with_no_server_error(local_api: LocalApi) -> None:
    """A state machine over the document's links (the stateful part): a step creates a reminder or
    an endpoint, or follows a link of an answer it got (schemathesis generates the rest of the
    target's request around the linked values: correct, rotate, enable, register as the event
    endpoint, delete, ...) and feeds that answer back. No 5xx, every answer one the document
    describes, and every link of the document followed within ``STATEFUL_SCENARIOS`` scenarios."""
    import schemathesis
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    _, _, doc = local_api.request("GET", "/openapi.json")
    links: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}  # (METHOD path, status) -> links
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for status, answer in op["responses"].items():
                for name, link in answer.get("links", {}).items():
                    links.setdefault((f"{method.upper()} {path}", status), []).append((name, link))
    names = {name for found in links.values() for name, _ in found}
    assert len(names) >= 10, names
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    schema = schemathesis.openapi.from_url(f"{local_api.url}/openapi.json")
    by_ref = {
        "#/paths/" + op.path.replace("~", "~0").replace("/", "~1") + "/" + op.method.lower(): op
        for op in (result.ok() for result in schema.get_all_operations())
    }
    every_link = sorted(
        {
            name: (name, link, by_ref[link["operationRef"]])
            for found in links.values()
            for name, link in found
        }.values(),
        key=lambda x: x[0],
    )
    cases = {name: target.as_strategy() for name, _, target in every_link}
    starts: dict[tuple[str, str], set[str]] = {
        source: {n for n, _ in found} for source, found in links.items()
    }
    followed: Counter[str] = Counter()
    created = Counter[str]()

    @seed(SEED)
    @settings(
        max_examples=STATEFUL_SCENARIOS,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],  # a failure is reported as found: a replay meets another state
    )
    @given(data=st.data())
    def scenario(data: st.DataObject) -> None:
        # The same draws whatever the server answers (its state is outside Hypothesis' replay):
        # a drawn link that starts at no answer of this scenario sends nothing.
        path, body = data.draw(_creations())
        created["n"] += 1
        if "key" in body:
            body["key"] += f":{created['n']}"
        status, _, answer = local_api.request("POST", path, json.dumps(body).encode())
        assert status < 500, (path, body, answer)
        answers = [(f"POST {path}", str(status), answer)]
        # Each link once, in drawn order, in two passes: one whose source answer came only later
        # (delete the event endpoint before it was registered) gets its turn in the second, so the
        # order Hypothesis favours (close to the sorted one) cannot starve a link of a later answer.
        order = data.draw(st.permutations(every_link))
        done: set[str] = set()
        for name, link, target in [*order, *order]:
            if name in done:
                continue
            case = data.draw(cases[name])
            source = next((a for a in reversed(answers) if name in starts.get(a[:2], set())), None)
            if source is None:
                continue
            done.add(name)
            values = {k: _pointer(source[2], v) for k, v in link.get("parameters", {}).items()}
            for param in target.path_parameters:
                if param.name in values:
                    case.path_parameters = {**(case.path_parameters or {}), param.name: values[param.name]}
            for param in target.query:
                if param.name in values:
                    case.query = {**(case.query or {}), param.name: values[param.name]}
            if "requestBody" in link:
                case.body = _pointer(source[2], link["requestBody"])
            response = case.call(base_url=local_api.url)
            case.validate_response(response, checks=checks)
            followed[name] += 1
            with contextlib.suppress(ValueError):  # an answer that is not JSON starts no link
                answers.append(
                    (f"{target.method.upper()} {target.path}", str(response.status_code), response.json())
                )

    first = len(local_api.seen)
    scenario()
    print(f"\nstateful: {len(local_api.seen) - first} requests, links followed: {dict(followed)}")
    assert names <= set(followed), sorted(names - set(followed))


def test_every_route_of_the_template_is_an_operation_of_the_document(
    local_api: LocalApi, synthesized: Synthesized
) -> None:
    """The fuzz parts take their operations from /openapi.json: a route the template has and the
    document lacks would escape them."""
    from reminders_ops.provision import Inventory

    _, _, doc = local_api.request("GET", "/openapi.json")
    documented = {(m, re.sub(r"\{[^}]+\}", "{}", p)) for m, p in _documented(doc)}
    routes = {r.route_key for r in Inventory.from_template(synthesized.template).routes}
    missing = [
        key
        for key in routes
        if key != "$default"
        and (key.split(" ", 1)[0], re.sub(r"\{[^}]+\}", "{}", key.split(" ", 1)[1])) not in documented
    ]
    assert not missing, missing


def test_the_coverage_check_names_an_operation_no_request_reached() -> None:
    """What each fuzz part asserts last: an operation added to the document and never reached is
    named (and a request reaches the most literal template)."""
    documented = [("GET", "/reminders/{reminder_id}"), ("GET", "/reminders/preview"), ("POST", "/things")]
    seen = [("GET", "/reminders/preview", 200), ("GET", "/reminders/rem_1", 404), ("DELETE", "/things", 404)]
    assert _unexercised(documented, seen) == ["POST /things"]
    assert _operation_of("GET", "/reminders/preview", documented) == ("GET", "/reminders/preview")
    assert _unexercised(documented, [*seen, ("POST", "/things", 201)]) == []
