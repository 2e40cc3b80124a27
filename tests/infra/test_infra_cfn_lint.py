"""cfn-lint finds nothing in the synthesized template (errors and warnings)."""

from __future__ import annotations

import json

from cfnlint.api import lint
from cfnlint.config import ManualArgs

from .conftest import Synthesized


def test_synthesized_template_is_cfn_lint_clean(synthesized: Synthesized) -> None:
    region = synthesized.context["reminders:region"]
    matches = lint(json.dumps(synthesized.template), config=ManualArgs(regions=[region]))
    assert [str(m) for m in matches] == []
