"""The search path, top to bottom: lexical (+ dense) candidates -> fused -> reranked -> stitched -> top k.

Ranking only: nothing here formats text or counts output bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.tokenize import path_words
from agentty_rag.retrieve.confidence import retrieval_confidence
from agentty_rag.retrieve.features import (
    Candidate,
    QueryProfile,
    coverage,
    own_name,
    query_identifiers,
    query_phrases,
)
from agentty_rag.retrieve.features import wants_tests as asks_for_tests
from agentty_rag.retrieve.fusion import leg_weights, rrf
from agentty_rag.retrieve.mmr import jaccard, mmr_order
from agentty_rag.retrieve.rerank import Reranked, rerank, rerank_pool
from agentty_rag.retrieve.stitch import assemble
from agentty_rag.types import Chunk, Funnel, Hit

_SPACES = re.compile(r"\s+")


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


def profile_query(index: CorpusIndex, query: str) -> tuple[QueryProfile, dict[str, int]]:
    """What the reranker knows of the query, and the index's ids of its terms."""
    terms = tuple(dict.fromkeys(index.tokenize(query)))
    ids, idf = index.term_statistics(terms)
    profile = QueryProfile(query, terms, idf, query_identifiers(query), query_phrases(query), asks_for_tests(query))
    return profile, ids


def _context_text(chunk: Chunk) -> str:
    return f"{chunk.symbol.replace('.', ' ')} {chunk.context} {path_words(chunk.ref)}"


def candidates_for(
    index: CorpusIndex, profile: QueryProfile, term_ids: dict[str, int], hits: list[Hit], slots: list[int]
) -> list[Candidate]:
    """What the reranker needs of each hit: which query terms it holds, in its text, name and context."""
    held = index.chunk_term_ids(slots)
    wanted = {t: term_ids[t] for t in profile.terms if t in term_ids}
    out = []
    for hit, slot in zip(hits, slots, strict=True):
        chunk_ids = held.get(slot, frozenset())
        terms = frozenset(t for t, i in wanted.items() if i in chunk_ids)
        name = frozenset(index.tokenize(own_name(hit.chunk)))
        context = frozenset(index.tokenize(_context_text(hit.chunk)))
        out.append(Candidate(hit.chunk, hit.score, terms, name, context, chunk_ids))
    return out


def per_file_cap(k: int) -> int:
    """How many of the k results one file may take before other files get a turn: max(2, ceil(k / 3))."""
    return max(2, -(-k // 3))


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
    candidates = index.lexical_search(query, candidate_pool(k), allowed)
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
    chunks = index.chunks([slot for slot, _ in fused])
    scored = [(slot, Hit(chunks[slot], score)) for slot, score in fused if slot in chunks]
    # Deterministic order: score first, then the chunk's content-derived id (never insertion order).
    scored.sort(key=lambda pair: (-round(pair[1].score, 9), pair[1].chunk.chunk_id))
    pool = scored[: rerank_pool(k)]
    explanations: tuple[Reranked, ...] = ()
    profile = None
    candidates_seen: list[Candidate] = []
    if pool:
        profile, term_ids = profile_query(index, query)
        wanted = pool if options.rerank or options.mmr else pool[:1]
        candidates_seen = candidates_for(index, profile, term_ids, [h for _, h in wanted], [s for s, _ in wanted])
    if options.rerank and profile is not None and candidates_seen:
        reranked = rerank(candidates_seen, profile)
        explanations = tuple(reranked)
        candidates_seen = [r.candidate for r in reranked]
        hits = [Hit(r.candidate.chunk, r.score) for r in reranked]
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
    top = tuple(assemble(unique, k, options.stitch))
    funnel = funnel.then("dedup/stitch" if options.stitch else "dedup", len(unique))
    weakest = min((h.score for h in hits), default=None)
    mode = "hybrid" if dense else "bm25"
    return Retrieved(top, funnel.then("returned", len(top)), mode, explanations, confidence, profile, weakest)


__all__ = [
    "Filters",
    "Options",
    "Retrieved",
    "candidate_pool",
    "deduplicate",
    "per_file_cap",
    "profile_query",
    "search",
]
