"""The workspace's source code, as the walker finds it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.languages import file_language
from agentty_rag.sources.rescan import Restamped, rescan
from agentty_rag.sources.text import decode, looks_generated
from agentty_rag.sources.walker import ListingCache, ScanResult, WalkRules, scan_tree
from agentty_rag.types import Document, FileStamp


def _is_code(name: str) -> bool:
    return file_language(name) is not None


class CodeSource:
    """Every file under the workspace root in a language of ``languages.py``, within the caps."""

    name = "code"

    def __init__(self, workspace: Path, max_files: int, max_bytes: int, secrets: bool = False) -> None:
        self.workspace = workspace
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._listings = ListingCache()  # the folders of the last scan
        self._capped = False  # the last scan had more files than the cap
        self.secrets = secrets

    def _rules(self) -> WalkRules:
        return WalkRules(
            accept=_is_code,
            key_prefix="code:",
            max_files=self.max_files,
            cap_setting="AGENTTY_RAG_CODE_MAX_FILES",
            max_bytes=self.max_bytes,
            secrets=self.secrets,
        )

    def scan(self) -> ScanResult:
        result = scan_tree(self.workspace, self.workspace, self._rules(), self._listings)
        self._capped = result.selection.active
        return result

    def watched_folder(self) -> Path:
        return self.workspace

    def walked_folders(self) -> frozenset[str]:
        return self._listings.folders()

    def rescan(self, paths: Iterable[str]) -> Restamped | None:
        """The changed paths' new stamps, or None when a full scan must tell (always, over the file cap: an
        added or removed file can change which files the cap keeps)."""
        if self._capped:
            return None
        return rescan(paths, self.workspace, self.workspace, self._rules(), self._listings)

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        loaded = decode(data)
        if loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason)
        if looks_generated(loaded.text):
            return LoadResult(skip_reason="generated or minified")
        rel = stamp.key.removeprefix("code:")
        language = file_language(rel, loaded.text) or "text"
        return LoadResult((Document("code", rel, loaded.text, language=language),))

    def describe(self) -> str:
        return f"source files under {self.workspace}"


__all__ = ["CodeSource"]
