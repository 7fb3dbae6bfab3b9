"""The fields each chunk is indexed under, how each is tokenized, and its weight in the BM25 sum.

Docs: the body (prose), the title (heading path, skill name and description, memory tags) and the path.
Code: the body (identifiers split, standalone keywords dropped, comments stemmed as prose), the symbol path
(``TokenStore.refresh``), the file path (``src/auth/token_store.py`` -> auth, token, store) and the
definition's own name (``refresh``), which is not scored but looked up to find where a symbol is defined.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentty_rag.index.lexical.bm25 import K1, B
from agentty_rag.index.lexical.keywords import keywords_for
from agentty_rag.index.lexical.tokenize import Tokenizer, path_words
from agentty_rag.types import Chunk

# Bumped whenever a field's text or tokenization changes: persisted indexes are then rebuilt.
FIELDS_VERSION = "2"


@dataclass(frozen=True)
class FieldSpec:
    name: str
    weight: float


DOCS_FIELDS: tuple[FieldSpec, ...] = (FieldSpec("body", 1.0), FieldSpec("title", 0.5), FieldSpec("path", 0.3))
CODE_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("body", 1.0),
    FieldSpec("symbol", 0.6),
    FieldSpec("path", 0.4),
    FieldSpec("name", 0.0),  # the definition's own name: looked up to find where a symbol is defined
)
# Fields holding the same text in every chunk of a file: at file level they count once.
FILE_WIDE_FIELDS = frozenset({"path"})


@dataclass(frozen=True)
class Scoring:
    """The BM25 parameters of an index, for its chunks and for its files (each file scored as one document).

    Args:
        k1, b: term-frequency saturation and length normalisation of chunks.
        file_k1, file_b: the same for files.
        file_weights: field weights at file level that differ from the chunk level's.
        rank_files: the index's files are ranked as a whole too (code), and its queries are read for the
            names and identifiers they ask for.
    """

    k1: float = K1
    b: float = B
    file_k1: float = K1
    file_b: float = B
    file_weights: Mapping[str, float] = field(default_factory=dict)
    rank_files: bool = False


DOCS_SCORING = Scoring()
# Code chunks differ in length far more than prose sections, and a definition that repeats a term a few
# times is about it: a longer saturation and a stronger length normalisation. Files are long: they keep
# most of their length's evidence (a subsystem's main module is big), and their names say what they hold.
CODE_SCORING = Scoring(k1=2.0, b=0.9, file_k1=2.0, file_b=0.1, file_weights={"path": 2.5}, rank_files=True)


def field_texts(chunk: Chunk) -> dict[str, str]:
    """The text of each field of a chunk: code's (``CODE_FIELDS``) or prose's (``DOCS_FIELDS``); a path is
    indexed as its words, a skill's or fact's name as written."""
    kind = chunk.spec
    if kind.code:
        return {"body": chunk.text, "symbol": chunk.symbol, "path": path_words(chunk.ref), "name": chunk.own_name}
    path = path_words(chunk.ref) if kind.located else chunk.ref
    return {"body": chunk.text, "title": f"{chunk.context} {chunk.title}".strip(), "path": path}


def name_term(name: str) -> str:
    """The one term of the name field: the whole name, lower case, neither split nor stemmed, so that a
    lookup finds exactly the definitions of that name."""
    return name.strip().lower()


def field_terms(tokenizer: Tokenizer, chunk: Chunk) -> dict[str, list[str]]:
    """The terms of each field of a chunk; a code body drops its language's standalone keywords."""
    keywords = keywords_for(chunk.language) if chunk.spec.code else frozenset()
    return {
        name: (
            [name_term(text)]
            if name == "name" and name_term(text)
            else []
            if name == "name"
            else tokenizer.tokenize(text, keywords if name == "body" else frozenset())
        )
        for name, text in field_texts(chunk).items()
    }


__all__ = [
    "CODE_FIELDS",
    "CODE_SCORING",
    "DOCS_FIELDS",
    "DOCS_SCORING",
    "FIELDS_VERSION",
    "FILE_WIDE_FIELDS",
    "FieldSpec",
    "Scoring",
    "field_terms",
    "field_texts",
    "name_term",
]
