"""The fields each chunk is indexed under, how each is tokenized, and its weight in the BM25 sum.

Docs: the body (prose), the title (heading path, skill name and description, memory tags) and the path.
Code: the body (identifiers split, standalone keywords dropped, comments stemmed as prose), the symbol path
(``TokenStore.refresh``) and the file path (``src/auth/token_store.py`` -> auth, token, store).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.index.keywords import keywords_for
from agentty_rag.index.tokenize import Tokenizer, path_words
from agentty_rag.types import Chunk


@dataclass(frozen=True)
class FieldSpec:
    name: str
    weight: float


DOCS_FIELDS: tuple[FieldSpec, ...] = (FieldSpec("body", 1.0), FieldSpec("title", 0.5), FieldSpec("path", 0.3))
CODE_FIELDS: tuple[FieldSpec, ...] = (FieldSpec("body", 1.0), FieldSpec("symbol", 0.6), FieldSpec("path", 0.4))


def field_texts(chunk: Chunk) -> dict[str, str]:
    """The text of each field of a chunk."""
    if chunk.source == "code":
        return {"body": chunk.text, "symbol": chunk.symbol, "path": path_words(chunk.ref)}
    path = path_words(chunk.ref) if chunk.source == "docs" else chunk.ref
    return {"body": chunk.text, "title": f"{chunk.context} {chunk.title}".strip(), "path": path}


def field_terms(tokenizer: Tokenizer, chunk: Chunk) -> dict[str, list[str]]:
    """The terms of each field of a chunk; a code body drops its language's standalone keywords."""
    keywords = keywords_for(chunk.language) if chunk.source == "code" else frozenset()
    return {
        name: tokenizer.tokenize(text, keywords if name == "body" else frozenset())
        for name, text in field_texts(chunk).items()
    }


__all__ = ["CODE_FIELDS", "DOCS_FIELDS", "FieldSpec", "field_terms", "field_texts"]
