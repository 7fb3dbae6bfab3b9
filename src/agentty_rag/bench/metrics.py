"""Ranking metrics as pure functions over "gains": ``gains[i]`` is 1 when the hit at rank i+1 found a relevant
item not already found higher up (so duplicates in a ranking earn nothing), else 0.

* recall@k: share of the relevant items found in the top k.
* hit@k (success@k): 1 when any relevant item is in the top k, else 0; the same as recall@k for a query with
  one relevant item.
* reciprocal rank: 1 / rank of the first relevant hit (0 when none).
* nDCG@k with binary gains (Järvelin and Kekäläinen, 2002): DCG = sum gain_i / log2(i + 1) over ranks
  1..k, divided by the DCG of an ideal ranking that puts min(relevant, k) relevant hits first.

Token efficiency, as semble's ``benchmarks/README.md`` defines it (*Token efficiency*), over the text an agent
receives rather than a ranking: the tokens it reads, in order and header included, until the end of the first
passage that counts as found (characters / 4, the usual estimate, as semble's figures use):

* recall within B tokens: the share of queries whose first found passage ends within B tokens;
* expected tokens per query: the mean of those tokens, a query with nothing found counting ``MISS_TOKENS``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def gains_from_matches(matches: Iterable[Iterable[int]]) -> list[int]:
    """Gains from, for each rank, the indices of the relevant items that hit matches."""
    found: set[int] = set()
    gains: list[int] = []
    for matched in matches:
        new = set(matched) - found
        gains.append(1 if new else 0)
        found |= new
    return gains


def recall_at(matches: Sequence[Iterable[int]], n_relevant: int, k: int) -> float:
    if n_relevant <= 0:
        return 0.0
    found: set[int] = set()
    for matched in matches[:k]:
        found |= set(matched)
    return len(found) / n_relevant


def hit_at(gains: Sequence[int], k: int) -> float:
    return 1.0 if any(gains[:k]) else 0.0


def reciprocal_rank(gains: Sequence[int]) -> float:
    for rank, gain in enumerate(gains, start=1):
        if gain:
            return 1.0 / rank
    return 0.0


def ndcg_at(gains: Sequence[int], n_relevant: int, k: int) -> float:
    if n_relevant <= 0:
        return 0.0
    dcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(gains[:k], start=1))
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(n_relevant, k) + 1))
    return dcg / ideal


CHARS_PER_TOKEN = 4
MISS_TOKENS = 32_000  # what a query with nothing found counts, as in semble's figures


def tokens_to_first_hit(ends: Sequence[int], found: Sequence[bool]) -> float | None:
    """The tokens read until the end of the first found passage (None when none is found).

    Args:
        ends: where each passage's block ends in the text, as a character offset from its start.
        found: whether each passage counts as found, in the same order.
    """
    return next((end / CHARS_PER_TOKEN for end, hit in zip(ends, found, strict=True) if hit), None)


def recall_within(tokens: Sequence[float | None], budget: float) -> float:
    """The share of queries whose first found passage ends within ``budget`` tokens (0 for no queries)."""
    if not tokens:
        return 0.0
    return sum(1 for t in tokens if t is not None and t <= budget) / len(tokens)


def expected_tokens(tokens: Sequence[float | None]) -> float:
    """The mean tokens read to the first found passage, a miss counting ``MISS_TOKENS`` (0 for no queries)."""
    if not tokens:
        return 0.0
    return sum(MISS_TOKENS if t is None else t for t in tokens) / len(tokens)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in [0, 1]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


__all__ = [
    "CHARS_PER_TOKEN",
    "MISS_TOKENS",
    "expected_tokens",
    "gains_from_matches",
    "hit_at",
    "ndcg_at",
    "percentile",
    "recall_at",
    "recall_within",
    "reciprocal_rank",
    "tokens_to_first_hit",
]
