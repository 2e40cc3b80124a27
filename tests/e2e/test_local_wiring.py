"""Every SQS event source mapping, scheduled rule and API route of the synthesized template is run by
``reminders local`` — none silently skipped — and it stops cleanly on SIGTERM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .local_process import TEMPLATE, http, local_runtime

pytestmark = pytest.mark.e2e


def _template() -> dict:
    if not TEMPLATE.exists():
        pytest.skip(f"{TEMPLATE} missing: run `make synth`")
    return json.loads(TEMPLATE.read_text())


def _of_type(template: dict, rtype: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == rtype}


def test_every_mapping_rule_and_route_of_the_template_is_wired(tmp_path: Path) -> None:
    template = _template()
    with local_runtime(tmp_path) as info:
        wired = info["wired"]
        assert info["unwired"] == []
        mappings = _of_type(template, "AWS::Lambda::EventSourceMapping")
        assert mappings, "the template has no event source mappings?"
        assert set(wired["mappings"]) == set(mappings)
        functions = _of_type(template, "AWS::Lambda::Function")
        for lid, m in mappings.items():
            w = wired["mappings"][lid]
            assert w["running"], lid
            assert w["function"] == m["Properties"]["FunctionName"]["Ref"]
            assert w["handler"] == functions[w["function"]]["Properties"]["Handler"]
            limit = m["Properties"].get("ScalingConfig", {}).get("MaximumConcurrency")
            assert 1 <= w["concurrency"] <= (limit or 1000)
        rules = _of_type(template, "AWS::Events::Rule")
        assert set(wired["rules"]) == set(rules)
        for lid, r in rules.items():
            if "ScheduleExpression" in r["Properties"]:
                assert wired["rules"][lid]["schedule"] == r["Properties"]["ScheduleExpression"]
            else:  # an event pattern: on the local bus, fed by a local event source
                assert wired["rules"][lid]["event_pattern"] == r["Properties"]["EventPattern"]
            targets = [t["Arn"]["Fn::GetAtt"][0] for t in r["Properties"]["Targets"]]
            assert wired["rules"][lid]["targets"] == targets
        routes = {
            r["Properties"]["RouteKey"] for r in _of_type(template, "AWS::ApiGatewayV2::Route").values()
        }
        assert set(wired["routes"]) == routes
        # Each route to the function the template integrates it with (issue 24 item 8: the public
        # routes to PublicFunction, every other route to ApiFunction).
        integrations = _of_type(template, "AWS::ApiGatewayV2::Integration")
        integrated = {
            r["Properties"]["RouteKey"]: integrations[r["Properties"]["Target"]["Fn::Join"][1][1]["Ref"]][
                "Properties"
            ]["IntegrationUri"]["Fn::GetAtt"][0]
            for r in _of_type(template, "AWS::ApiGatewayV2::Route").values()
        }
        assert wired["routes"] == integrated
        public = {
            key
            for key, fn in integrated.items()
            if functions[fn]["Properties"]["Handler"].endswith(".public.handler")
        }
        assert public == {"POST /unsubscribe/{token}", "POST /inbound/receiver"}
        status, answer = http("POST", info["api"] + "/unsubscribe/not.atoken")
        assert status == 400 and answer["error"] == "invalid_token"  # served, by PublicFunction
        status, doc = http("GET", info["api"] + "/openapi.json")
        assert status == 200 and doc["info"]["title"]
        status, _ = http("GET", info["api"] + "/nowhere")
        assert status == 404
        proc_out = info["_stdout"]
    assert "reminders local: stopped" in proc_out.read_text()
