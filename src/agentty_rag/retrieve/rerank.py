"""The deterministic feature reranker: fused score plus a weighted sum of explainable features.

    score = fused / best fused  +  sum over features of weight x feature

The fused score keeps the first say (it is normalised to [0, 1]); each feature adds or takes away a bounded
amount. The weights are named, live here only, and were chosen with ``rag-bench`` on the fixtures and on real
open-source code (see the README's ladder); they are round numbers on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentty_rag.retrieve import features as f
from agentty_rag.retrieve.features import Candidate, QueryProfile

Feature = Callable[[Candidate, QueryProfile], float]

# name: (weight, feature). Positive weights reward, negative ones demote.
FEATURES: dict[str, tuple[float, Feature]] = {
    "coverage": (0.45, f.coverage),
    "name": (0.30, f.name_match),
    "context": (0.15, f.context_match),
    "phrase": (0.20, f.phrase_match),
    "identifier": (0.20, f.identifier_match),
    "defines": (0.30, f.defines_identifier),
    "definition": (0.45, lambda c, p: f.is_definition(c.chunk)),
    "test_file": (-0.50, lambda c, p: f.test_file(c.chunk, p)),
    "low_value_path": (-0.10, lambda c, p: f.low_value_path(c.chunk)),
    "tiny": (-0.10, lambda c, p: f.tiny(c.chunk)),
    "link_heavy": (-0.20, lambda c, p: f.link_heavy(c.chunk)),
}


@dataclass(frozen=True)
class Reranked:
    """A candidate's new score and what each part contributed (for ``--explain``)."""

    candidate: Candidate
    score: float
    contributions: tuple[tuple[str, float], ...]


def rerank_pool(k: int) -> int:
    """How many fused candidates the reranker looks at: clamp(k x 3, 20, 100)."""
    return max(20, min(100, k * 3))


def rerank(
    candidates: Sequence[Candidate], profile: QueryProfile, weights: dict[str, tuple[float, Feature]] | None = None
) -> list[Reranked]:
    """Score every candidate; best first, ties broken by chunk id."""
    table = FEATURES if weights is None else weights
    if not candidates:
        return []
    best = max(c.score for c in candidates) or 1.0
    out: list[Reranked] = []
    for candidate in candidates:
        parts = [("fused", candidate.score / best)]
        for name, (weight, feature) in table.items():
            if weight:
                parts.append((name, weight * feature(candidate, profile)))
        out.append(Reranked(candidate, sum(v for _, v in parts), tuple(parts)))
    out.sort(key=lambda r: (-round(r.score, 9), r.candidate.chunk.chunk_id))
    return out


__all__ = ["FEATURES", "Reranked", "rerank", "rerank_pool"]
