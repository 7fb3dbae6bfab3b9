"""The learned prior (``AGENTTY_RAG_LEARN``): files the agent opened after similar searches rise a little.

The feedback rows (``feedback``: a file the agent opened after a search showed it) become a prior per file:

    prior(file) = min(1, sum over its rows of similarity(query, row's query) x 0.5 ^ (age in days / half-life))

Similarity is the cosine of the two queries' index-term sets; a row under ``MIN_SIMILARITY`` counts for
nothing, and so does one older than four half-lives (``FORGOTTEN``). Age is counted in whole days, so a
ranking stays the same all day. A passage of a file with a prior gains ``LIFT x prior`` of the pool's score
range: at most a fifth of the distance from the weakest candidate to the best, so the prior reorders close
calls and never brings in a file the query did not find. Only docs and code passages are lifted; skills and
memory never are. The stage reads the workspace's
``.agentty/rag_feedback.tsv`` (the newest ``feedback.MAX_ROWS`` rows, parsed once per version of the file).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.ranking import Ranking, reordered
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.state.feedback import LEARNABLE, Row, read_rows

# The most a prior lifts a passage, as a share of the pool's score range; and the least similarity that counts.
LIFT = 0.2
MIN_SIMILARITY = 0.4
DAY_S = 86_400
# A row older than four half-lives counts for nothing: old feedback fades out, it never lingers as a tie-breaker.
FORGOTTEN = 1 / 16


def decay(age_days: int, half_life_days: float) -> float:
    """How much a row of this age still counts: 1 today, 1/2 after one half-life."""
    return float(0.5 ** (max(age_days, 0) / half_life_days))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The cosine of two term sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def priors(
    query: frozenset[str],
    rows: Sequence[Row],
    terms: Callable[[str], frozenset[str]],
    now: float,
    half_life_days: float,
) -> dict[str, float]:
    """Each file's prior for ``query``, in [0, 1] (files without a similar row are absent)."""
    today = int(now // DAY_S)
    total: dict[str, float] = {}
    for row in rows:
        near = similarity(query, terms(row.query))
        if near < MIN_SIMILARITY:
            continue
        aged = decay(today - int(row.opened_at // DAY_S), half_life_days)
        if aged < FORGOTTEN:
            continue
        weight = near * aged
        total[row.ref] = total.get(row.ref, 0.0) + weight
    return {ref: min(1.0, value) for ref, value in sorted(total.items())}


def _lifted(scores: Sequence[float], lifts: Sequence[float]) -> tuple[list[int], list[float]]:
    """The order after each score gains its lift (``LIFT x prior x range``); ties keep the current order."""
    span = (max(scores) - min(scores)) or abs(max(scores)) or 1.0
    new = [score + LIFT * lift * span for score, lift in zip(scores, lifts, strict=True)]
    order = sorted(range(len(new)), key=lambda i: (-round(new[i], 9), i))
    return order, new


def _explained(explanations: Sequence[Reranked], prior: Mapping[str, float]) -> tuple[Reranked, ...]:
    """The reranker's explanations with each lift shown as a ``learned`` part, in the lifted order."""
    if not explanations:
        return ()
    lifts = [
        prior.get(r.candidate.chunk.ref, 0.0) if r.candidate.chunk.source in LEARNABLE else 0.0 for r in explanations
    ]
    order, new = _lifted([r.score for r in explanations], lifts)
    span_share = [n - r.score for n, r in zip(new, explanations, strict=True)]
    return tuple(
        replace(
            explanations[i],
            score=new[i],
            contributions=(*explanations[i].contributions, ("learned", span_share[i])),
        )
        for i in order
    )


@dataclass(frozen=True)
class Learn:
    """The learned prior; ``clock`` gives the time rows are aged against (tests fix it)."""

    half_life_days: float = 14.0
    clock: Callable[[], float] = time.time

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        request = ranking.request
        index = request.index
        if not ranking.hits:
            return ranking
        rows = [row for row in read_rows(index.config.state_dir) if row.index == index.config.name]
        prior = priors(request.query.term_set, rows, index.term_set, self.clock(), self.half_life_days)
        lifts = [prior.get(hit.chunk.ref, 0.0) if hit.chunk.source in LEARNABLE else 0.0 for hit in ranking.hits]
        lifted = sum(1 for lift in lifts if lift > 0)
        funnel = ranking.funnel.then("learned", lifted)
        if not lifted:
            return replace(ranking, funnel=funnel)
        order, new = _lifted([hit.score for hit in ranking.hits], lifts)
        hits = [replace(ranking.hits[i], score=new[i]) for i in order]
        ranking = reordered(ranking, order, hits)
        return replace(ranking, funnel=funnel, explanations=_explained(ranking.explanations, prior))


def configured(settings: Settings) -> Learn | None:
    return Learn(settings.learn_half_life_days) if settings.learn else None


KIND = StageKind(configured, (Rung("+learn", "AGENTTY_RAG_LEARN"),))

__all__ = ["DAY_S", "FORGOTTEN", "KIND", "LIFT", "MIN_SIMILARITY", "Learn", "decay", "priors", "similarity"]
