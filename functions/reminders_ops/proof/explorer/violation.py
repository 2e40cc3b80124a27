"""The explorer's verdict: a broken promise, by kind (the checker's and every judge's; its own module so
a judge the checker calls needs no import of the checker)."""

from __future__ import annotations


class Violation(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
