"""schemathesis against the API as the template wires it: the synthesized stack's HTTP API routes in
front of its ApiFunction handler, served on 127.0.0.1 by the local runtime's HTTP API (each request an
API Gateway payload-2.0 event), on moto. Every operation of ``/openapi.json`` gets schema-conforming
and schema-violating requests from a fixed seed; no answer may be a 5xx, and every answer must be
one the document describes (status code, content type, body schema).

Also here: routes and methods the template does not have are answered as API Gateway HTTP APIs
answer them (404 ``{"message":"Not Found"}``), and the document lists every status the API returns.
"""

from __future__ import annotations

import functools
import http.client
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.infra.conftest import Synthesized

SEED = 20261201
EXAMPLES_PER_OPERATION_AND_MODE = 100
BUDGET_SECONDS = (
    720  # 36 operation/mode pairs since issue 16's event endpoint (30 after 15, 18, 19); 314 s seen at 30
)


def _resolve(host: str, port: int) -> list[str]:
    """No DNS in tests: every generated host name resolves to one public address (so the request
    goes on past the SSRF guard and reaches the store)."""
    return ["93.184.216.34"]


@dataclass
class LocalApi:
    url: str
    port: int
    stats: dict[str, int] = field(default_factory=dict)

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
    from reminders_ops.template import Inventory

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
        api = HttpApi(routes, functions, account_id="111111111111", port=0, host="127.0.0.1").start()
        try:
            port = int(api.server.server_address[1])
            yield LocalApi(api.url, port, {})
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
    elapsed = time.monotonic() - started
    total = sum(examples.values())
    print(f"\nschemathesis: {total} requests over {len(examples)} operation/mode pairs in {elapsed:.1f} s")
    summary = "\n".join(f"{len(v):4d} x {k}" for k, v in sorted(findings.items()))
    assert not findings, summary + "\n\n" + "\n\n".join(v[0] for v in findings.values())
    assert total >= len(operations) * 2 * 10, examples  # it really generated requests
    assert elapsed < BUDGET_SECONDS


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
