"""The token-economy levers: what each of the output path's levers saves in bytes and tokens, and what it
costs in answers, measured on one ranking (``rag-bench --measure``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentty_rag.bench.datasets import Query
from agentty_rag.workspace.request import ranking_request
from agentty_rag.workspace.service import Workspace

# Token-economy rows: each lever switched off alone, all off, and all on (the default), on one ranking.
LEVERS: dict[str, dict[str, object]] = {
    "all levers on": {},
    "- relevance floor": {"relevance_floor": 0.0},
    "- water-filling": {"gamma": 0.0},
    "- confidence scaling": {"confidence_floor": 1.0},
    "- extractive": {"extractive": False},
    "- water-filling, - extractive": {"gamma": 0.0, "extractive": False},
    "all levers off": {"relevance_floor": 0.0, "gamma": 0.0, "confidence_floor": 1.0, "extractive": False},
}
TOKENS_PER_BYTE = 0.25  # ~4 bytes per token: the usual estimate for English text and code


def measure_levers(workspace: Workspace, corpus: str, queries: Sequence[Query], k: int) -> dict[str, dict[str, float]]:
    """Per token-economy row: bytes and tokens emitted per query, and how many answers survive.

    ``answers_in_output`` is the share of queries (with ``answers``) whose answer substrings all appear in the
    emitted text; ``answer_retention`` is that share among the queries whose answers the ranked passages held
    in full before the output path (what the output path keeps of what the ranking found).
    """
    base = workspace.budget()
    configs = {name: replace(base, **change) for name, change in LEVERS.items()}  # type: ignore[arg-type]
    totals = {name: {"bytes": 0, "kept": 0, "found_kept": 0} for name in configs}
    with_answers = found = 0
    for query in queries:
        outcome = workspace.search(ranking_request(corpus, query.text, k))
        ranked_text = "\n".join(hit.chunk.text for hit in outcome.result.hits)
        has_answers = bool(query.answers)
        in_ranking = has_answers and all(a in ranked_text for a in query.answers)
        with_answers += has_answers
        found += in_ranking
        for name, config in configs.items():
            text = outcome.refit(config).text
            totals[name]["bytes"] += len(text.encode("utf-8"))
            kept = has_answers and all(a in text for a in query.answers)
            totals[name]["kept"] += kept
            totals[name]["found_kept"] += kept and in_ranking
    count = max(len(queries), 1)
    nan = float("nan")
    return {
        name: {
            "bytes_per_query": t["bytes"] / count,
            "tokens_per_query": t["bytes"] * TOKENS_PER_BYTE / count,
            "answers_in_output": t["kept"] / with_answers if with_answers else nan,
            "answer_retention": t["found_kept"] / found if found else nan,
            "queries_with_answers": float(with_answers),
            "answers_in_ranking": float(found),
        }
        for name, t in totals.items()
    }


__all__ = ["LEVERS", "TOKENS_PER_BYTE", "measure_levers"]
