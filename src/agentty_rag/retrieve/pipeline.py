"""The search path, top to bottom: lexical (+ dense) candidates -> fused -> reranked (passages, and for code
the files they come from) -> merged -> stitched -> top k.

Ranking only: nothing here formats text or counts output bytes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.retrieve.candidates import (
    analyse_query,
    candidates_for,
    file_evidence,
    more_candidates,
    profile_query,
)
from agentty_rag.retrieve.confidence import retrieval_confidence
from agentty_rag.retrieve.features import Candidate, QueryProfile, coverage
from agentty_rag.retrieve.files import FILE_LEAD, merge_orders, top_indices
from agentty_rag.retrieve.fusion import leg_weights, rrf
from agentty_rag.retrieve.mmr import jaccard, mmr_order
from agentty_rag.retrieve.rerank import Reranked, rank_files, rerank, rerank_pool
from agentty_rag.retrieve.stitch import assemble
from agentty_rag.types import Funnel, Hit

_SPACES = re.compile(r"\s+")
# Stitching also merges in neighbours ranked up to this many times k (a method next to the one shown).
STITCH_REACH = 3


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside retrieval, before the candidate pool is cut.

    Args:
        scope: a path prefix the chunk's ``ref`` must equal or lie under (a file or a folder).
        sources: source kinds admitted (``docs``, ``skill``, ``memory``, ``code``).
        languages: languages admitted (code).
    """

    scope: str | None = None
    sources: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None

    @property
    def active(self) -> bool:
        return self.scope is not None or self.sources is not None or self.languages is not None

    def key(self) -> str:
        return repr((self.scope, self.sources, self.languages))

    def admits(self, source: str, ref: str, language: str) -> bool:
        if self.sources is not None and source not in self.sources:
            return False
        if self.languages is not None and language not in self.languages:
            return False
        if self.scope is not None:
            if source not in ("docs", "code"):
                return False  # skills and memory have no path to scope by
            if self.scope and ref != self.scope and not ref.startswith(self.scope.rstrip("/") + "/"):
                return False
        return True


@dataclass(frozen=True)
class Options:
    """Which stages run. Built from the settings by the service (their defaults live there); every stage can
    be switched off."""

    rerank: bool
    mmr: bool
    mmr_lambda: float
    stitch: bool
    bm25_weight: float
    dense_weight: float
    file_ranking: bool = False


@dataclass(frozen=True)
class Retrieved:
    hits: tuple[Hit, ...]
    funnel: Funnel
    mode: str
    explanations: tuple[Reranked, ...] = ()
    confidence: float = 0.0
    profile: QueryProfile | None = None
    weakest: float | None = None  # the lowest score among the candidates considered: relevance 0


def candidate_pool(k: int) -> int:
    """How many candidates each leg contributes: clamp(k x 6, 30, 160)."""
    return max(30, min(160, k * 6))


@functools.lru_cache(maxsize=16384)
def _fingerprint(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def deduplicate(hits: list[Hit]) -> list[Hit]:
    """Collapse passages with the same text (whitespace and case aside), keeping the first (best) one."""
    kept: dict[str, int] = {}
    out: list[Hit] = []
    for hit in hits:
        key = _fingerprint(hit.chunk.text)
        index = kept.get(key)
        if index is None:
            kept[key] = len(out)
            out.append(hit)
        else:
            first = out[index]
            out[index] = Hit(first.chunk, first.score, (*first.also, hit.chunk.provenance))
    return out


def per_file_cap(k: int) -> int:
    """How many of the k results one file may take before other files get a turn: max(2, ceil(k / 3))."""
    return max(2, -(-k // 3))


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


def search(
    index: CorpusIndex,
    query: str,
    k: int,
    filters: Filters,
    options: Options,
    query_vector: npt.NDArray[np.float32] | None = None,
) -> Retrieved:
    """Rank the index's chunks for ``query`` and return the best ``k`` (fewer when fewer match).

    With ``query_vector`` (the query's embedding) the dense leg runs too and the legs are fused.
    """
    allowed = index.allowed(filters.key(), filters.admits) if filters.active else None
    by_files = options.rerank and options.file_ranking and index.config.scoring.rank_files
    analysis = analyse_query(index, query, code=index.config.scoring.rank_files)
    lexical = index.lexical_scores(analysis.weights, allowed, files=by_files)
    candidates = [(slot, float(lexical.chunks[slot])) for slot in top_indices(lexical.chunks, candidate_pool(k))]
    funnel = Funnel().then("lexical", len(candidates))
    dense = []
    if query_vector is not None and options.dense_weight > 0:
        dense = index.dense_search(query_vector, candidate_pool(k), allowed)
        funnel = funnel.then("dense", len(dense))
    if dense:
        weights = leg_weights(query, options.bm25_weight, options.dense_weight)
        fused = rrf({"lexical": candidates, "dense": dense}, weights)
    else:
        fused = candidates  # one leg: fusion is the identity, and BM25 keeps its own scores
    funnel = funnel.then("fused", len(fused))
    extra = more_candidates(index, lexical, analysis, {slot for slot, _ in fused}, allowed) if by_files else []
    chunks = index.chunks([slot for slot, _ in fused] + extra)
    scored = [(slot, Hit(chunks[slot], score)) for slot, score in fused if slot in chunks]
    # Deterministic order: score first, then the chunk's content-derived id (never insertion order).
    scored.sort(key=lambda pair: (-round(pair[1].score, 9), pair[1].chunk.chunk_id))
    pool = scored[: rerank_pool(k)]
    # A file's best chunk or a definition that no leg ranked: its lexical score (in hybrid mode, the pool's
    # lowest fused score: it has no rank of its own in the fused list).
    lowest = min((h.score for _, h in pool), default=0.0)
    pool += [(s, Hit(chunks[s], lowest if dense else float(lexical.chunks[s]))) for s in extra if s in chunks]
    if by_files and extra:
        funnel = funnel.then("+files/definitions", len(pool))
    explanations: tuple[Reranked, ...] = ()
    profile = None
    candidates_seen: list[Candidate] = []
    if pool:
        profile, term_ids = profile_query(index, query)
        wanted = pool if options.rerank or options.mmr else pool[:1]
        evidence = file_evidence(lexical, analysis) if by_files else None
        candidates_seen = candidates_for(
            index, profile, term_ids, [h for _, h in wanted], [s for s, _ in wanted], evidence
        )
    if options.rerank and profile is not None and candidates_seen:
        reranked = rerank(candidates_seen, profile)
        scores = [r.score for r in reranked]
        if by_files:
            by_file = rank_files(reranked, profile)
            # The file order leads a short lexical query; a long one, or one the dense leg has read for its
            # meaning, starts with the passage order.
            lead = 0 if analysis.long or dense else FILE_LEAD
            merged = merge_orders(by_file, reranked, lead, key=lambda r: id(r.candidate))
            scores = standings(merged, by_file, reranked)
            reranked = merged
        explanations = tuple(reranked)
        candidates_seen = [r.candidate for r in reranked]
        hits = [Hit(r.candidate.chunk, score) for r, score in zip(reranked, scores, strict=True)]
        funnel = funnel.then("reranked", len(hits))
    else:
        hits = [hit for _, hit in pool]
    if options.mmr and candidates_seen:
        term_sets = [c.term_ids for c in candidates_seen]
        order = mmr_order(
            [h.score for h in hits],
            lambda i, j: jaccard(term_sets[i], term_sets[j]),
            options.mmr_lambda,
            [h.chunk.ref for h in hits],
            per_file_cap(k),
        )
        hits = [hits[i] for i in order]
        candidates_seen = [candidates_seen[i] for i in order]
    confidence = 0.0
    if profile is not None and candidates_seen:
        confidence = retrieval_confidence(coverage(candidates_seen[0], profile), [h.score for h in hits])
    unique = deduplicate(hits)
    top = tuple(assemble(unique, k, options.stitch, STITCH_REACH * k if by_files else 0))
    funnel = funnel.then("dedup/stitch" if options.stitch else "dedup", len(unique))
    weakest = min((h.score for h in hits), default=None)
    mode = "hybrid" if dense else "bm25"
    return Retrieved(top, funnel.then("returned", len(top)), mode, explanations, confidence, profile, weakest)


__all__ = [
    "STITCH_REACH",
    "Filters",
    "Options",
    "Retrieved",
    "candidate_pool",
    "deduplicate",
    "per_file_cap",
    "profile_query",
    "search",
    "standings",
]
