"""The deterministic feature reranker: a passage score, and (for code) a file score on top of it.

    passage = fused / best fused  +  sum over features of weight x feature

The fused score keeps the first say (it is normalised to [0, 1]); each feature adds or takes away a bounded
amount. A passage of a changelog or release notes then keeps ``CHANGELOG_FACTOR`` of its score unless the
question is about a change or a version (``features.changelog_passage``): a changelog names every feature,
release after release, and would crowd the guide out of every how-to answer. For code, the files the
passages come from are ranked too (``rank_files``):

    file order:  score = passage / best passage  +  (passage / best passage) x sum of weight x file feature

A file's features are the best its candidates show (most are the same for all of them), and they count in
full for the file's best passage, half for its next one, a quarter for the one after (``REPEAT``): a strong
file leads, and its other passages must mostly stand on their own. The file part is scaled by the passage's
relative score, so a weak passage of a strong file does not jump over a strong passage elsewhere.

Both legs' evidence counts at every step. The fused score ranks by both legs; the dense leg's similarity
(calibrated per query, ``fusion.relative_similarities``) is a passage feature and, as a file's best and summed
similarities, file evidence beside the file's BM25, each weighted by the dense leg's share of the fusion. The
features that count the query's words (``LEXICAL_EVIDENCE``) weigh ``QueryProfile.lexical_evidence`` of
themselves: all of it, except where the leg check found that the dense leg leads on the corpus.

The weights are named, live here only, and were chosen with ``rag-bench`` and the development benchmarks
(see the benchmark pages); they are round numbers on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentty_rag.retrieve import features as f
from agentty_rag.retrieve.features import Candidate, QueryProfile

Feature = Callable[[Candidate, QueryProfile], float]


def _dense(candidate: Candidate, profile: QueryProfile) -> float:
    return profile.dense_share * candidate.dense


def _file_dense(candidate: Candidate, profile: QueryProfile) -> float:
    return profile.dense_share * candidate.file_dense


def _file_dense_sum(candidate: Candidate, profile: QueryProfile) -> float:
    return profile.dense_share * candidate.file_dense_sum


# name: (weight, feature). Positive weights reward, negative ones demote.
FEATURES: dict[str, tuple[float, Feature]] = {
    "coverage": (0.45, f.coverage),
    "name": (0.30, f.name_match),
    "context": (0.15, f.context_match),
    "phrase": (0.20, f.phrase_match),
    "identifier": (0.20, f.identifier_match),
    "defines": (0.30, f.defines_identifier),
    "defines_name": (1.0, f.defines_bare_name),
    "definition": (0.45, lambda c, p: f.is_definition(c.chunk)),
    "test_file": (-0.50, lambda c, p: f.test_file(c.chunk, p)),
    "low_value_path": (-0.10, lambda c, p: f.low_value_path(c.chunk)),
    "tiny": (-0.10, lambda c, p: f.tiny(c.chunk)),
    "link_heavy": (-0.20, lambda c, p: f.link_heavy(c.chunk)),
    "dense": (0.50, _dense),
}

# The evidence of a file, for the file order.
FILE_FEATURES: dict[str, tuple[float, Feature]] = {
    "file_bm25": (2.0, lambda c, p: c.file_score),
    "file_chunks": (1.0, lambda c, p: c.file_sum),
    "defines_asked": (3.0, lambda c, p: c.defines_asked),
    "named_after": (2.0, lambda c, p: c.named_file),
    "named_with_words": (0.25, lambda c, p: c.named_with),
    "test_file": (-1.0, lambda c, p: f.test_file(c.chunk, p)),
    "file_dense": (1.0, _file_dense),
    "file_dense_sum": (1.0, _file_dense_sum),
}
# The features that count the query's words in a passage or a file (``QueryProfile.lexical_evidence`` scales
# them); the names a query asks for are evidence of another kind and always count in full.
LEXICAL_EVIDENCE = frozenset({"coverage", "name", "context", "phrase", "file_bm25", "file_chunks"})
# The share of a file's evidence its next passage gets (the best passage gets all of it).
REPEAT = 0.5
# What a changelog passage keeps of its score for a question that is not about a change or a version.
CHANGELOG_FACTOR = 0.5


@dataclass(frozen=True)
class Reranked:
    """A candidate's new score and what each part contributed (for ``--explain``)."""

    candidate: Candidate
    score: float
    contributions: tuple[tuple[str, float], ...]


def rerank_pool(k: int) -> int:
    """How many fused candidates the reranker looks at: clamp(k x 3, 20, 100)."""
    return max(20, min(100, k * 3))


def rerank(
    candidates: Sequence[Candidate], profile: QueryProfile, weights: dict[str, tuple[float, Feature]] | None = None
) -> list[Reranked]:
    """Score every candidate by its passage features; best first, ties broken by chunk id."""
    table = FEATURES if weights is None else weights
    if not candidates:
        return []
    best = max(c.score for c in candidates) or 1.0
    out: list[Reranked] = []
    for candidate in candidates:
        parts = [("fused", candidate.score / best)]
        for name, (weight, feature) in table.items():
            scaled = weighed(name, weight, profile)
            if scaled:
                parts.append((name, scaled * feature(candidate, profile)))
        total = sum(v for _, v in parts)
        if total > 0 and f.changelog_passage(candidate.chunk, profile):
            parts.append(("changelog", -(1.0 - CHANGELOG_FACTOR) * total))
            total = sum(v for _, v in parts)
        out.append(Reranked(candidate, total, tuple(parts)))
    out.sort(key=_order)
    return out


def rank_files(
    passages: Sequence[Reranked],
    profile: QueryProfile,
    weights: dict[str, tuple[float, Feature]] | None = None,
    repeat: float = REPEAT,
) -> list[Reranked]:
    """The file order: each passage's relative passage score plus its file's evidence (see the module doc).

    Args:
        passages: candidates with their passage scores, best first (what ``rerank`` returns).
        profile: the query.
        weights: file features (default ``FILE_FEATURES``).
        repeat: the share of a file's evidence its next passage gets.
    """
    table = FILE_FEATURES if weights is None else weights
    if not passages:
        return []
    top = passages[0].score
    evidence: dict[str, dict[str, float]] = {}
    for passage in passages:
        own = evidence.setdefault(passage.candidate.chunk.ref, {})
        # A test or an example does not lead by its file's evidence unless the question asks for it: a test
        # file says every word of the code it tests, often more than that code.
        secondary = f.secondary_file(passage.candidate.chunk, profile)
        for name, (weight, feature) in table.items():
            scaled = weighed(name, weight, profile)
            if scaled:
                value = scaled * feature(passage.candidate, profile)
                if secondary:
                    value = min(value, 0.0)
                # The best its passages show: the highest reward, the mildest penalty.
                own[name] = max(own.get(name, value), value)
    seen: dict[str, int] = {}
    out = []
    for passage in passages:
        ref = passage.candidate.chunk.ref
        relative = max(passage.score / top, 0.0) if top > 0 else 0.0
        share = relative * repeat ** seen.get(ref, 0)
        seen[ref] = seen.get(ref, 0) + 1
        parts = [(name, value / top) for name, value in passage.contributions] if top > 0 else []
        parts += [(f"file {name}", value * share) for name, value in evidence[ref].items()]
        out.append(Reranked(passage.candidate, sum(v for _, v in parts), tuple(parts)))
    out.sort(key=_order)
    return out


def weighed(name: str, weight: float, profile: QueryProfile) -> float:
    """A feature's weight for this query: scaled by ``profile.lexical_evidence`` when it counts the query's
    words (``LEXICAL_EVIDENCE``)."""
    return weight * profile.lexical_evidence if name in LEXICAL_EVIDENCE else weight


def _order(reranked: Reranked) -> tuple[float, str]:
    return (-round(reranked.score, 9), f.key_of(reranked.candidate))


__all__ = [
    "CHANGELOG_FACTOR",
    "FEATURES",
    "FILE_FEATURES",
    "LEXICAL_EVIDENCE",
    "REPEAT",
    "Reranked",
    "rank_files",
    "rerank",
    "rerank_pool",
    "weighed",
]
