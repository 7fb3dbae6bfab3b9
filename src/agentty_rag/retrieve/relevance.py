"""Relevance: a hit's score scaled so that its result's best hit is 1 and the weakest candidate the ranking
considered is 0. Scores compare only within one result; relevances compare across results."""

from __future__ import annotations


def relevances(scores: list[float], weakest: float | None = None) -> list[float]:
    """Scores scaled to [0, 1]: the best is 1, ``weakest`` (default: the lowest score given) is 0."""
    if not scores:
        return []
    top = scores[0]
    low = min(scores) if weakest is None else min(weakest, min(scores))
    if top - low <= 1e-12:
        return [1.0] * len(scores)
    return [min(max((s - low) / (top - low), 0.0), 1.0) for s in scores]


__all__ = ["relevances"]
