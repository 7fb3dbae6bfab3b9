"""The settings of the budget: how many bytes of passages a result shows, which bytes, and in what form.

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import KIB, flag, integer, number


@dataclass(frozen=True)
class BudgetSettings:
    """Budget: how many bytes of passages a result shows, which bytes, and in what form."""

    output_bytes: int = integer(
        "AGENTTY_RAG_OUTPUT_BYTES",
        12_288,
        "Aggregate budget for the passage bodies of one result.",
        low=2 * KIB,
        high=64 * KIB,
    )
    relevance_floor: float = number(
        "AGENTTY_RAG_RELEVANCE_FLOOR",
        0.30,
        "A passage is kept only if its relevance (1 for the best hit, 0 for the weakest candidate) is at "
        "least this (0 keeps every hit; the best is always kept).",
        low=0.0,
        high=1.0,
    )
    code_passage_bytes: int = integer(
        "AGENTTY_RAG_CODE_PASSAGE_BYTES",
        1200,
        "Code: most bytes the best passage shows, half of it each other one; a longer passage shows the lines "
        "the query needs (0: no cap, a passage shows what its share of the budget allows).",
        low=0,
        high=64 * KIB,
    )
    budget_gamma: float = number(
        "AGENTTY_RAG_BUDGET_GAMMA",
        1.5,
        "A passage of relevance r deserves r^gamma of its length, and a short budget is shared in that "
        "proportion (0: every passage all of it, equal shares).",
        low=0.0,
        high=4.0,
    )
    conf_budget_floor: float = number(
        "AGENTTY_RAG_CONF_BUDGET_FLOOR",
        0.45,
        "Share of the output budget used at confidence 0; it ramps to all of it at confidence 1.",
        low=0.0,
        high=1.0,
    )
    extractive: bool = flag(
        "AGENTTY_RAG_EXTRACTIVE",
        True,
        "Compress long passages to the sentences / lines the query needs (0: first lines only).",
    )
    structured: bool = flag(
        "AGENTTY_RAG_STRUCTURED",
        False,
        "The tools also return structured content (and publish its output schema): the header's facts and each "
        "passage's provenance, lines, scores and labels, without the passage text, which the text content "
        "holds. Off: text only, what the model reads.",
    )
