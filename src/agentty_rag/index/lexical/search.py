"""A search's reads of the lexical index, as text: a query's weighted terms turned into a ``LexicalQuery`` and
scored by the index's ``LexicalIndex`` (chunks, files, a text outside the index), and the statistics of terms.

``LexicalSearch`` is the part of ``CorpusIndex`` that asks the backend; everything goes through the
protocol, so any backend serves it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.bm25 import idf as bm25_idf
from agentty_rag.index.lexical.protocol import LexicalQuery, TextTerms
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.ingest import count_terms
from agentty_rag.types import Chunk

if TYPE_CHECKING:
    from agentty_rag.index.storage.mirror import Mirror


def query_of(
    ids: Mapping[str, int], terms: Mapping[str, float], weights: Mapping[str, float], k1: float, b: float
) -> LexicalQuery:
    """Weighted query terms (term -> weight) as a backend scores them, given the ids of the terms it knows."""
    return LexicalQuery({ids[t]: w for t, w in terms.items() if t in ids}, weights, k1, b)


def _by_id(counts: Mapping[str, Mapping[str, int]], ids: Mapping[str, int]) -> TextTerms:
    """A text's term counts per field as the index's term ids (terms it does not know left out), and its length
    per field (every term counted)."""
    counted = {name: {ids[t]: n for t, n in held.items() if t in ids} for name, held in counts.items()}
    return counted, {name: float(sum(held.values())) for name, held in counts.items()}


class LexicalSearch:
    """The lexical reads of an index (a base of ``CorpusIndex``, which holds the lock and the mirror)."""

    config: IndexConfig
    field_names: tuple[str, ...]
    weights: dict[str, float]
    _lock: threading.RLock
    _mirror: Mirror
    _tokenizer: Tokenizer

    def _queries(self, terms: Mapping[str, float]) -> tuple[LexicalQuery, LexicalQuery, dict[str, int]]:
        """The query for chunks, the query for files, and the ids of the terms the index knows."""
        scoring = self.config.scoring
        ids = self._mirror.lexical.term_ids(terms)
        file_weights = {**self.weights, **scoring.file_weights}
        chunks = query_of(ids, terms, self.weights, scoring.k1, scoring.b)
        return chunks, query_of(ids, terms, file_weights, scoring.file_k1, scoring.file_b), ids

    def term_statistics(self, terms: Sequence[str]) -> tuple[dict[str, int], dict[str, float]]:
        """Ids and body-field IDF of terms (a term the body never holds gets the highest IDF)."""
        with self._lock:
            lexical = self._mirror.lexical
            ids = lexical.term_ids(terms)
            n_live = max(lexical.n_live, 1)
            idf: dict[str, float] = {}
            for term in terms:
                df = lexical.document_frequency("body", ids[term]) if term in ids else 0
                idf[term] = bm25_idf(df, n_live)
            return ids, idf

    def lexical_scores(
        self, terms: Mapping[str, float], allowed: npt.NDArray[np.bool_] | None = None, files: bool = False
    ) -> LexicalScores:
        """BM25 of every chunk — and with ``files``, of every file — for weighted query terms (term -> weight).

        Chunks outside ``allowed`` (and files with no allowed chunk) score 0.
        """
        with self._lock:
            lexical = self._mirror.lexical
            for_chunks, for_files, _ = self._queries(terms)
            chunk_scores = lexical.score(for_chunks)
            groups = self._mirror.views.file_groups(lexical.alive)
            file_scores = np.zeros(len(groups.refs), np.float64)
            if files:
                file_scores = lexical.score_files(for_files, groups)
            scores = LexicalScores(chunk_scores, file_scores, groups)
        return scores if allowed is None else scores.within(allowed)

    def score_outside(self, chunk: Chunk, terms: Mapping[str, float]) -> float:
        """The BM25 a chunk that is not in the index (an edited copy of one that is) would get for weighted query
        terms, against the index's statistics."""
        counts = count_terms(self._tokenizer, chunk)
        with self._lock:
            query, _, ids = self._queries(terms)
            return self._mirror.lexical.score_outside(_by_id(counts, ids), query)

    def chunk_terms(self, chunk: Chunk) -> list[str]:
        """Every distinct term a chunk would be indexed under (any field), sorted."""
        return sorted({term for held in count_terms(self._tokenizer, chunk).values() for term in held})

    def score_file_outside(self, file: int, replaced: Mapping[int, Chunk], terms: Mapping[str, float]) -> float:
        """The BM25 the file (its number in ``file_groups``) would get as a whole for weighted query terms if the
        chunks in ``replaced`` (by slot) held their given text, against the index's statistics."""
        counts = {slot: count_terms(self._tokenizer, chunk) for slot, chunk in replaced.items()}
        with self._lock:
            lexical = self._mirror.lexical
            _, query, ids = self._queries(terms)
            texts = {slot: _by_id(held, ids) for slot, held in counts.items()}
            return lexical.score_file_outside(file, texts, query, self._mirror.views.file_groups(lexical.alive))

    def defined_as(self, terms: Sequence[str]) -> list[int]:
        """Slots of the definitions named by any of ``terms`` (name-field terms: whole names, lower case)."""
        if "name" not in self.field_names:
            return []
        with self._lock:
            lexical = self._mirror.lexical
            ids = lexical.term_ids(terms)
            found: set[int] = set()
            for term in terms:
                if term in ids:
                    found.update(lexical.holders("name", ids[term]).tolist())
            return sorted(found)

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """Which of ``terms`` the index holds."""
        with self._lock:
            return set(self._mirror.lexical.term_ids(terms))


__all__ = ["LexicalSearch", "query_of"]
