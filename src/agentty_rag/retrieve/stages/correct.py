"""Corrective grading: each candidate graded correct, ambiguous or incorrect; incorrect ones give way to the
next, and a retrieval that grades poorly as a whole gets one corrective second try.

After Yan et al., "Corrective Retrieval Augmented Generation" (2024), with the grader made of the evidence a
search already has instead of a model:

    evidence = RETRIEVAL_SHARE x retrieval + (1 - RETRIEVAL_SHARE) x support

* retrieval: the candidate's score relative to the best candidate's (0 to 1);
* support: the larger of its lexical support (the IDF-weighted share of the query's terms it holds) and, in
  hybrid mode, its dense support (1 at the dense leg's first rank, falling to 0 at ``DENSE_DEPTH``): a
  passage that paraphrases the query is not rejected for lacking its words when the dense leg ranks it high.

At least ``CORRECT_AT``: correct; under ``INCORRECT_BELOW``: incorrect; between: ambiguous. Incorrect
candidates move behind all the others, so the next ones refill the k shown — and when too few others exist,
the incorrect ones still fill them: k is never cut for grading's sake.

When no candidate of the first k is correct, one corrective action runs: feedback (``stages.prf``) when it is
switched on and added nothing to this search, else the whole index when a filter narrowed the search (a
broader scope); the stages before this one run again on the result, and it is kept when it grades better.
The funnel says what was done: ``graded 10 → 8 + 2 refills``, ``corrective: prf +5 terms (kept)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.features import QueryProfile, coverage
from agentty_rag.retrieve.ranking import Ranking, Stage, reordered, with_candidates
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.retrieve.stages import fuse, mmr, prf, rerank
from agentty_rag.retrieve.stages.kind import Rung, StageKind

RETRIEVAL_SHARE = 0.4
CORRECT_AT = 0.6
INCORRECT_BELOW = 0.3
DENSE_DEPTH = 20

CORRECT, AMBIGUOUS, INCORRECT = "correct", "ambiguous", "incorrect"


def grade(retrieval: float, support: float) -> tuple[str, float]:
    """The grade of a candidate from its relative retrieval score and its support (both 0 to 1), and its
    evidence."""
    evidence = RETRIEVAL_SHARE * min(max(retrieval, 0.0), 1.0) + (1 - RETRIEVAL_SHARE) * min(max(support, 0.0), 1.0)
    if evidence >= CORRECT_AT:
        return CORRECT, evidence
    if evidence < INCORRECT_BELOW:
        return INCORRECT, evidence
    return AMBIGUOUS, evidence


def dense_support(ranking: Ranking) -> dict[int, float]:
    """Each slot the dense leg ranked within ``DENSE_DEPTH``: 1 at its first rank, falling linearly."""
    leg = ranking.request.legs.get("dense", ())
    return {slot: 1.0 - rank / DENSE_DEPTH for rank, (slot, _) in enumerate(leg[:DENSE_DEPTH])}


def grades(ranking: Ranking) -> list[tuple[str, float]]:
    """Each hit's grade and evidence, in the order of the hits."""
    ranking = with_candidates(ranking)
    if not ranking.candidates or ranking.profile is None:
        return []
    profile: QueryProfile = ranking.profile
    best = max((hit.score for hit in ranking.hits), default=0.0)
    dense = dense_support(ranking)
    out = []
    for hit, slot, candidate in zip(ranking.hits, ranking.slots, ranking.candidates, strict=True):
        retrieval = hit.score / best if best > 0 else 0.0
        out.append(grade(retrieval, max(coverage(candidate, profile), dense.get(slot, 0.0))))
    return out


def correct_count(graded: list[tuple[str, float]], k: int) -> int:
    return sum(1 for label, _ in graded[:k] if label == CORRECT)


def refilled(ranking: Ranking, graded: list[tuple[str, float]]) -> Ranking:
    """Incorrect hits behind all the others (order otherwise kept), the grades in ``--explain``, and the funnel
    step that says how many of the first k were kept and refilled."""
    k = min(ranking.request.k, len(ranking.hits))
    order = [i for i, (label, _) in enumerate(graded) if label != INCORRECT]
    order += [i for i, (label, _) in enumerate(graded) if label == INCORRECT]
    kept = sum(1 for i in order[:k] if i < k and graded[i][0] != INCORRECT)
    refills = sum(1 for i in order[:k] if i >= k and graded[i][0] != INCORRECT)
    left = sum(1 for i in order[:k] if graded[i][0] == INCORRECT)
    step = f"graded {k} → {kept} + {refills} refills" + (f" + {left} incorrect kept" if left else "")
    by_key = {c.key: graded[i] for i, c in enumerate(ranking.candidates or ())}
    explanations = tuple(_with_grade(r, by_key.get(r.candidate.key)) for r in ranking.explanations)
    ranking = reordered(ranking, order)
    return replace(ranking, explanations=explanations, funnel=ranking.funnel.note(step))


def _with_grade(reranked: Reranked, graded: tuple[str, float] | None) -> Reranked:
    if graded is None:
        return reranked
    label, evidence = graded
    value = -evidence if label == INCORRECT else evidence
    return replace(reranked, contributions=(*reranked.contributions, (label, value)))


@dataclass(frozen=True)
class Correct:
    """The grading stage.

    Args:
        redo: the stages before it (after candidate generation), run again after a corrective action.
        feedback: the feedback stage when it is switched on (the first corrective action).
    """

    redo: tuple[Stage, ...] = ()
    feedback: prf.Feedback | None = None

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        described = with_candidates(ranking)
        graded = grades(described)
        if not graded:
            return ranking
        if correct_count(graded, ranking.request.k) == 0:
            described, graded = self.corrected(described, graded)
        return refilled(described, graded)

    def corrected(self, ranking: Ranking, graded: list[tuple[str, float]]) -> tuple[Ranking, list[tuple[str, float]]]:
        """One corrective action, kept when it grades better; the funnel says which and whether it was kept."""
        retry, action = self.second_try(ranking)
        if retry is None:
            return replace(ranking, funnel=ranking.funnel.note(f"corrective: none ({action})")), graded
        for stage in self.redo:
            retry = stage.run(retry)
        retry = with_candidates(retry)
        regraded = grades(retry)
        k = ranking.request.k
        if correct_count(regraded, k) > correct_count(graded, k):
            return replace(retry, funnel=ranking.funnel.note(f"corrective: {action} (kept)")), regraded
        return replace(ranking, funnel=ranking.funnel.note(f"corrective: {action} (no better, not kept)")), graded

    def second_try(self, ranking: Ranking) -> tuple[Ranking | None, str]:
        """The search to run again (from candidate generation) and what was done to it, or None and why none."""
        request = ranking.request
        start = Ranking(request, ranking.funnel)
        prf_added = any(stage.startswith("prf +") for stage, _ in ranking.funnel.stages)
        if self.feedback is not None and not prf_added:
            expansion = prf.feedback_for(start, self.feedback.docs, self.feedback.terms, force=True)
            if expansion.terms:
                return prf.requeried(start, expansion), f"prf +{len(expansion.terms)} terms"
        if request.allowed is not None:
            files = request.lexical.scores_files
            lexical = request.index.lexical_scores(request.analysis.weights, None, files=files)
            depth = len(request.legs.get("lexical", ())) or len(ranking.hits)
            legs = {**request.legs, "lexical": lexical.leg(depth)}
            widened = replace(request, allowed=None, lexical=lexical, legs=legs)
            return Ranking(widened, ranking.funnel), "the whole index (filters lifted)"
        return None, "feedback off or done, no filter to lift"


def configured(settings: Settings) -> Correct | None:
    if not settings.correct:
        return None
    before = (fuse.KIND, rerank.KIND, mmr.KIND)
    redo = tuple(stage for kind in before if (stage := kind.build(settings)) is not None)
    return Correct(redo, prf.configured(settings))


KIND = StageKind(configured, (Rung("+correct", "AGENTTY_RAG_CORRECT"),))

__all__ = [
    "AMBIGUOUS",
    "CORRECT",
    "CORRECT_AT",
    "INCORRECT",
    "INCORRECT_BELOW",
    "KIND",
    "Correct",
    "dense_support",
    "grade",
    "grades",
    "refilled",
]
