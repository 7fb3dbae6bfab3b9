"""Weighted reciprocal rank fusion, how much each leg weighs for a given query, and the dense leg's
similarities calibrated per query.

    score(chunk) = sum over legs of  weight(leg) / (60 + rank of the chunk in that leg)

(Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
Methods", SIGIR 2009; k = 60 as there.) A leg with weight 0 has no influence at all.

Equal weights can make the fusion worse than its better leg: lexical search wins on identifiers and exact
strings, dense search on paraphrased questions. So the user's weights are scaled per query by how
identifier-like the query is (its lean, ``query.lexical_lean``) — see ``leg_weights`` — and per corpus by
the leg check's verdict: where the dense leg leads (``DENSE_LED``), the lexical leg keeps a quarter of its
weight.

Fusion ranks; the stages after it also read how strong each candidate's dense evidence is. A cosine
similarity means little on its own (its range depends on the model and the query), so it is calibrated per
query (``relative_similarities``): the query's best similarity is 1 and its noise level — the similarity
of the candidate pool's last member — is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

RRF_K = 60
# How far a query leans: an identifier-like query keeps the lexical weight and halves the dense one; a
# natural-language question does the reverse. Chosen with rag-bench (see the README's ladder).
LEAN = 0.5
# Where the leg check found the dense leg stronger on a corpus, the lexical leg keeps this share of its weight:
# it breaks the dense leg's ties and catches exact names; and the features that count the query's words weigh
# this much (the dense leg has read the question for its meaning; the lexical leg's part is its weight here).
DENSE_LED_LEXICAL = 0.25
DENSE_LED_LEXICAL_EVIDENCE = 0.0
# The rank whose similarity is a query's noise level (the candidate pool of ``pipeline.candidate_pool``, k=10).
NOISE_RANK = 60

HYBRID = "hybrid"
DENSE_LED = "dense-led"


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


def leg_weights(
    lean: float, bm25_weight: float, dense_weight: float, long: bool = False, lead: str = HYBRID
) -> dict[str, float]:
    """The user's weights scaled by the query's ``lean`` (``query.lexical_lean``: 1 for identifiers, 0 for a
    plain question) and the corpus's lead (a weight of 0 stays 0).

    A ``long`` query (an issue, a pasted log) leans lexical in full: the embedding model reads only its
    first few hundred tokens, while its rare terms, paths and names are the lexical leg's strongest evidence.
    With ``lead`` ``DENSE_LED`` the lexical weight keeps ``DENSE_LED_LEXICAL`` of itself.
    """
    lean = 1.0 if long else lean
    lexical = bm25_weight * (1.0 - LEAN * (1.0 - lean))
    return {
        "lexical": lexical * (DENSE_LED_LEXICAL if lead == DENSE_LED else 1.0),
        "dense": dense_weight * (1.0 - LEAN * lean),
    }


def dense_share(weights: Mapping[str, float]) -> float:
    """The dense leg's share of the fusion's weight (0 with no dense weight)."""
    total = weights.get("lexical", 0.0) + weights.get("dense", 0.0)
    return weights.get("dense", 0.0) / total if total > 0 else 0.0


def relative_similarities(
    similarities: npt.NDArray[np.float32], noise_rank: int = NOISE_RANK
) -> npt.NDArray[np.float64]:
    """Each slot's similarity on the query's own scale: its best similarity is 1, the similarity at
    ``noise_rank`` (the pool's last member) 0, values clipped to [0, 1]; a slot with no similarity (NaN) is 0.

    Min-max normalisation against the pool's tail, as in the convex fusions of Bruch, Gai and Ingber, "An
    Analysis of Fusion Functions for Hybrid Retrieval" (TOIS 2023): a chunk only as similar as the pool's
    last member holds nothing the query asks for.
    """
    out = np.zeros(len(similarities), np.float64)
    known = ~np.isnan(similarities)
    values = similarities[known].astype(np.float64)
    if len(values) == 0:
        return out
    top = float(values.max())
    rank = min(max(noise_rank, 1), len(values)) - 1  # 0-based: the noise_rank-th best
    noise = float(np.partition(values, len(values) - 1 - rank)[len(values) - 1 - rank])
    if top - noise <= 1e-9:
        out[known] = 1.0
        return out
    out[known] = np.clip((values - noise) / (top - noise), 0.0, 1.0)
    return out


__all__ = [
    "DENSE_LED",
    "DENSE_LED_LEXICAL",
    "DENSE_LED_LEXICAL_EVIDENCE",
    "HYBRID",
    "LEAN",
    "NOISE_RANK",
    "RRF_K",
    "dense_share",
    "leg_weights",
    "relative_similarities",
    "rrf",
]
