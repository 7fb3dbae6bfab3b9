"""Fusion: the legs' candidates as one list, cut to the pool the later stages look at.

Two legs are fused by weighted reciprocal rank (``retrieve.fusion``); the lexical leg alone keeps its own BM25
scores. The pool is ordered by score, ties by chunk id, never by insertion order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.fusion import dense_share, leg_weights, rrf
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.rerank import rerank_pool
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.types import Hit


@dataclass(frozen=True)
class Fuse:
    """The fusion stage (it always runs): ``bm25_weight`` and ``dense_weight`` are the legs' weights."""

    bm25_weight: float = 1.0
    dense_weight: float = 1.0

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        request = ranking.request
        share = 0.0
        if request.hybrid:
            long = request.analysis.long
            weights = leg_weights(request.query.lean, self.bm25_weight, self.dense_weight, long, request.lead)
            fused = rrf(request.legs, weights)
            share = dense_share(weights)
        else:
            fused = list(request.legs["lexical"])  # one leg: fusion is the identity
        chunks = request.index.chunks([slot for slot, _ in fused])
        scored = [(slot, Hit(chunks[slot], score)) for slot, score in fused if slot in chunks]
        scored.sort(key=lambda pair: (-round(pair[1].score, 9), pair[1].chunk.chunk_id))
        pool = scored[: rerank_pool(request.k)]
        return replace(
            ranking,
            funnel=ranking.funnel.then("fused", len(fused)),
            fused=tuple(fused),
            hits=tuple(hit for _, hit in pool),
            slots=tuple(slot for slot, _ in pool),
            dense_share=share,
        )


def configured(settings: Settings) -> Fuse:
    return Fuse(settings.bm25_weight, settings.dense_weight)


# The rung that measures fusion is the one that gives it a second leg.
KIND = StageKind(configured, (Rung("+dense", "AGENTTY_RAG_DENSE"),))

__all__ = ["KIND", "Fuse"]
