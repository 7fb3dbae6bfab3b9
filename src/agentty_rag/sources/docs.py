"""The docs folder: Markdown, reStructuredText, plain text, AsciiDoc and config examples."""

from __future__ import annotations

import os
from pathlib import Path

from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.text import decode
from agentty_rag.sources.walker import ListingCache, ScanResult, SkipReport, WalkRules, scan_tree
from agentty_rag.types import Document, FileStamp

# File extension -> the format the prose chunker reads it as.
DOC_FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".json": "config",
    ".yaml": "config",
    ".yml": "config",
    ".toml": "config",
}


def doc_format(name: str) -> str | None:
    return DOC_FORMATS.get(os.path.splitext(name)[1].lower())


class DocsSource:
    """Every text file of the docs folder. Provenance paths are relative to the folder."""

    name = "docs"

    def __init__(self, root: Path, workspace: Path, max_bytes: int) -> None:
        self.root = root
        self.workspace = workspace
        self.max_bytes = max_bytes
        self._listings = ListingCache()  # the folders of the last scan

    def scan(self) -> ScanResult:
        if not self.root.is_dir():
            return ScanResult([], SkipReport())
        rules = WalkRules(accept=lambda n: doc_format(n) is not None, key_prefix="docs:", max_bytes=self.max_bytes)
        return scan_tree(self.root, self.workspace, rules, self._listings)

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        loaded = decode(data)
        if loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason)
        rel = stamp.key.removeprefix("docs:")
        fmt = doc_format(rel) or "text"
        return LoadResult((Document("docs", rel, loaded.text, language=fmt),))

    def describe(self) -> str:
        return f"docs folder {self.root}"


__all__ = ["DOC_FORMATS", "DocsSource", "doc_format"]
