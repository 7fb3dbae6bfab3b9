"""A search's answer: its result fitted to the output budget and rendered, as text and as structured content.

The tools, the command line and rag-bench's output rungs all end here, so what rag-bench counts is what an
agent reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentty_rag.budget import BudgetConfig, Packed, fit
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.render import render_structured, render_text
from agentty_rag.retrieve.features import QueryProfile
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.types import SearchResult


@dataclass(frozen=True)
class Outcome:
    """One search's result, its fitted passages, and both renderings."""

    result: SearchResult
    packed: Packed
    text: str
    structured: dict[str, Any]
    explanations: tuple[Reranked, ...] = ()
    found_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # --explain: the optional stages' parts
    legs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # --explain: each leg's part


def query_evidence(index: CorpusIndex, profile: QueryProfile) -> Callable[[str], float]:
    """Scores a piece of text by the rare-term weight of the query terms it holds."""
    weights = {t: profile.idf.get(t, 0.0) for t in profile.terms}

    def evidence(text: str) -> float:
        # fsum: exact, so the total cannot depend on the set's (hash-seeded) order and flip a tie
        return math.fsum(weights.get(term, 0.0) for term in set(index.tokenize(text)))

    return evidence


def answer(index: CorpusIndex, result: SearchResult, retrieved: Retrieved | None, budget: BudgetConfig) -> Outcome:
    """Fit a result's hits to ``budget`` and render them.

    Args:
        index: the index searched: its tokenizer weighs sentences for extractive compression.
        result: what was found, with its header's facts.
        retrieved: the ranking behind it (None when nothing was ranked): its confidence, weakest hit and
            the query's term weights.
        budget: the output budget.
    """
    evidence = None
    confidence = 0.0
    weakest = None
    if retrieved is not None:
        confidence, weakest = retrieved.confidence, retrieved.weakest
        if retrieved.profile is not None:
            evidence = query_evidence(index, retrieved.profile)
    packed = fit(result.hits, budget, confidence, evidence, weakest)
    explanations = retrieved.explanations if retrieved is not None else ()
    found_by = retrieved.found_by if retrieved is not None else {}
    legs = retrieved.legs if retrieved is not None else {}
    text, structured = render_text(result, packed), render_structured(result, packed)
    return Outcome(result, packed, text, structured, explanations, found_by, legs)


__all__ = ["Outcome", "answer", "query_evidence"]
