"""What the ranking stages share: the interface each one implements, and the state they hand on.

Candidate generation (``pipeline.generate``) starts a ``Ranking`` with each leg's candidates; every stage
takes the ranking and returns a new one (fused, reranked, diversified, cut to the hits shown), and the
pipeline reads the result off the last one. A stage never changes the ranking it is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.index.vectors.dense import Vector
from agentty_rag.retrieve.candidates import FileEvidence, QueryAnalysis, candidates_for, profile_query
from agentty_rag.retrieve.features import Candidate, QueryProfile
from agentty_rag.retrieve.fusion import DENSE_LED, DENSE_LED_LEXICAL_EVIDENCE, HYBRID, relative_similarities
from agentty_rag.retrieve.parsed import ParsedQuery
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.types import Funnel, Hit


@dataclass(frozen=True)
class Request:
    """What every stage may read of one search: the index, the query, and what candidate generation found.

    Args:
        query: the query as it was read once, at the top of the search (a stage never reads its text again
            but to quote it).
        analysis: the query's weighted terms and the names it asks for.
        lexical: the BM25 score of every chunk (and, when a stage asked for it, of every file).
        legs: each leg's candidates as (slot, score), best first: ``lexical``, and ``dense`` when it ran.
        allowed: the slots the filters admit (None: every slot).
        pool: how many candidates a leg contributes (a stage that searches again takes as many).
        embed: a text's unit vector from the session's dense leg, for a stage that searches the dense leg
            with another text (None when the leg is not up for this search; the hook returns None on a
            failure).
        dense: the dense leg's similarity of every chunk slot to the query (its cosine less ``hubness`` times
            its neighbourhood density; NaN: no vector, or not allowed), when that leg ran.
        lead: which leg leads on this corpus when both run (``fusion.HYBRID`` or ``fusion.DENSE_LED``, from
            the leg check).
        hubness: the share of a chunk's neighbourhood density the dense leg takes off (a stage that searches
            it again does the same).
    """

    index: CorpusIndex
    query: ParsedQuery
    k: int
    analysis: QueryAnalysis
    lexical: LexicalScores
    legs: Mapping[str, Sequence[tuple[int, float]]]
    allowed: npt.NDArray[np.bool_] | None = None
    pool: int = 30
    embed: Callable[[str], Vector | None] | None = None
    dense: npt.NDArray[np.float32] | None = None
    lead: str = HYBRID
    hubness: float = 0.0

    @functools.cached_property
    def dense_relative(self) -> npt.NDArray[np.float64] | None:
        """Each slot's dense similarity on the query's own scale (``fusion.relative_similarities``)."""
        return None if self.dense is None or not self.hybrid else relative_similarities(self.dense)

    @property
    def hybrid(self) -> bool:
        """The dense leg found candidates, so the legs are fused and the result is hybrid."""
        return bool(self.legs.get("dense"))


@dataclass(frozen=True)
class Ranking:
    """One search between two stages.

    Args:
        funnel: how many candidates each step kept, for the result header.
        hits: the candidates, best first (fusion fills them; later stages reorder, rescore and add).
        slots: each hit's chunk slot in the index.
        fused: every fused (slot, score), also those beyond the pool the hits were cut to.
        profile, term_ids: what the reranker knows of the query, worked out when a stage first needs it.
        candidates: what the reranker sees of each hit, in the order of ``hits`` (None until a stage needs it).
        files: each file's evidence, when the file order runs on this index.
        explanations: each reranked candidate's score and its parts (``--explain``).
        shown: the hits the search returns, set by the stage that makes the final cut.
        parts: what a stage before the reranker did to a slot's score, shown beside the reranker's parts.
        dense_share: the dense leg's share of the fusion's weight (0 when the lexical leg ranks alone).
        notes: what a stage did or why it was skipped, for the result header.
        found_by: for ``--explain``, what each optional stage's extra searches contributed to a hit, by
            chunk id (``expand 2/3``: two of three rewordings found it).
    """

    request: Request
    funnel: Funnel
    hits: tuple[Hit, ...] = ()
    slots: tuple[int, ...] = ()
    fused: tuple[tuple[int, float], ...] = ()
    profile: QueryProfile | None = None
    term_ids: Mapping[str, int] = field(default_factory=dict)
    candidates: tuple[Candidate, ...] | None = None
    files: FileEvidence | None = None
    explanations: tuple[Reranked, ...] = ()
    shown: tuple[Hit, ...] | None = None
    parts: Mapping[int, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    found_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dense_share: float = 0.0  # the dense leg's share of the fusion's weight (set by the fusion stage)


class Stage(Protocol):
    """One ranking step after candidate generation; the settings decide which run (``retrieve.stages``)."""

    @property
    def scores_files(self) -> bool:
        """Whether it reads each file's BM25 as a whole document, which candidate generation then works out."""
        ...

    def run(self, ranking: Ranking) -> Ranking:
        """The ranking after this step."""
        ...


def profiled(ranking: Ranking) -> Ranking:
    """The ranking with the query's profile (worked out once; a ranking without hits has none)."""
    if ranking.profile is not None or not ranking.hits:
        return ranking
    request = ranking.request
    profile, term_ids = profile_query(request.index, request.query, request.analysis.bare_name)
    dense_led = request.hybrid and request.lead == DENSE_LED
    evidence = DENSE_LED_LEXICAL_EVIDENCE if dense_led else 1.0
    profile = replace(profile, dense_share=ranking.dense_share, lexical_evidence=evidence)
    return replace(ranking, profile=profile, term_ids=term_ids)


def described(ranking: Ranking, count: int | None = None) -> list[Candidate]:
    """What the reranker sees of the first ``count`` hits (all of them when None); [] without hits."""
    ranking = profiled(ranking)
    if ranking.profile is None:
        return []
    if ranking.candidates is not None:
        return list(ranking.candidates[:count])
    return candidates_for(
        ranking.request.index,
        ranking.profile,
        dict(ranking.term_ids),
        list(ranking.hits[:count]),
        list(ranking.slots[:count]),
        ranking.files,
        ranking.request.dense_relative,
    )


def with_candidates(ranking: Ranking) -> Ranking:
    """The ranking with what the reranker sees of every hit (worked out once)."""
    ranking = profiled(ranking)
    if ranking.candidates is not None or ranking.profile is None:
        return ranking
    return replace(ranking, candidates=tuple(described(ranking)))


def reordered(ranking: Ranking, order: Sequence[int], hits: Sequence[Hit] | None = None) -> Ranking:
    """The hits (and their slots and candidates) in ``order``, positions in the current order; ``hits`` gives
    the reordered hits with new scores."""
    candidates = ranking.candidates
    return replace(
        ranking,
        hits=tuple(hits) if hits is not None else tuple(ranking.hits[i] for i in order),
        slots=tuple(ranking.slots[i] for i in order),
        candidates=None if candidates is None else tuple(candidates[i] for i in order),
    )


def explained(ranking: Ranking) -> tuple[Reranked, ...]:
    """The reranker's explanations, each with the parts earlier stages gave its slot (``parts``)."""
    if not ranking.parts:
        return ranking.explanations
    slot_of = {hit.chunk.chunk_id: slot for hit, slot in zip(ranking.hits, ranking.slots, strict=True)}
    out = []
    for item in ranking.explanations:
        earlier = ranking.parts.get(slot_of.get(item.candidate.chunk.chunk_id, -1), ())
        out.append(replace(item, contributions=(*item.contributions, *earlier)) if earlier else item)
    return tuple(out)


__all__ = [
    "Ranking",
    "Request",
    "Stage",
    "described",
    "explained",
    "profiled",
    "reordered",
    "with_candidates",
]
