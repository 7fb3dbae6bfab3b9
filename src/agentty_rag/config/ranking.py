"""The settings of ranking: the fusion weights and which stages run after candidate generation.

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import flag, integer, number


@dataclass(frozen=True)
class RankingSettings:
    """Ranking: the fusion weights and which stages run after candidate generation."""

    bm25_weight: float = number(
        "AGENTTY_RAG_BM25_WEIGHT", 1.0, "Weight of the lexical leg in the fusion.", low=0.0, high=10.0
    )
    dense_weight: float = number(
        "AGENTTY_RAG_DENSE_WEIGHT",
        1.0,
        "Weight of the dense leg in the fusion (0: no dense influence at all).",
        low=0.0,
        high=10.0,
    )
    hubness: float = number(
        "AGENTTY_RAG_HUBNESS",
        0.2,
        "Code: the share of a chunk's neighbourhood density (its mean similarity to its 10 nearest chunks) "
        "taken off its dense similarity to the query, so that chunks near every query do not crowd out the one "
        "near this query (0: plain cosine similarity; the docs index always compares by plain cosine).",
        low=0.0,
        high=1.0,
    )
    leg_check: bool = flag(
        "AGENTTY_RAG_LEG_CHECK",
        True,
        "Code: once an index's vectors are complete, rank its own documented definitions (docs hidden) by the "
        "lexical leg and by the fusion; when the fusion clearly loses, that index's searches stay lexical. "
        "Not applied when either leg's weight is set.",
    )
    rerank: bool = flag("AGENTTY_RAG_RERANK", True, "The feature reranker after fusion.")
    file_ranking: bool = flag(
        "AGENTTY_RAG_FILES",
        True,
        "Code: files scored as a whole (BM25 of the file, its best chunks, the names the query asks for); "
        "the file order is merged with the passage order (needs the reranker).",
    )
    mmr: bool = flag(
        "AGENTTY_RAG_MMR",
        False,
        "MMR diversification with a per-file cap (off: it lowered MRR and nDCG@10 on every benchmark set).",
    )
    mmr_lambda: float = number(
        "AGENTTY_RAG_MMR_LAMBDA",
        0.7,
        "MMR trade-off: 1 keeps the relevance order, 0 picks for novelty only.",
        low=0.0,
        high=1.0,
    )
    prf: bool = flag(
        "AGENTTY_RAG_PRF",
        False,
        "Pseudo-relevance feedback: the query expanded (RM3) from its best lexical passages and searched once "
        "more; skipped when the first pass is confident.",
    )
    prf_docs: int = integer(
        "AGENTTY_RAG_PRF_DOCS", 8, "Feedback: how many of the best lexical passages feed it.", low=1, high=50
    )
    prf_terms: int = integer("AGENTTY_RAG_PRF_TERMS", 8, "Feedback: how many terms join the query.", low=1, high=50)
    correct: bool = flag(
        "AGENTTY_RAG_CORRECT",
        False,
        "Corrective grading: each candidate graded correct / ambiguous / incorrect from its retrieval score and "
        "lexical (or dense) support; incorrect ones give way to the next; a poor retrieval gets one second try.",
    )
    stitch: bool = flag(
        "AGENTTY_RAG_STITCH",
        True,
        "Merge neighbouring passages of one file and collapse near-duplicate passages.",
    )
    learn: bool = flag(
        "AGENTTY_RAG_LEARN",
        False,
        "Implicit learning (experimental): searches remember the docs and code files they showed, "
        "`agentty-rag feedback` (a PostToolUse hook: `init claude-code --learn`) records the ones the "
        "agent then opened, and a small capped prior lifts them for similar later queries.",
    )
    learn_half_life_days: float = number(
        "AGENTTY_RAG_LEARN_HALF_LIFE_DAYS",
        14.0,
        "Implicit learning: a feedback row counts half as much after this many days.",
        low=0.5,
        high=365.0,
    )
