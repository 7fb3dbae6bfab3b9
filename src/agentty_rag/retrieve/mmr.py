"""Maximal marginal relevance (Carbonell and Goldstein, SIGIR 1998), with a per-file cap.

Each step picks the candidate with the best  lambda x relevance - (1 - lambda) x (its greatest similarity to
anything already picked). Relevance is normalised to [0, 1] by the best candidate; lambda = 1 keeps the
relevance order. A file that already holds ``per_file`` picks yields its remaining candidates to other files;
they are placed last, so a single file fills every slot only when nothing else is relevant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Similarity = Callable[[int, int], float]


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def mmr_order(
    relevance: Sequence[float],
    similarity: Similarity,
    lam: float,
    groups: Sequence[str] | None = None,
    per_group: int | None = None,
    limit: int | None = None,
) -> list[int]:
    """Indices of the candidates in MMR order (at most ``limit`` of them).

    Args:
        relevance: each candidate's relevance, best first or not (higher is better).
        similarity: similarity of two candidates by index, in [0, 1].
        lam: the trade-off; 1 is pure relevance, 0 pure novelty.
        groups: each candidate's group (its file) for the cap.
        per_group: how many picks a group may take before yielding to others.
    """
    count = len(relevance)
    limit = count if limit is None else min(limit, count)
    if count == 0:
        return []
    top = max(relevance) or 1.0
    rel = [r / top for r in relevance]
    redundancy = [0.0] * count
    taken: dict[str, int] = {}
    remaining = list(range(count))
    order: list[int] = []
    while remaining and len(order) < limit:

        def capped(i: int) -> bool:
            return groups is not None and per_group is not None and taken.get(groups[i], 0) >= per_group

        eligible = [i for i in remaining if not capped(i)] or remaining
        best = max(eligible, key=lambda i: (lam * rel[i] - (1 - lam) * redundancy[i], -i))
        order.append(best)
        remaining.remove(best)
        if groups is not None:
            taken[groups[best]] = taken.get(groups[best], 0) + 1
        if lam < 1:
            for i in remaining:
                redundancy[i] = max(redundancy[i], similarity(i, best))
    return order


__all__ = ["jaccard", "mmr_order"]
