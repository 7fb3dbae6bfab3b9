"""Our BM25 as a dot product of two sparse vectors, the form Qdrant scores with its ``idf`` modifier.

The index's BM25 (``lexical.bm25``, Lucene's variant) sums, over the weighted fields f and the query's terms t,

    w_f · w_t · idf_f(t) · tf / (tf + k1 · (1 - b + b · dl_f / avgdl_f))

Qdrant's IDF modifier multiplies each query value by ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (Lucene's idf),
with N and df counted over the points of one named sparse vector. So each document holds one sparse vector
whose dimensions are (field, term) pairs, ``field_no << 24 | term_id`` (df is then per field, as ours), with
the saturated term frequency as its value (avgdl is baked in: a change of avgdl rewrites the values), and a
query holds ``w_f · w_t`` at the same dimensions; their dot product is the score.

Every document also holds ``SENTINEL`` (which no query asks for), so no vector is empty: Qdrant leaves an
empty vector out of N, our index counts every live document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.bm25 import tf_saturation

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

TERM_BITS = 24
MAX_FIELDS = 255
SENTINEL = MAX_FIELDS << TERM_BITS  # a dimension every document holds and no query asks for
SparseValues = tuple[list[int], list[float]]


def dimension(field_no: int, term: int) -> int:
    """The sparse dimension of ``term`` in the field numbered ``field_no``.

    Raises:
        ValueError: the field number or the term id does not fit (255 fields, 16.7M terms).
    """
    if not 0 <= field_no < MAX_FIELDS or not 0 <= term < 1 << TERM_BITS:
        raise ValueError(f"term {term} of field {field_no} has no sparse dimension (at most 2^24 terms a field)")
    return field_no << TERM_BITS | term


def document_vector(
    terms: Mapping[int, tuple[IntArray, FloatArray]],
    lengths: Sequence[float],
    avg_lengths: Sequence[float],
    k1: float,
    b: float,
) -> SparseValues:
    """One document's vector: for each field (by number) its term ids and term frequencies, its length, the
    average length of the field over the documents, and BM25's k1 and b."""
    indices = [SENTINEL]
    values = [1.0]
    for field_no, (ids, tfs) in sorted(terms.items()):
        if not len(ids):
            continue
        saturated = tf_saturation(
            tfs.astype(np.float64), np.full(len(ids), lengths[field_no]), avg_lengths[field_no], k1, b
        )
        indices.extend(dimension(field_no, int(t)) for t in ids)
        values.extend(saturated.tolist())
    order = np.argsort(indices, kind="stable")
    return [indices[i] for i in order], [values[i] for i in order]


def query_vector(
    field_names: Sequence[str], field_weights: Mapping[str, float], term_weights: Mapping[int, float]
) -> SparseValues:
    """A query's vector: the field's weight times the term's at each (field, term) of a weighted field."""
    pairs: list[tuple[int, float]] = []
    for field_no, name in enumerate(field_names):
        weight = field_weights.get(name, 0.0)
        if weight > 0:
            pairs.extend((dimension(field_no, term), weight * tw) for term, tw in term_weights.items())
    pairs.sort()
    return [i for i, _ in pairs], [v for _, v in pairs]


__all__ = ["SENTINEL", "SparseValues", "dimension", "document_vector", "query_vector"]
