"""The contract every source fulfils: a cheap scan that stats files, and a load that turns one file into documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agentty_rag.sources.walker import ScanResult
from agentty_rag.types import Document, FileStamp


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The documents of one file, or why it was left out."""

    documents: tuple[Document, ...] = ()
    skip_reason: str = ""
    warnings: tuple[str, ...] = field(default=())


class Source(Protocol):
    """A kind of content: the docs folder, skills, memory, or the workspace's code."""

    name: str

    def scan(self) -> ScanResult:
        """Stat every file this source would index; read nothing."""
        ...

    max_bytes: int

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        """Turn one scanned file's bytes into documents (the caller reads and fingerprints the file)."""
        ...

    def describe(self) -> str:
        """Where this source looks, for status output and empty-result messages."""
        ...


@runtime_checkable
class HeldSource(Protocol):
    """A source whose content is held in memory rather than in files (other MCP servers' resources): an index
    reads a scanned item with ``held`` instead of from disk, and never in another process."""

    def held(self, stamp: FileStamp) -> bytes | None:
        """The bytes of a scanned item (None: it went away since the scan)."""
        ...


__all__ = ["HeldSource", "LoadResult", "Source"]
