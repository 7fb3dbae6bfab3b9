"""Cutting documents into chunks: prose by headings, code by definitions."""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.chunking.code import chunk_code, line_windows
from agentty_rag.chunking.languages import spec_named
from agentty_rag.chunking.prose import chunk_prose
from agentty_rag.config import ChunkingSettings
from agentty_rag.source_kinds import source_spec
from agentty_rag.types import Chunk, Document

# Bumped whenever the same input would be cut differently: persisted indexes are then rebuilt.
CHUNKER_VERSION = "7"


@dataclass(frozen=True)
class ChunkingConfig:
    """Sizes that shape chunks; part of the index manifest (whose names for them these are)."""

    prose_chars: int
    overlap_chars: int
    code_chars: int

    @classmethod
    def from_settings(cls, settings: ChunkingSettings) -> ChunkingConfig:
        return cls(settings.chunk_chars, settings.chunk_overlap, settings.code_chunk_chars)

    def fingerprint(self) -> dict[str, object]:
        return {
            "version": CHUNKER_VERSION,
            "prose_chars": self.prose_chars,
            "overlap_chars": self.overlap_chars,
            "code_chars": self.code_chars,
        }


def chunk_document(document: Document, config: ChunkingConfig) -> list[Chunk]:
    """Chunks of one document: code by its language's definitions, prose by headings (see ``source_kinds``)."""
    kind = source_spec(document.source)
    if kind.code:
        try:
            language = spec_named(document.language)
        except KeyError:
            return line_windows(document, config.code_chars)
        return chunk_code(document, language, config.code_chars)
    return chunk_prose(document, config.prose_chars, config.overlap_chars, kind.passage)


__all__ = ["CHUNKER_VERSION", "ChunkingConfig", "chunk_document"]
