"""Cutting documents into chunks: prose by headings, code by definitions."""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.chunking.code import chunk_code, line_windows
from agentty_rag.chunking.languages import spec_named
from agentty_rag.chunking.prose import chunk_prose
from agentty_rag.config import ChunkingSettings
from agentty_rag.types import Chunk, Document

# Bumped whenever the same input would be cut differently: persisted indexes are then rebuilt.
CHUNKER_VERSION = "5"


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
    """Chunks of one document, by its source and language."""
    if document.source == "code":
        try:
            spec = spec_named(document.language)
        except KeyError:
            return line_windows(document, config.code_chars)
        return chunk_code(document, spec, config.code_chars)
    kind = {"skill": "skill", "memory": "fact"}.get(document.source, "section")
    return chunk_prose(document, config.prose_chars, config.overlap_chars, kind)


__all__ = ["CHUNKER_VERSION", "ChunkingConfig", "chunk_document"]
