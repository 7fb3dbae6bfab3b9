"""The MMR stage: the pool reordered for novelty as well as relevance, with a per-file cap (``retrieve.mmr``)."""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config import Settings
from agentty_rag.retrieve.mmr import jaccard, mmr_order
from agentty_rag.retrieve.ranking import Ranking, reordered, with_candidates
from agentty_rag.retrieve.stages.kind import Rung, StageKind


def per_file_cap(k: int) -> int:
    """How many of the k results one file may take before other files get a turn: max(2, ceil(k / 3))."""
    return max(2, -(-k // 3))


@dataclass(frozen=True)
class Diversify:
    """The MMR stage; ``lam`` trades relevance (1) against novelty (0). Passages are alike by their terms."""

    lam: float

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        ranking = with_candidates(ranking)
        if not ranking.candidates:
            return ranking
        term_sets = [candidate.term_ids for candidate in ranking.candidates]
        order = mmr_order(
            [hit.score for hit in ranking.hits],
            lambda i, j: jaccard(term_sets[i], term_sets[j]),
            self.lam,
            [hit.chunk.ref for hit in ranking.hits],
            per_file_cap(ranking.request.k),
        )
        return reordered(ranking, order)


def configured(settings: Settings) -> Diversify | None:
    return Diversify(settings.mmr_lambda) if settings.mmr else None


KIND = StageKind(configured, (Rung("+mmr", "AGENTTY_RAG_MMR"),))

__all__ = ["KIND", "Diversify", "per_file_cap"]
