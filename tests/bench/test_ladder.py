"""rag-bench's ladder is built from the ranking stages' own rungs."""

from __future__ import annotations

from agentty_rag.bench.ladder import OUTPUT_RUNGS, RUNGS, ladder
from agentty_rag.retrieve.stages import Rung, rungs

OFF = {
    "AGENTTY_RAG_PRF": "0",
    "AGENTTY_RAG_DENSE": "0",
    "AGENTTY_RAG_EXPAND": "0",
    "AGENTTY_RAG_HYDE": "0",
    "AGENTTY_RAG_GRAPH": "0",
    "AGENTTY_RAG_RERANK": "0",
    "AGENTTY_RAG_FILES": "0",
    "AGENTTY_RAG_LEARN": "0",
    "AGENTTY_RAG_MMR": "0",
    "AGENTTY_RAG_CORRECT": "0",
    "AGENTTY_RAG_STITCH": "0",
}


def test_the_ladder_adds_the_default_stages_one_at_a_time_then_the_opt_in_ones() -> None:
    defaults = {**OFF, "AGENTTY_RAG_DENSE": "1", "AGENTTY_RAG_RERANK": "1", "AGENTTY_RAG_FILES": "1"}
    assert RUNGS == {
        "baseline": {},
        "bm25": OFF,
        "dense-only": {**OFF, "AGENTTY_RAG_DENSE": "1", "AGENTTY_RAG_BM25_WEIGHT": "0"},
        "+dense": {**OFF, "AGENTTY_RAG_DENSE": "1"},
        "+rerank": {**OFF, "AGENTTY_RAG_DENSE": "1", "AGENTTY_RAG_RERANK": "1"},
        "+files": defaults,
        "+stitch": {**defaults, "AGENTTY_RAG_STITCH": "1"},
        "+budget": {**defaults, "AGENTTY_RAG_STITCH": "1"},
        "dense+stages": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_BM25_WEIGHT": "0"},
        "+prf": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_PRF": "1"},
        "+expand": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_EXPAND": "1"},
        "+hyde": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_HYDE": "1"},
        "+graph": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_GRAPH": "1"},
        "+learn": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_LEARN": "1"},
        "+mmr": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_MMR": "1"},
        "+correct": {**defaults, "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_CORRECT": "1"},
    }
    assert list(RUNGS) == [
        *("baseline", "bm25", "dense-only", "+dense", "+rerank", "+files", "+stitch", "+budget", "dense+stages"),
        *("+prf", "+expand", "+hyde", "+graph", "+learn", "+mmr", "+correct"),
    ]
    assert OUTPUT_RUNGS == {
        "+budget",
        "dense+stages",
        "+prf",
        "+expand",
        "+hyde",
        "+graph",
        "+learn",
        "+mmr",
        "+correct",
        "current",
    }


def test_a_new_stage_appears_on_the_ladder_by_its_rung_alone() -> None:
    # Any boolean variable serves as the new stage's switch here: one on by default, one off.
    with_new = ladder([*rungs(), Rung("+new", "AGENTTY_RAG_EXTRACTIVE"), Rung("+later", "AGENTTY_RAG_CODE_SECRETS")])
    names = list(with_new)
    assert names.index("+stitch") < names.index("+new") < names.index("+budget") < names.index("+later")
    assert with_new["+new"]["AGENTTY_RAG_EXTRACTIVE"] == "1" and with_new["bm25"]["AGENTTY_RAG_EXTRACTIVE"] == "0"
    assert with_new["+later"] == {**with_new["+budget"], "AGENTTY_RAG_CODE_SECRETS": "1"}
