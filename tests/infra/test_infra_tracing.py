"""Issue 31 item 4: every function traces actively (X-Ray), writes to X-Ray and nowhere else for it,
and its Tracer records neither responses nor errors (nothing personal in a trace)."""

from __future__ import annotations

from typing import Any


def _functions(synthesized: Any) -> dict[str, Any]:
    return {k: r for k, r in synthesized.resources.items() if r["Type"] == "AWS::Lambda::Function"}


def test_function_is_refused_when_it_does_not_trace_actively(synthesized: Any) -> None:
    functions = _functions(synthesized)
    assert functions
    for lid, r in functions.items():
        props = r["Properties"]
        assert props.get("TracingConfig") == {"Mode": "Active"}, lid
        env = props["Environment"]["Variables"]
        assert env.get("POWERTOOLS_TRACER_CAPTURE_RESPONSE") == "false", lid
        assert env.get("POWERTOOLS_TRACER_CAPTURE_ERROR") == "false", lid


def test_function_role_may_write_traces(synthesized: Any) -> None:
    roles = {r["Properties"]["Role"]["Fn::GetAtt"][0] for r in _functions(synthesized).values()}
    policies = [r for r in synthesized.resources.values() if r["Type"] == "AWS::IAM::Policy"]
    for role in roles:
        actions: set[str] = set()
        for p in policies:
            if {"Ref": role} in p["Properties"].get("Roles", []):
                for st in p["Properties"]["PolicyDocument"]["Statement"]:
                    a = st["Action"]
                    actions.update([a] if isinstance(a, str) else a)
        assert {"xray:PutTraceSegments", "xray:PutTelemetryRecords"} <= actions, role
