"""Checks a built Lambda layer directory before it ships (``make layer``, ``make sam-test``).

- Every wheel installed into it is pure Python or ``manylinux`` with a glibc tag <= 2.34: the
  Lambda Python 3.13 runtime is Amazon Linux 2023 (glibc 2.34); a newer tag would fail to load there.
- ``--deps`` (the project's dependency layer): nothing in it shadows what the public Powertools
  layer brings (``aws_lambda_powertools``, ``pydantic``, ``pydantic_core``), since the deps layer
  comes later in the function's layer list and would win on ``/opt/python``; and no ``.pyc`` built
  by this machine's Python rides along.

Exit status 1 with one line per problem.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MAX_GLIBC = (2, 34)
#: Distributions the public Powertools layer provides; the deps layer must not carry its own.
POWERTOOLS_LAYER_PROVIDES = {"aws-lambda-powertools", "pydantic", "pydantic-core", "typing-extensions"}
_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def platform_problem(tag: str) -> str | None:
    """None when a wheel's platform tag runs on glibc 2.34, else why not."""
    if tag == "any":
        return None
    for legacy, glibc in _LEGACY_MANYLINUX.items():
        if tag.startswith(legacy + "_"):
            return None if glibc <= MAX_GLIBC else f"{tag} needs glibc {glibc}"
    match = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", tag)
    if match:
        glibc = (int(match.group(1)), int(match.group(2)))
        return None if glibc <= MAX_GLIBC else f"{tag} needs glibc {glibc[0]}.{glibc[1]} > 2.34"
    return f"{tag} is not a manylinux tag"


def wheel_tag_problems(site: Path) -> list[str]:
    problems = []
    for wheel in sorted(site.glob("*.dist-info/WHEEL")):
        tags = [
            line.split(":", 1)[1].strip()
            for line in wheel.read_text().splitlines()
            if line.startswith("Tag:")
        ]
        for tag in tags:
            platform = tag.rsplit("-", 1)[-1]
            # A wheel may carry several compressed platforms (manylinux2014_x.manylinux_2_17_x).
            reasons = [platform_problem(p) for p in platform.split(".")]
            if all(reasons):
                problems.append(f"{wheel.parent.name}: {'; '.join(r for r in reasons if r)}")
    return problems


def shadow_problems(site: Path) -> list[str]:
    problems = []
    for dist in sorted(site.glob("*.dist-info")):
        name = _canonical(dist.name.split("-")[0])
        if name in POWERTOOLS_LAYER_PROVIDES:
            problems.append(
                f"{dist.name}: shadows the Powertools layer's {name}; drop it from the requirements"
            )
    for pyc in sorted(site.rglob("*.pyc"))[:5]:
        problems.append(f"{pyc.relative_to(site)}: compiled by the build machine's Python (use --no-compile)")
    return problems


def requirement_problems(requirements: Path) -> list[str]:
    problems = []
    for line in requirements.read_text().splitlines():
        requirement = line.split("#", 1)[0].strip()
        if not requirement:
            continue
        name = _canonical(re.split(r"[\s\[<>=!~;@]", requirement, maxsplit=1)[0])
        if name in POWERTOOLS_LAYER_PROVIDES:
            problems.append(f"{requirements}: {requirement!r} would shadow the Powertools layer's {name}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the layer's python/ directory")
    parser.add_argument("--deps", action="store_true", help="also the dependency-layer rules (no shadowing)")
    parser.add_argument("--requirements", type=Path, help="requirements file of the dependency layer")
    parser.add_argument("--wheel-tags-only", action="store_true", help="only the manylinux <= 2_34 rule")
    args = parser.parse_args(argv)
    problems = wheel_tag_problems(args.site)
    if args.deps and not args.wheel_tags_only:
        problems += shadow_problems(args.site)
    if args.requirements:
        problems += requirement_problems(args.requirements)
    for problem in problems:
        print(f"layer check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
