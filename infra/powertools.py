"""The public Powertools for AWS Lambda (Python) layer: which layer version ships which release.

AWS publishes one layer version per Powertools release (the same number for every region, runtime
and architecture of the V3 layers). The functions run the Powertools of the layer, not the one
``pyproject.toml`` pins for the tests, so the layer version is derived from the pin through this
table and synthesis fails on a pin the table does not know.

Anchors from Powertools' own documentation: 3.23.0 is layer 27 (docs, 2025-11) and layer 37 was
current on 2026-09-04, when 3.34.0 was the latest release; the releases between (3.24.0 … 3.31.1,
3.34.0, one layer each) account for exactly those ten versions, and 3.35.0, 3.36.0 and 3.37.0
followed as 38, 39 and 40.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = "aws-lambda-powertools"

#: Powertools release -> public layer version (AWSLambdaPowertoolsPythonV3-<runtime>-<arch>:<n>).
LAYER_VERSIONS: dict[str, int] = {
    "3.23.0": 27,
    "3.24.0": 28,
    "3.25.0": 29,
    "3.26.0": 30,
    "3.27.0": 31,
    "3.28.0": 32,
    "3.29.0": 33,
    "3.30.0": 34,
    "3.31.0": 35,
    "3.31.1": 36,
    "3.34.0": 37,
    "3.35.0": 38,
    "3.36.0": 39,
    "3.37.0": 40,
}


def pinned_release(pyproject: Path = PYPROJECT) -> str:
    """The ``aws-lambda-powertools==X`` pin of the project's runtime dependencies."""
    dependencies = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    for requirement in dependencies:
        match = re.fullmatch(rf"{PACKAGE}(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.]*)", requirement.replace(" ", ""))
        if match:
            return match.group(1)
    raise ValueError(f"{pyproject} pins no exact {PACKAGE}==<version>")


def layer_version(release: str) -> int:
    try:
        return LAYER_VERSIONS[release]
    except KeyError:
        raise ValueError(
            f"{PACKAGE} {release} has no known public layer version: add it to infra/powertools.py "
            "from the Powertools documentation (Lambda layer ARNs)"
        ) from None
