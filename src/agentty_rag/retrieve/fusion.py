"""Weighted reciprocal rank fusion, and how much each leg weighs for a given query.

    score(chunk) = sum over legs of  weight(leg) / (60 + rank of the chunk in that leg)

(Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
Methods", SIGIR 2009; k = 60 as there.) A leg with weight 0 has no influence at all.

Equal weights can make the fusion worse than its better leg: lexical search wins on identifiers and exact
strings, dense search on paraphrased questions. So the user's weights are scaled per query by how
identifier-like the query is — see ``leg_weights``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentty_rag.retrieve.features import looks_like_identifier

RRF_K = 60
# How far a query leans: an identifier-like query keeps the lexical weight and halves the dense one; a
# natural-language question does the reverse. Chosen with rag-bench (see the README's ladder).
LEAN = 0.5

_WORD = re.compile(r"`[^`]+`|\"[^\"]+\"|[\w$.:/\\-]+")
_QUESTION = re.compile(r"^(how|what|where|when|why|which|who|does|do|is|are|can|should)\b|\?\s*$", re.I)


def rrf(
    legs: Mapping[str, Sequence[tuple[int, float]]], weights: Mapping[str, float], k: int = RRF_K
) -> list[tuple[int, float]]:
    """Fused (slot, score) pairs, best first (ties by slot; callers re-sort by chunk id)."""
    scores: dict[int, float] = {}
    for leg, ranked in legs.items():
        weight = weights.get(leg, 0.0)
        if weight <= 0:
            continue
        for rank, (slot, _) in enumerate(ranked, start=1):
            scores[slot] = scores.get(slot, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def lexical_lean(query: str) -> float:
    """In [0, 1]: 1 for a query of identifiers, error codes or quoted strings; 0 for a plain question."""
    words = _WORD.findall(query)
    if not words:
        return 0.0
    exact = sum(1 for w in words if w[0] in '`"' or looks_like_identifier(w.strip(".,;:?!()")))
    if exact == 0:
        return 0.0
    share = exact / len(words)
    if _QUESTION.search(query.strip()) and len(words) >= 5:
        share /= 2  # a question that names an identifier: both legs have something to say
    return min(1.0, share * 2)


def leg_weights(query: str, bm25_weight: float, dense_weight: float, long: bool = False) -> dict[str, float]:
    """The user's weights scaled by the query's lean (a weight of 0 stays 0).

    A ``long`` query (an issue, a pasted log) leans lexical in full: the embedding model reads only its
    first few hundred tokens, while its rare terms, paths and names are the lexical leg's strongest evidence.
    """
    lean = 1.0 if long else lexical_lean(query)
    return {
        "lexical": bm25_weight * (1.0 - LEAN * (1.0 - lean)),
        "dense": dense_weight * (1.0 - LEAN * lean),
    }


__all__ = ["LEAN", "RRF_K", "leg_weights", "lexical_lean", "rrf"]
