"""Pseudo-relevance feedback: the query expanded from its own best lexical passages and searched once more.

RM3 (Abdul-Jaleel et al., "UMass at TREC 2004: Novelty and HARD", 2004; Lavrenko and Croft, "Relevance-Based
Language Models", SIGIR 2001), with the term's IDF as a further factor:

    feedback(t) = idf(t) x sum over the top m passages d of  P(Q | d) x tf(t, d) / |d|

where P(Q | d) is the passage's share of the top m's BM25 scores. The ``terms`` best feedback terms that are
not already in the query join it, and the expanded query keeps the original's weight:

    weight(t) = query(t) + (1 - ORIGINAL_WEIGHT) / ORIGINAL_WEIGHT x W x feedback(t) / sum of feedback

(W: the sum of the query's own weights), so the original terms hold ``ORIGINAL_WEIGHT`` of the whole. BM25 is
linear in the query weights: each passage's new score is its old score plus what the feedback terms add.

Feedback can drift toward a wrong first result, so it is guarded:

* it does not run when the first pass is already confident (``retrieve.confidence`` of the best lexical
  passage at least ``CONFIDENT``), nor for a bare name or a long query (an issue, a log: it already carries
  its vocabulary);
* a feedback term must appear in at least ``MIN_PASSAGES`` of the m passages (a term of one passage is that
  passage's, not the topic's);
* the expanded query keeps the original terms at their full weight (above);
* the expanded search does not replace the first pass: the two are fused by rank (``FIRST_PASS_WEIGHT``,
  ``EXPANDED_WEIGHT``), and the lexical evidence of files (the file order, for code) stays the first pass's.

It runs before fusion: it replaces the lexical leg, and the later stages see an ordinary search. The funnel
says ``prf +6 terms`` or why it was skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.keywords import keywords_for
from agentty_rag.retrieve.confidence import retrieval_confidence
from agentty_rag.retrieve.fusion import rrf
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.types import Chunk

# The share of the expanded query's weight the original terms keep (RM3's lambda).
ORIGINAL_WEIGHT = 0.7
# The expanded search is fused with the first pass by rank, with these weights: the first pass's order anchors
# the result against drift (chosen on the fixture sets: see the README's table of optional stages).
FIRST_PASS_WEIGHT = 1.0
EXPANDED_WEIGHT = 2.0
# A first pass at least this confident is not expanded.
CONFIDENT = 0.8
# A feedback term must occur in at least this many of the feedback passages (when there are that many).
MIN_PASSAGES = 2
# Terms shorter than this, and numbers, are not feedback terms.
MIN_TERM_CHARS = 3


@dataclass(frozen=True)
class Expansion:
    """What feedback did to one search: the terms it added (term -> weight), or why it added none."""

    terms: Mapping[str, float]
    skipped: str = ""


def relevance_model(
    passages: Sequence[tuple[Sequence[str], float]], idf: Mapping[str, float], exclude: set[str]
) -> dict[str, float]:
    """Each candidate feedback term's weight: its IDF times its score-weighted share in the passages.

    Args:
        passages: each feedback passage's terms (with repeats) and its first-pass score.
        idf: each term's IDF (a term without one is not a candidate).
        exclude: terms never proposed (the query's own).
    """
    total = sum(score for _, score in passages if score > 0)
    if total <= 0:
        return {}
    model: dict[str, float] = {}
    seen_in: Counter[str] = Counter()
    for terms, score in passages:
        if score <= 0 or not terms:
            continue
        counts = Counter(terms)
        for term, count in counts.items():
            model[term] = model.get(term, 0.0) + (score / total) * count / len(terms)
            seen_in[term] += 1
    need = min(MIN_PASSAGES, sum(1 for terms, score in passages if score > 0 and terms))
    return {
        term: weight * idf[term]
        for term, weight in model.items()
        if term not in exclude
        and seen_in[term] >= need
        and len(term) >= MIN_TERM_CHARS
        and not term.isdigit()
        and idf.get(term, 0.0) > 0
    }


def best_terms(model: Mapping[str, float], count: int) -> dict[str, float]:
    """The ``count`` heaviest terms, ties by the term (deterministic)."""
    ranked = sorted(model.items(), key=lambda pair: (-pair[1], pair[0]))[:count]
    return dict(ranked)


def expanded_weights(original: Mapping[str, float], feedback: Mapping[str, float]) -> dict[str, float]:
    """The original weights, plus the feedback terms sharing ``1 - ORIGINAL_WEIGHT`` of the whole."""
    weights = dict(original)
    total = sum(feedback.values())
    if total <= 0:
        return weights
    budget = (1.0 - ORIGINAL_WEIGHT) / ORIGINAL_WEIGHT * sum(original.values())
    for term, value in feedback.items():
        weights[term] = weights.get(term, 0.0) + budget * value / total
    return weights


def first_pass_confidence(index: CorpusIndex, terms: Sequence[str], leg: Sequence[tuple[int, float]]) -> float:
    """``retrieve.confidence`` of the lexical leg alone: the best passage's IDF-weighted share of the query's
    terms, and how far it stands above the second."""
    if not leg or not terms:
        return 0.0
    ids, idf = index.term_statistics(terms)
    held = index.chunk_term_ids([leg[0][0]]).get(leg[0][0], frozenset())
    total = sum(idf.get(t, 0.0) for t in terms)
    covered = sum(idf.get(t, 0.0) for t in terms if t in ids and ids[t] in held)
    share = covered / total if total > 0 else 0.0
    return retrieval_confidence(share, [score for _, score in leg[:2]])


def passage_terms(index: CorpusIndex, chunk: Chunk) -> list[str]:
    """A passage's terms as feedback sees them: without its language's keywords (``def``, ``return``, ``self``
    are in every passage of the language, and say nothing of what this one does)."""
    keywords = keywords_for(chunk.language) if chunk.spec.code else frozenset()
    return [term for term in index.tokenize(chunk.text) if term not in keywords]


def feedback_for(ranking: Ranking, docs: int, terms: int, force: bool = False) -> Expansion:
    """The feedback terms for the search (none, with the reason, when a guard holds; ``force`` ignores the
    confidence guard, for a corrective second try)."""
    request = ranking.request
    leg = request.legs.get("lexical", ())
    if not leg:
        return Expansion({}, "no lexical candidates")
    if request.analysis.names or request.analysis.long:
        return Expansion({}, "the query names what it wants" if request.analysis.names else "a long query")
    query_terms = list(request.query.distinct)
    if not force and first_pass_confidence(request.index, query_terms, leg) >= CONFIDENT:
        return Expansion({}, "confident first pass")
    top = leg[:docs]
    chunks = request.index.chunks([slot for slot, _ in top])
    passages = [(passage_terms(request.index, chunks[slot]), score) for slot, score in top if slot in chunks]
    vocabulary = sorted({term for passage, _ in passages for term in passage})
    _, idf = request.index.term_statistics(vocabulary)
    model = relevance_model(passages, idf, set(request.analysis.weights) | set(query_terms))
    chosen = best_terms(model, terms)
    return Expansion(chosen, "" if chosen else "no feedback term")


def rank_fused(
    first: Sequence[tuple[int, float]], second: Sequence[tuple[int, float]], depth: int
) -> list[tuple[int, float]]:
    """The first pass and the expanded one fused by rank (``retrieve.fusion.rrf``), the best ``depth``, scaled so
    the best scores as the first pass's best did (the later stages read the lexical leg's scores)."""
    fused = rrf({"first": first, "expanded": second}, {"first": FIRST_PASS_WEIGHT, "expanded": EXPANDED_WEIGHT})
    fused = fused[:depth]
    if not fused or not first:
        return fused
    scale = first[0][1] / fused[0][1]
    return [(slot, score * scale) for slot, score in fused]


def requeried(ranking: Ranking, expansion: Expansion) -> Ranking:
    """The ranking with its lexical leg from the expanded query, fused by rank with the first pass."""
    request = ranking.request
    weights = expanded_weights(request.analysis.weights, expansion.terms)
    depth = len(request.legs["lexical"])
    first = request.legs["lexical"]
    second = request.index.lexical_scores(weights, request.allowed).leg(depth)
    leg = rank_fused(first, second, depth)
    # The lexical evidence stays the first pass's: a file is not strong for the feedback terms alone.
    legs = {**request.legs, "lexical": leg}
    return replace(ranking, request=replace(request, legs=legs), parts={**ranking.parts, **gains(first, leg)})


def gains(first: Sequence[tuple[int, float]], leg: Sequence[tuple[int, float]]) -> dict[int, tuple[tuple[str, float]]]:
    """How many places feedback moved each slot up the lexical leg (down when negative; a slot the first pass
    did not rank counts from just below it), for ``--explain``."""
    before = {slot: rank for rank, (slot, _) in enumerate(first)}
    return {
        slot: (("prf rank", float(before.get(slot, len(first)) - rank)),)
        for rank, (slot, _) in enumerate(leg)
        if before.get(slot, len(first)) != rank
    }


@dataclass(frozen=True)
class Feedback:
    """The feedback stage: ``docs`` passages feed it, ``terms`` terms join the query."""

    docs: int = 8
    terms: int = 8

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        expansion = feedback_for(ranking, self.docs, self.terms)
        if not expansion.terms:
            return replace(ranking, funnel=ranking.funnel.note(f"prf: skipped ({expansion.skipped})"))
        ranking = requeried(ranking, expansion)
        return replace(ranking, funnel=ranking.funnel.note(f"prf +{len(expansion.terms)} terms"))


def configured(settings: Settings) -> Feedback | None:
    return Feedback(settings.prf_docs, settings.prf_terms) if settings.prf else None


KIND = StageKind(configured, (Rung("+prf", "AGENTTY_RAG_PRF"),))

__all__ = [
    "CONFIDENT",
    "KIND",
    "EXPANDED_WEIGHT",
    "FIRST_PASS_WEIGHT",
    "ORIGINAL_WEIGHT",
    "Expansion",
    "Feedback",
    "best_terms",
    "expanded_weights",
    "feedback_for",
    "first_pass_confidence",
    "gains",
    "passage_terms",
    "rank_fused",
    "relevance_model",
    "requeried",
]
