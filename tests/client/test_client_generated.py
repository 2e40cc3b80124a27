"""Issue 31: the committed generated client is what openapi-python-client makes of today's
``/openapi.json`` (regenerated offline into a temporary directory and compared file by file)."""

from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "clients" / "python" / "src" / "reminders_client" / "generated"


def _regenerate_module() -> object:
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "clients" / "python" / "regenerate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _differences(a: Path, b: Path) -> list[str]:
    out: list[str] = []
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out += [f"only in the committed code: {n}" for n in cmp.left_only]
    out += [f"missing from the committed code: {n}" for n in cmp.right_only]
    for name in cmp.common_files:
        if (a / name).read_bytes() != (b / name).read_bytes():
            out.append(f"differs: {name}")
    for sub in cmp.common_dirs:
        out += [f"{sub}/{d}" for d in _differences(a / sub, b / sub)]
    return out


def test_generated_client_is_refused_when_stale_against_openapi_json(tmp_path: Path) -> None:
    fresh = tmp_path / "generated"
    _regenerate_module().generate(fresh)  # type: ignore[attr-defined]
    stale = _differences(COMMITTED, fresh)
    assert not stale, "the generated client is stale: run `make client` and commit it\n" + "\n".join(
        stale[:20]
    )
