"""A search's answer: its result fitted to the output budget and rendered, as text and as structured content.

The tools, the command line and rag-bench's output rungs all end here, so what rag-bench counts is what an
agent reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from agentty_rag.budget import BudgetConfig, Packed, fit
from agentty_rag.budget.tokens import text_tokens
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.render import render_context_block, render_structured, render_text
from agentty_rag.retrieve.features import QueryProfile
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.types import SearchResult


@dataclass(frozen=True)
class Outcome:
    """One search's result and the ranking behind it, fitted to ``budget`` and rendered when first read.

    Nothing is fitted until ``packed``, ``text``, ``structured`` or ``compact`` is read: rag-bench's ranking
    rungs read the hits alone, and the proactive hook decides to stay quiet before it fits anything.

    Args:
        result: what was found, with its header's facts (a proactive block's mode is ``result.mode``).
        retrieved: the ranking behind it (None when nothing was ranked): its confidence and weakest hit.
        budget: the output budget.
        evidence: scores a sentence by the query's term weights, for extractive compression (None: none).
        block: render as the proactive block instead of a tool's answer.
    """

    result: SearchResult
    retrieved: Retrieved | None
    budget: BudgetConfig
    evidence: Callable[[str], float] | None = None
    block: bool = False

    @property
    def confidence(self) -> float:
        return self.retrieved.confidence if self.retrieved is not None else 0.0

    @cached_property
    def packed(self) -> Packed:
        weakest = self.retrieved.weakest if self.retrieved is not None else None
        return fit(self.result.hits, self.budget, self.confidence, self.evidence, weakest)

    @cached_property
    def text(self) -> str:
        if self.block:
            return render_context_block(self.packed, self.result.mode)
        return render_text(self.result, self.packed)

    @cached_property
    def structured(self) -> dict[str, Any]:
        """The result as data, every passage's text included (the command line's ``--json``)."""
        return render_structured(self.result, self.packed, text_tokens(self.text))

    @cached_property
    def compact(self) -> dict[str, Any]:
        """The result as data without the passages' text, which the text content already holds: the tools'
        structured content, when ``AGENTTY_RAG_STRUCTURED`` asks for one."""
        return render_structured(self.result, self.packed, text_tokens(self.text), texts=False)

    @property
    def explanations(self) -> tuple[Reranked, ...]:
        return self.retrieved.explanations if self.retrieved is not None else ()

    @property
    def found_by(self) -> Mapping[str, tuple[str, ...]]:
        """--explain: the optional stages' parts."""
        return self.retrieved.found_by if self.retrieved is not None else {}

    @property
    def legs(self) -> Mapping[str, tuple[str, ...]]:
        """--explain: each leg's part."""
        return self.retrieved.legs if self.retrieved is not None else {}

    def refit(self, budget: BudgetConfig) -> Outcome:
        """The same result fitted to another budget (rag-bench's token-economy rows)."""
        return replace(self, budget=budget)


def query_evidence(index: CorpusIndex, profile: QueryProfile) -> Callable[[str], float]:
    """Scores a piece of text by the rare-term weight of the query terms it holds."""
    weights = {t: profile.idf.get(t, 0.0) for t in profile.terms}

    def evidence(text: str) -> float:
        # fsum: exact, so the total cannot depend on the set's (hash-seeded) order and flip a tie
        return math.fsum(weights.get(term, 0.0) for term in set(index.tokenize(text)))

    return evidence


def answer(
    index: CorpusIndex, result: SearchResult, retrieved: Retrieved | None, budget: BudgetConfig, block: bool = False
) -> Outcome:
    """A result's answer, fitted to ``budget`` when read.

    Args:
        index: the index searched: its tokenizer weighs sentences for extractive compression.
        result: what was found, with its header's facts.
        retrieved: the ranking behind it (None when nothing was ranked): its confidence, weakest hit and
            the query's term weights.
        budget: the output budget.
        block: render as the proactive block.
    """
    profile = retrieved.profile if retrieved is not None else None
    evidence = query_evidence(index, profile) if profile is not None else None
    return Outcome(result, retrieved, budget, evidence, block)


__all__ = ["Outcome", "answer", "query_evidence"]
