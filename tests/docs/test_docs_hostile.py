"""Review 31: what a page could load from another host that the site's offline check misses."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _hooks():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "tag",
    [
        '<img src="a.png" srcset="a.png 1x, https://cdn.example/a@2x.png 2x">',
        '<video poster="https://cdn.example/p.jpg"></video>',
        '<video src="https://cdn.example/v.mp4"></video>',
        '<audio src="//cdn.example/a.mp3"></audio>',
        '<embed src="https://cdn.example/x.svg">',
        '<object data="https://cdn.example/x.svg"></object>',
        '<link rel="manifest" href="https://cdn.example/site.webmanifest">',
    ],
    ids=["img-srcset", "video-poster", "video-src", "audio-src", "embed-src", "object-data", "manifest"],
)
def test_a_page_loading_media_from_another_host_is_found(tag: str) -> None:
    assert _hooks().external_assets(tag), tag
