"""``--explain``: each feature's share of the best candidates' reranked scores, where each stood in each leg,
and what the optional stages' extra searches contributed to each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentty_rag.retrieve.rerank import Reranked


def render_explanation(
    explanations: Sequence[Reranked],
    limit: int = 10,
    found_by: Mapping[str, tuple[str, ...]] | None = None,
    legs: Mapping[str, tuple[str, ...]] | None = None,
) -> str:
    """Each feature's contribution to the reranked score of the best candidates (``--explain``), where each
    stood in each leg (``legs``: chunk id -> ``lexical #3 12.41``, ``dense #1 0.712 → 1.00``), and what the
    optional stages' extra searches contributed to each (``found_by``: chunk id -> ``expand 2/3``, …)."""
    if not explanations:
        return "explain: the reranker did not run (AGENTTY_RAG_RERANK=0, or nothing matched)"
    lines = [
        f"explain: score = fused (normalised) + weighted features; top {min(limit, len(explanations))} "
        f"of {len(explanations)} reranked candidates"
    ]
    for number, item in enumerate(explanations[:limit], start=1):
        chunk = item.candidate.chunk
        label = chunk.symbol if chunk.spec.code else chunk.context
        lines.append(f"{number:>2}. {item.score:6.3f}  {chunk.provenance}  {label}".rstrip())
        parts = [
            f"{name} {value:+.3f}" if name != "fused" else f"fused {value:.3f}"
            for name, value in item.contributions
            if value
        ]
        lines.append("      " + "  ".join(parts))
        places = (legs or {}).get(chunk.chunk_id, ())
        if places:
            lines.append("      legs: " + " · ".join(places))
        stages = (found_by or {}).get(chunk.chunk_id, ())
        if stages:
            lines.append("      found by " + "; ".join(stages))
    return "\n".join(lines)


__all__ = ["render_explanation"]
