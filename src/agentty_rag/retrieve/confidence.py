"""How sure a retrieval is, from its own ranking: a number in [0, 1] shown in every result header.

    confidence = 0.7 x coverage + 0.3 x separation

* coverage: the IDF-weighted share of the query's terms that the best passage holds (does the best
  passage speak about everything the query asks?);
* separation: 1 - second score / best score (does the best passage stand out, or is it one of many alike?).

It scales the output budget, and proactive injection stays quiet below a threshold of it.
"""

from __future__ import annotations

from collections.abc import Sequence

COVERAGE_WEIGHT = 0.7
SEPARATION_WEIGHT = 0.3


def retrieval_confidence(top_coverage: float, scores: Sequence[float]) -> float:
    if not scores or scores[0] <= 0:
        return 0.0
    separation = 1.0 if len(scores) < 2 else max(0.0, 1.0 - scores[1] / scores[0])
    value = COVERAGE_WEIGHT * min(max(top_coverage, 0.0), 1.0) + SEPARATION_WEIGHT * separation
    return round(min(max(value, 0.0), 1.0), 4)


__all__ = ["retrieval_confidence"]
