"""The documentation site's build hooks (tools/mkdocs_hooks.py) and its configuration (mkdocs.yml)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _hooks():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_page_loading_a_script_or_stylesheet_from_another_host_is_found() -> None:
    found = _hooks().external_assets(
        '<script src="https://cdn.example/a.js"></script>'
        '<link rel="stylesheet" href="//fonts.example/x.css">'
        '<link rel="preconnect" href="https://fonts.gstatic.com">'
        '<img src="http://example.com/x.png">'
        "@font-face { src: url(https://fonts.example/r.woff2) }"
        '@import "https://example.com/more.css";'
    )
    assert len(found) == 6


def test_local_assets_and_a_canonical_link_are_not_external_loads() -> None:
    found = _hooks().external_assets(
        '<script src="assets/javascripts/bundle.js"></script>'
        '<link rel="stylesheet" href="assets/stylesheets/main.css">'
        '<link rel="canonical" href="https://example.com/page/">'
        '<a href="https://www.standardwebhooks.com/">Standard Webhooks</a>'
        "background: url(\"data:image/svg+xml;charset=utf-8,<svg xmlns='http://www.w3.org/2000/svg'/>\")"
    )
    assert found == []


def test_the_incoming_folder_is_excluded_from_the_site_and_the_build_is_strict() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "strict: true" in config
    assert "exclude_docs: |\n  incoming/\n" in config
    for kind in ("not_found", "anchors", "unrecognized_links"):
        assert f"    {kind}: warn" in config, kind
