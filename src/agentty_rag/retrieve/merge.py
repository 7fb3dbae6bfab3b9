"""One ranking from the rankings of several indexes: what the proactive hook shows for docs and code at once,
and what ``search_docs`` returns for the docs and other MCP servers' resources.

Scores of different indexes do not compare (BM25 over other fields, other rerank features), so each hit is
scored by its relevance within its own result (1 for that result's best hit, 0 for its weakest candidate)
times that result's confidence: a sure result's best hit leads, an unsure result's hits fall behind. The
funnel adds up each stage's counts over the parts, then says how many the merge returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.retrieve.relevance import relevances
from agentty_rag.types import NOTE, Funnel, Hit


def merge_retrieved(parts: Sequence[Retrieved], k: int) -> Retrieved:
    """The best ``k`` hits of ``parts`` (each one index's ranking), scored as the module doc says.

    Ties go to the lower hit id. The merged result's confidence is the best of the parts', its weakest
    candidate scores 0, and its query profile is the first part's that has one.
    """
    weighted: list[tuple[float, str, Hit]] = []
    for part in parts:
        scaled = relevances([hit.score for hit in part.hits], part.weakest)
        for hit, relevance in zip(part.hits, scaled, strict=True):
            weighted.append((relevance * part.confidence, hit.key, hit))
    weighted.sort(key=lambda item: (-item[0], item[1]))
    hits = tuple(replace(hit, score=score) for score, _, hit in weighted[:k])
    return Retrieved(
        hits,
        _funnel(parts, len(hits)),
        "hybrid" if any(part.mode == "hybrid" for part in parts) else "bm25",
        confidence=max((part.confidence for part in parts), default=0.0),
        profile=next((part.profile for part in parts if part.profile is not None), None),
        weakest=0.0,
    )


def _funnel(parts: Sequence[Retrieved], returned: int) -> Funnel:
    """Each stage's count summed over the parts, then ``returned``.

    A stage only some parts ran (one index reranked, another had nothing to rerank) goes right after the
    stage it follows in the part that ran it, so the merged funnel keeps the pipeline's order.
    """
    counts: dict[str, int] = {}
    order: list[str] = []
    for part in parts:
        previous: str | None = None
        for stage, count in part.funnel.stages:
            if stage == "returned":
                continue
            if stage not in counts:
                order.insert(order.index(previous) + 1 if previous is not None else 0, stage)
            counts[stage] = NOTE if count == NOTE else counts.get(stage, 0) + count  # a note is said once
            previous = stage
    return Funnel((*((stage, counts[stage]) for stage in order), ("returned", returned))) if counts else Funnel()


__all__ = ["merge_retrieved"]
