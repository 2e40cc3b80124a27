"""The public Powertools layer the functions run ships the release pyproject.toml pins."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from infra import powertools


def test_the_pin_is_the_release_under_test() -> None:
    assert powertools.pinned_release() == version("aws-lambda-powertools")


def test_the_pinned_release_has_a_layer_version() -> None:
    assert powertools.layer_version(powertools.pinned_release()) == 40  # 3.37.0


def test_layer_versions_rise_with_the_releases() -> None:
    def key(release: str) -> tuple[int, ...]:
        return tuple(int(part) for part in release.split("."))

    releases = sorted(powertools.LAYER_VERSIONS, key=key)
    numbers = [powertools.LAYER_VERSIONS[r] for r in releases]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


def test_an_unknown_release_fails_synthesis_with_the_table_to_edit() -> None:
    with pytest.raises(ValueError, match=r"infra/powertools\.py"):
        powertools.layer_version("9.9.9")


def test_a_pyproject_without_an_exact_pin_is_refused(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["aws-lambda-powertools>=3"]\n')
    with pytest.raises(ValueError, match="pins no exact"):
        powertools.pinned_release(pyproject)
    pyproject.write_text('[project]\ndependencies = ["aws-lambda-powertools[parser]==3.37.0"]\n')
    assert powertools.pinned_release(pyproject) == "3.37.0"
