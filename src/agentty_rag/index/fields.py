"""The fields each chunk is indexed under, how each is tokenized, and its weight in the BM25 sum.

Docs: the body (prose), the title (heading path, skill name and description, memory tags) and the path.
Code: the body (code mode: identifiers split, keywords dropped, comments stemmed as prose), the symbol path
(``TokenStore.refresh``) and the file path (``src/auth/token_store.py`` -> auth, token, store).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.index.tokenize import Tokenizer, path_words
from agentty_rag.types import Chunk


@dataclass(frozen=True)
class FieldSpec:
    name: str
    code_mode: bool
    weight: float


DOCS_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("body", code_mode=False, weight=1.0),
    FieldSpec("title", code_mode=False, weight=0.5),
    FieldSpec("path", code_mode=False, weight=0.3),
)
CODE_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("body", code_mode=True, weight=1.0),
    FieldSpec("symbol", code_mode=False, weight=0.6),
    FieldSpec("path", code_mode=False, weight=0.4),
)


def field_texts(chunk: Chunk) -> dict[str, str]:
    """The text of each field of a chunk."""
    if chunk.source == "code":
        return {"body": chunk.text, "symbol": chunk.symbol, "path": path_words(chunk.ref)}
    path = path_words(chunk.ref) if chunk.source == "docs" else chunk.ref
    return {"body": chunk.text, "title": f"{chunk.context} {chunk.title}".strip(), "path": path}


def tokenizers(fields: tuple[FieldSpec, ...]) -> dict[str, Tokenizer]:
    """One tokenizer per field; fields in the same mode share one (and its memo)."""
    shared = {True: Tokenizer(code=True), False: Tokenizer(code=False)}
    return {f.name: shared[f.code_mode] for f in fields}


__all__ = ["CODE_FIELDS", "DOCS_FIELDS", "FieldSpec", "field_texts", "tokenizers"]
