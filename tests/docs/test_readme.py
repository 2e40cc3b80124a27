"""README.md is the newcomer's short front page (issue 31 item 3); its code layout matches the tree."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _layout_paths() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Code layout", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE)]


def test_the_readme_stays_the_short_front_page() -> None:
    assert len(README.read_bytes()) <= 15_000


def test_every_path_of_the_readme_code_layout_exists() -> None:
    paths = _layout_paths()
    assert paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"the README's code layout names paths the tree does not have: {missing}"


def test_the_readme_code_layout_names_every_part_of_the_tree() -> None:
    paths = set(_layout_paths())
    text = README.read_text(encoding="utf-8")
    tracked_top = {"functions", "infra", "layers", "clients", "tests", "docs", "events", "bench", "tools"}
    for top in sorted(tracked_top):
        assert (ROOT / top).is_dir(), top
        assert any(p.split("/")[0] == top for p in paths), f"{top}/ is missing from the README's code layout"
    for part in ("domain", "services", "adapters", "handlers"):
        assert f"functions/reminders/{part}/" in paths, part
    for part in sorted(
        p.name for p in (ROOT / "functions" / "reminders_ops").iterdir() if (p / "__init__.py").exists()
    ):
        assert f"`{part}/`" in text, (
            f"functions/reminders_ops/{part}/ is missing from the README's code layout"
        )
    for part in sorted(
        p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    ):
        assert f"`{part}/`" in text, f"tests/{part}/ is missing from the README's code layout"
