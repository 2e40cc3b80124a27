"""The template copy `sam local invoke` runs differs from the synthesized one only where it says."""

from __future__ import annotations

import copy
from typing import Any

from reminders_ops.provision import Inventory
from reminders_ops.samlocal import LOCAL_ONLY_VARIABLES, env_vars, local_template

from .conftest import Synthesized


def without_local_changes(template: dict[str, Any]) -> dict[str, Any]:
    stripped = copy.deepcopy(template)
    for resource in stripped["Resources"].values():
        if resource["Type"] == "AWS::Lambda::Function":
            resource["Properties"].pop("Timeout", None)
            variables = resource["Properties"]["Environment"]["Variables"]
            for name in LOCAL_ONLY_VARIABLES:
                variables.pop(name, None)
    return stripped


def test_the_local_copy_only_declares_the_local_variables_and_raises_timeouts(
    synthesized: Synthesized,
) -> None:
    original = synthesized.template
    local = local_template(original, timeout_seconds=300)
    assert without_local_changes(local) == without_local_changes(original)
    for lid, spec in Inventory.from_template(local).functions.items():
        assert spec.timeout_seconds == 300, lid
        for name in LOCAL_ONLY_VARIABLES:
            assert spec.environment[name] == ""
    assert local_template(original, timeout_seconds=None)["Resources"] != original["Resources"]
    kept = Inventory.from_template(local_template(original, timeout_seconds=None)).functions
    assert {lid: s.timeout_seconds for lid, s in kept.items()} == {
        lid: s.timeout_seconds for lid, s in Inventory.from_template(original).functions.items()
    }


def test_env_vars_name_every_function_with_the_endpoint() -> None:
    class Provisioned:
        environments = {"Fn1": {"TABLE_NAME": "t"}}

    assert env_vars(Provisioned(), endpoint="http://172.17.0.1:5000") == {  # type: ignore[arg-type]
        "Fn1": {
            "TABLE_NAME": "t",
            "AWS_ENDPOINT_URL": "http://172.17.0.1:5000",
            "ALLOW_DESTINATION_NETWORKS": "",
        }
    }
