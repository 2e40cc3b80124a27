"""layers/check_layer.py: manylinux <= 2_34 wheels only, nothing that shadows the Powertools layer."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_layer", ROOT / "layers" / "check_layer.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wheel(site: Path, dist: str, *tags: str) -> None:
    info = site / f"{dist}.dist-info"
    info.mkdir(parents=True)
    (info / "WHEEL").write_text("Wheel-Version: 1.0\n" + "".join(f"Tag: {t}\n" for t in tags))


@pytest.mark.parametrize(
    "tag",
    [
        "py3-none-any",
        "cp313-cp313-manylinux2014_aarch64.manylinux_2_17_aarch64",
        "cp313-cp313-manylinux_2_34_aarch64",
    ],
)
def test_wheels_that_run_on_amazon_linux_2023_pass(check: ModuleType, tmp_path: Path, tag: str) -> None:
    wheel(tmp_path, "pkg-1.0", tag)
    assert check.main([str(tmp_path)]) == 0


@pytest.mark.parametrize(
    "tag",
    ["cp313-cp313-manylinux_2_35_aarch64", "cp313-cp313-musllinux_1_2_aarch64", "cp313-cp313-linux_aarch64"],
)
def test_wheels_beyond_glibc_2_34_or_not_manylinux_fail(check: ModuleType, tmp_path: Path, tag: str) -> None:
    wheel(tmp_path, "pkg-1.0", tag)
    assert check.main([str(tmp_path)]) == 1


def test_the_deps_layer_must_not_shadow_the_powertools_layers_pydantic(
    check: ModuleType, tmp_path: Path
) -> None:
    wheel(tmp_path, "standardwebhooks-1.1.0", "py3-none-any")
    assert check.main(["--deps", str(tmp_path)]) == 0
    wheel(tmp_path, "pydantic_core-2.50.5", "cp313-cp313-manylinux_2_17_aarch64")
    assert check.main(["--deps", str(tmp_path)]) == 1


def test_a_requirement_that_would_shadow_pydantic_is_refused(check: ModuleType, tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# deps\nstandardwebhooks==1.1.0\n")
    assert check.main(["--requirements", str(requirements), str(tmp_path)]) == 0
    requirements.write_text("standardwebhooks==1.1.0\nPydantic[email]>=2  # for EmailStr\n")
    assert check.main(["--requirements", str(requirements), str(tmp_path)]) == 1


def test_pyc_of_the_build_machine_fails_the_deps_layer(check: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
    assert check.main(["--deps", str(tmp_path)]) == 1


def test_the_built_deps_layer_passes(check: ModuleType) -> None:
    site = ROOT / "layers" / "build" / "deps" / "python"
    assert check.main(["--deps", "--requirements", str(ROOT / "layers" / "requirements.txt"), str(site)]) == 0
