"""The rerank stage: the feature reranker over the pool, and for code the file order merged with it.

With ``files`` on an index that ranks files (code), the pool first takes in each strong file's best chunk
and the definitions of the names the query asks for, every candidate learns its file's evidence, and the
reranked passages are also ranked as files (``rerank.rank_files``, the dense leg's evidence beside the
lexical one in hybrid mode). The result leads with the file order for a short query and then alternates with
the passage order (``files.merge_orders``). A long query (an issue, a pasted log) starts with the passage
order; a code index searches it by the lexical leg alone unless that leg has no weight
(``candidates.lexical_alone``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.candidates import file_evidence, more_candidates
from agentty_rag.retrieve.files import FILE_LEAD, merge_orders
from agentty_rag.retrieve.ranking import Ranking, reordered, with_candidates
from agentty_rag.retrieve.rerank import Reranked, rank_files, rerank
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.types import Hit


@dataclass(frozen=True)
class Rerank:
    """The rerank stage; ``files`` adds the file order where the index ranks files."""

    files: bool = False

    @property
    def scores_files(self) -> bool:
        return self.files

    def run(self, ranking: Ranking) -> Ranking:
        by_files = self.files and ranking.request.index.config.scoring.rank_files
        if by_files:
            ranking = widened(ranking)
        ranking = with_candidates(ranking)
        if not ranking.candidates or ranking.profile is None:
            return ranking
        passages = rerank(ranking.candidates, ranking.profile)
        order, scores = passages, [r.score for r in passages]
        if by_files:
            by_file = rank_files(passages, ranking.profile)
            # The file order leads a short query; a long one starts with the passage order.
            lead = 0 if ranking.request.analysis.long else FILE_LEAD
            order = merge_orders(by_file, passages, lead, key=lambda r: id(r.candidate))
            scores = standings(order, by_file, passages)
        position = {id(candidate): i for i, candidate in enumerate(ranking.candidates)}
        hits = [Hit(r.candidate.chunk, score) for r, score in zip(order, scores, strict=True)]
        ranking = reordered(ranking, [position[id(r.candidate)] for r in order], hits)
        return replace(ranking, explanations=tuple(order), funnel=ranking.funnel.then("reranked", len(hits)))


def widened(ranking: Ranking) -> Ranking:
    """The pool with the best chunk of each strong file and the definitions the query names, which no leg
    ranked, and each file's evidence for the candidates."""
    request = ranking.request
    extra = more_candidates(
        request.index, request.lexical, request.analysis, {slot for slot, _ in ranking.fused}, request.allowed
    )
    chunks = request.index.chunks(extra)
    # Such a chunk has no rank of its own in the fused list: its lexical score, or in hybrid mode the pool's
    # lowest fused score.
    lowest = min((hit.score for hit in ranking.hits), default=0.0)
    added = [
        (slot, Hit(chunks[slot], lowest if request.hybrid else request.lexical.of(slot)))
        for slot in extra
        if slot in chunks
    ]
    hits = (*ranking.hits, *(hit for _, hit in added))
    funnel = ranking.funnel.then("+files/definitions", len(hits)) if extra else ranking.funnel
    return replace(
        ranking,
        hits=hits,
        slots=(*ranking.slots, *(slot for slot, _ in added)),
        candidates=None,  # worked out again for the wider pool, with the files' evidence
        files=file_evidence(request.lexical, request.analysis, request.dense_relative),
        funnel=funnel,
    )


def standings(merged: list[Reranked], by_file: list[Reranked], by_passage: list[Reranked]) -> list[float]:
    """A score for each merged hit that falls with its rank: how it stands in the order that placed it (its
    score relative to that order's best), never above the hit before it."""

    def relative_to_top(order: list[Reranked]) -> dict[int, float]:
        top = order[0].score if order and order[0].score > 0 else 1.0
        return {id(r.candidate): max(r.score / top, 0.0) for r in order}

    in_file, in_passage = relative_to_top(by_file), relative_to_top(by_passage)
    out: list[float] = []
    for r in merged:
        key = id(r.candidate)
        own = max(in_file.get(key, 0.0), in_passage.get(key, 0.0))
        out.append(min(own, out[-1]) if out else own)
    return out


def configured(settings: Settings) -> Rerank | None:
    # The file order needs the reranker's passage scores.
    return Rerank(files=settings.file_ranking) if settings.rerank else None


KIND = StageKind(configured, (Rung("+rerank", "AGENTTY_RAG_RERANK"), Rung("+files", "AGENTTY_RAG_FILES")))

__all__ = ["KIND", "Rerank", "standings", "widened"]
