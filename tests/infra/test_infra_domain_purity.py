"""The domain package is pure: it imports neither boto3/botocore nor Powertools."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "functions" / "reminders" / "domain"
FORBIDDEN = ("boto3", "botocore", "aws_lambda_powertools", "mypy_boto3")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def domain_files() -> list[Path]:
    return sorted(DOMAIN.rglob("*.py"))


def test_domain_package_exists() -> None:
    assert domain_files(), f"no modules under {DOMAIN}"


@pytest.mark.parametrize("path", domain_files(), ids=lambda p: p.name)
def test_domain_module_imports_no_aws_sdk_and_no_powertools(path: Path) -> None:
    offending = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN}
    assert offending == set(), f"{path.name} imports {sorted(offending)}"


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from aws_lambda_powertools import Logger\nimport boto3.session\n")
    assert imported_modules(probe) == {"aws_lambda_powertools", "boto3.session"}
