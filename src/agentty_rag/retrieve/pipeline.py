"""The search path, top to bottom: lexical (+ dense) candidates, then the ranking stages the settings switch
on, in order (``retrieve.stages``: fusion, rerank with the file order, MMR, the cut that stitches), then the
result with its confidence.

Ranking only: nothing here formats text or counts output bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.config import Settings
from agentty_rag.fsguard import cited_inside
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.vectors.base import best_of
from agentty_rag.retrieve.candidates import QueryAnalysis, analyse_query, lexical_alone
from agentty_rag.retrieve.confidence import retrieval_confidence
from agentty_rag.retrieve.features import QueryProfile, coverage
from agentty_rag.retrieve.fusion import HYBRID
from agentty_rag.retrieve.parsed import ParsedQuery
from agentty_rag.retrieve.ranking import Ranking, Request, Stage, described, explained, profiled
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.source_kinds import source_spec
from agentty_rag.types import Funnel, Hit


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside retrieval, before the candidate pool is cut.

    Args:
        scope: a path prefix the chunk's ``ref`` must equal or lie under (a file or a folder).
        sources: source kinds admitted (``docs``, ``skill``, ``memory``, ``code``).
        languages: languages admitted (code).
        hidden: refs never shown (the other copies of a translated document).
    """

    scope: str | None = None
    sources: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None
    hidden: frozenset[str] = frozenset()

    @property
    def active(self) -> bool:
        return self.scope is not None or self.sources is not None or self.languages is not None or bool(self.hidden)

    def key(self) -> str:
        hidden = xxhash.xxh3_64_hexdigest("\n".join(sorted(self.hidden)).encode()) if self.hidden else ""
        return repr((self.scope, self.sources, self.languages, hidden))

    def admits(self, source: str, ref: str, language: str) -> bool:
        if self.sources is not None and source not in self.sources:
            return False
        if ref in self.hidden:
            return False
        if self.languages is not None and language not in self.languages:
            return False
        if self.scope is not None:
            if not source_spec(source).located:
                return False  # skills and memory have no path to scope by
            if self.scope and ref != self.scope and not ref.startswith(self.scope.rstrip("/") + "/"):
                return False
        return True


@dataclass(frozen=True)
class Plan:
    """How a search runs, built from the settings: whether the dense leg may join, and the stages after
    candidate generation, in order."""

    stages: tuple[Stage, ...]
    dense: bool = True
    lexical: bool = True  # the lexical leg has a weight in the fusion (0: the dense leg ranks alone)
    lead: str = HYBRID  # which leg leads when both run: the leg check's verdict for the index
    hubness: float = 0.0  # code: the share of a chunk's neighbourhood density taken off its dense similarity

    @classmethod
    def from_settings(cls, settings: Settings) -> Plan:
        return cls(
            build_stages(settings),
            dense=settings.dense_weight > 0,
            lexical=settings.bm25_weight > 0,
            hubness=settings.hubness,
        )

    def lexical_alone(self, index: CorpusIndex, analysis: QueryAnalysis) -> bool:
        """Whether this search is made by the lexical leg alone (``candidates.lexical_alone``)."""
        return lexical_alone(index, analysis.long, self.lexical, analysis.bare_name)


@dataclass(frozen=True)
class Retrieved:
    """What one search ranked: the hits shown, best first, and what the output path needs to know of them."""

    hits: tuple[Hit, ...]
    funnel: Funnel
    mode: str
    explanations: tuple[Reranked, ...] = ()
    confidence: float = 0.0
    profile: QueryProfile | None = None
    weakest: float | None = None  # the lowest score among the candidates considered: relevance 0
    notes: tuple[str, ...] = ()  # what an optional stage did, or why it was skipped
    found_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # --explain: chunk id -> stage parts
    legs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # --explain: chunk id -> each leg's part


def candidate_pool(k: int) -> int:
    """How many candidates each leg contributes: clamp(k x 6, 30, 160)."""
    return max(30, min(160, k * 6))


def generate(
    index: CorpusIndex,
    query: ParsedQuery,
    k: int,
    filters: Filters,
    plan: Plan,
    query_vector: npt.NDArray[np.float32] | None = None,
    embed: Callable[[str], npt.NDArray[np.float32] | None] | None = None,
) -> Ranking:
    """Candidate generation: each leg's best chunks for ``query`` (the dense leg with ``query_vector``).

    ``embed`` embeds another text with the session's dense leg, for a stage that searches again (HyDE); it is
    handed on only when the dense leg ran.
    """
    allowed = index.allowed(filters.key(), filters.admits) if filters.active else None
    ranks_files = index.config.scoring.rank_files
    analysis = analyse_query(index, query, code=ranks_files)
    files = ranks_files and any(stage.scores_files for stage in plan.stages)
    lexical = index.lexical_scores(analysis.weights, allowed, files=files)
    legs = {"lexical": lexical.leg(candidate_pool(k))}
    funnel = Funnel().then("lexical", len(legs["lexical"]))
    dense = query_vector is not None and plan.dense and not plan.lexical_alone(index, analysis)
    similarities = None
    hubness = plan.hubness if ranks_files else 0.0  # code only: prose sections are compared by plain cosine
    if dense and query_vector is not None:
        similarities = index.dense_scores(query_vector, allowed, hubness)
        legs["dense"] = best_of(similarities, candidate_pool(k)) if similarities is not None else []
        funnel = funnel.then("dense", len(legs["dense"]))
    pool, hook = candidate_pool(k), embed if dense else None
    request = Request(index, query, k, analysis, lexical, legs, allowed, pool, hook, similarities, plan.lead, hubness)
    return Ranking(request, funnel)


class LegParts(Mapping[str, tuple[str, ...]]):
    """For ``--explain``: where each candidate stood in each leg, by chunk id — its rank in the leg's list and its
    score there (``lexical #3 12.41``; ``dense #1 0.712 → 1.00``, the similarity less the chunk's hubness share,
    and the same on the query's scale), or the leg's score alone when it was not in that list. Worked out when
    read: a search that is not explained pays nothing for it."""

    def __init__(self, ranking: Ranking) -> None:
        self._request = ranking.request
        self._pairs = tuple(zip(ranking.hits, ranking.slots, strict=True))

    @functools.cached_property
    def _table(self) -> dict[str, tuple[str, ...]]:
        request = self._request
        positions = {
            leg: {slot: rank for rank, (slot, _) in enumerate(ranked, start=1)} for leg, ranked in request.legs.items()
        }
        relative = request.dense_relative
        out: dict[str, tuple[str, ...]] = {}
        for hit, slot in self._pairs:
            parts = []
            for leg, at in positions.items():
                rank = at.get(slot)
                place = f"#{rank}" if rank else "(not in its list)"
                if leg == "dense" and request.dense is not None and slot < len(request.dense):
                    scaled = f" → {relative[slot]:.2f}" if relative is not None and slot < len(relative) else ""
                    parts.append(f"dense {place} {float(request.dense[slot]):.3f}{scaled}")
                elif leg == "lexical" and slot in request.lexical:
                    parts.append(f"lexical {place} {request.lexical.of(slot):.2f}")
            out[hit.chunk.chunk_id] = tuple(parts)
        return out

    def __getitem__(self, key: str) -> tuple[str, ...]:
        return self._table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def confidence(ranking: Ranking) -> float:
    """How sure the ranking is of its best hit (``retrieve.confidence``); 0 without hits."""
    top = described(ranking, 1)
    if not top or ranking.profile is None:
        return 0.0
    return retrieval_confidence(coverage(top[0], ranking.profile), [hit.score for hit in ranking.hits])


def search(
    index: CorpusIndex,
    query: ParsedQuery,
    k: int,
    filters: Filters,
    plan: Plan,
    query_vector: npt.NDArray[np.float32] | None = None,
    embed: Callable[[str], npt.NDArray[np.float32] | None] | None = None,
) -> Retrieved:
    """Rank the index's chunks for ``query`` (read once by ``parsed.parse_query``, with the index's tokenizer)
    and return the best ``k`` (fewer when fewer match).

    With ``query_vector`` (the query's embedding) the dense leg runs too and the legs are fused; ``embed``
    lets a stage embed another text (see ``generate``).
    """
    ranking = generate(index, query, k, filters, plan, query_vector, embed)
    for stage in plan.stages:
        ranking = stage.run(ranking)
    ranking = profiled(ranking)
    shown, outside = cited_in_workspace(
        ranking.shown if ranking.shown is not None else ranking.hits[:k], index.config.roots.values()
    )
    notes = (*ranking.notes, *([f"{outside} left out: cited outside the workspace"] if outside else []))
    return Retrieved(
        shown,
        ranking.funnel.then("returned", len(shown)),
        "hybrid" if ranking.request.hybrid else "bm25",
        explained(ranking),
        confidence(ranking),
        ranking.profile,
        min((hit.score for hit in ranking.hits), default=None),
        tuple(notes),
        ranking.found_by,
        LegParts(ranking),
    )


def cited_in_workspace(hits: Sequence[Hit], roots: Iterable[str]) -> tuple[tuple[Hit, ...], str]:
    """The hits whose every part is cited inside the workspace, and how many passages were left out ("" for
    none): whatever an index holds, an answer never names a path outside it."""
    kept = tuple(
        hit for hit in hits if all(not c.spec.located or cited_inside(c.ref, roots) for c in (hit.chunk, *hit.parts))
    )
    left = len(hits) - len(kept)
    return kept, "" if not left else f"{left} passage{'' if left == 1 else 's'}"


__all__ = ["Filters", "LegParts", "Plan", "Retrieved", "candidate_pool", "confidence", "generate", "search"]
