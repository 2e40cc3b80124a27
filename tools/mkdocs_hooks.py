"""MkDocs hooks of the documentation site (``make docs``; mkdocs.yml ``hooks:``).

- The API reference is rendered from the document the app itself serves: ``GET /openapi.json`` is
  answered in-process by the API handler (``clients/python/regenerate.py``, as ``make client`` gets
  it; no AWS call, no network), turned into Markdown by essentials-openapi (the renderer of
  neoteroi-mkdocs' OAD plugin) where a page says ``[OAD(/openapi.json)]``, and published beside
  the site as ``openapi.json``. Nothing generated is written into docs/.
- The built site loads nothing from another host: a page that references a script, stylesheet,
  font or image on one fails the build.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = "[OAD(/openapi.json)]"
_EXTERNAL_ASSET = re.compile(
    r"""<(?:script|img|iframe|source|audio|video|track|embed|input)\b[^>]*"""
    r"""\b(?:src|poster)=["']?(?:https?:)?//"""
    r"""|<(?:img|source)\b[^>]*\bsrcset=["'][^"']*(?:https?:)?//"""
    r"""|<object\b[^>]*\bdata=["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref=["']?(?:https?:)?//[^>]*>"""
    r"""|@import\s+["']?(?:https?:)?//|url\(\s*["']?(?:https?:)?//""",
    re.IGNORECASE,
)
_LOADING_REL = re.compile(
    r"""\brel=["']?(?:stylesheet|preconnect|preload|prefetch|modulepreload|dns-prefetch|icon|manifest)""",
    re.IGNORECASE,
)
_DOC: dict[str, Any] = {}


def openapi_document() -> dict[str, Any]:
    if not _DOC:
        sys.path.insert(0, str(ROOT / "clients" / "python"))
        try:
            from regenerate import openapi_document as answer
        finally:
            sys.path.remove(str(ROOT / "clients" / "python"))
        _DOC.update(answer())
    return _DOC


def on_config(config: Any, **_: Any) -> Any:
    _DOC.clear()  # each build (mkdocs serve rebuilds too) asks the app afresh
    return config


def on_files(files: Any, config: Any, **_: Any) -> Any:
    from mkdocs.structure.files import File

    content = json.dumps(openapi_document(), indent=1, sort_keys=True)
    files.append(File.generated(config, "openapi.json", content=content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from openapidocs.mk.v3 import OpenAPIV3DocumentationHandler

    rendered = OpenAPIV3DocumentationHandler(openapi_document(), style="MKDOCS").write()
    rendered = re.sub(r"\A\s*<!--.*?-->\s*", "", rendered, flags=re.DOTALL)
    rendered = re.sub(r"\A# [^\n]*\n", "", rendered)  # the page has its own title
    return markdown.replace(MARKER, rendered)


def external_assets(text: str) -> list[str]:
    """What a built page or stylesheet would load from another host (a canonical link is no load)."""
    found = []
    for match in _EXTERNAL_ASSET.finditer(text):
        tag = match.group(0)
        if tag.lower().startswith("<link") and not _LOADING_REL.search(tag):
            continue
        found.append(tag[:160])
    return found


def on_post_build(config: Any, **_: Any) -> None:
    from mkdocs.exceptions import PluginError

    site = Path(config["site_dir"])
    found = [
        f"{path.relative_to(site)}: {tag}"
        for path in sorted([*site.rglob("*.html"), *site.rglob("*.css")])
        for tag in external_assets(path.read_text(encoding="utf-8", errors="replace"))
    ]
    if found:
        raise PluginError("the site loads assets from another host:\n" + "\n".join(found))
