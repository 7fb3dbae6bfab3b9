"""BM25 scoring math (the Lucene variant), as small pure functions.

Lucene's BM25 as described by Kamphuis, de Vries, Boytsov and Lin, "Which BM25 Do You Mean? A Large-Scale
Reproducibility Study of Scoring Variants" (ECIR 2020); it is also ``bm25s``'s ``method="lucene"``, which the
tests use as the reference implementation:

    idf(t)     = ln(1 + (N - df + 0.5) / (df + 0.5))
    tfc(t, d)  = tf / (tf + k1 * (1 - b + b * |d| / avgdl))
    score(q,d) = sum over distinct query terms t of idf(t) * tfc(t, d)

Statistics (N, df, avgdl) are always computed over the live documents at query time, which is what keeps an
incrementally updated index equal to a full rebuild.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75

FloatArray = npt.NDArray[np.float64]


def idf(df: int, n_docs: int) -> float:
    """Lucene's inverse document frequency; always positive, falling as ``df`` rises."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def tf_saturation(tf: FloatArray, doc_len: FloatArray, avg_len: float, k1: float = K1, b: float = B) -> FloatArray:
    """Lucene's term-frequency component; in [0, 1), rising with ``tf`` and falling with document length."""
    norm = k1 * ((1.0 - b) + b * doc_len / max(avg_len, 1e-9))
    result: FloatArray = tf / (tf + norm)
    return result


__all__ = ["B", "K1", "idf", "tf_saturation"]
