"""Token efficiency: the tokens an agent reads of a search's text, header included, to the end of the first
passage that counts as found (characters / 4); recall within a budget and expected tokens per query."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.bench.datasets import Label, Query
from agentty_rag.bench.ladder import reading
from agentty_rag.bench.metrics import MISS_TOKENS, expected_tokens, recall_within, tokens_to_first_hit
from agentty_rag.bench.run import TOKEN_BUDGETS, RungResult, score_query
from agentty_rag.budget import BudgetConfig, fit
from agentty_rag.config import BudgetSettings, load_settings
from agentty_rag.render import answer_key, passage_ends, render_text, sources_line
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.types import Chunk, Funnel, Hit, SearchResult
from agentty_rag.workspace.outcome import Outcome
from agentty_rag.workspace.request import ranking_request
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, answer_fence

tokens_lists = st.lists(st.one_of(st.none(), st.floats(0, 40_000, allow_nan=False)), max_size=30)


@given(tokens_lists, st.lists(st.floats(0, 50_000, allow_nan=False), min_size=1, max_size=6))
def test_token_recall_is_a_share_that_never_falls_as_the_budget_grows(
    tokens: list[float | None], budgets: list[float]
) -> None:
    values = [recall_within(tokens, budget) for budget in sorted(budgets)]
    assert values == sorted(values)
    assert all(0.0 <= value <= 1.0 for value in values)


@given(tokens_lists)
def test_expected_tokens_counts_a_miss_as_32000(tokens: list[float | None]) -> None:
    with_miss = [*tokens, None]
    assert MISS_TOKENS == 32_000
    total = sum(32_000 if t is None else t for t in with_miss)
    assert abs(expected_tokens(with_miss) - total / len(with_miss)) <= 1e-9 * max(total, 1.0)
    assert expected_tokens([None, None]) == 32_000 and expected_tokens([]) == 0.0


@given(st.lists(st.tuples(st.integers(1, 10_000), st.booleans()), max_size=10))
def test_the_tokens_to_the_first_hit_are_where_the_first_found_passage_ends_over_4(
    passages: list[tuple[int, bool]],
) -> None:
    ends = sorted(end for end, _ in passages)
    found = [hit for _, hit in passages]
    first = next((end for end, hit in zip(ends, found, strict=True) if hit), None)
    assert tokens_to_first_hit(ends, found) == (None if first is None else first / 4)


# -- where each passage ends in the rendered text ------------------------------------------------------------

chunks = st.builds(
    Chunk,
    st.sampled_from(["code", "docs"]),
    st.sampled_from(["a.py", "pkg/b.go", "guide/c.md"]),
    st.integers(1, 50),
    st.integers(51, 90),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=300),
    st.sampled_from(["python", "markdown"]),
    st.just("function"),
    st.text(max_size=12),
    st.text(max_size=12),
)
hits = st.lists(
    st.builds(Hit, chunks, st.floats(0.1, 10), st.lists(st.text(max_size=20), max_size=2).map(tuple)),
    max_size=6,
)


@given(hits, st.sampled_from([2048, 12288]))
def test_each_passage_ends_where_the_next_one_s_fence_starts_and_the_last_where_the_sources_line_does(
    found: list[Hit], output_bytes: int
) -> None:
    ranked = tuple(sorted(found, key=lambda h: -h.score))
    result = SearchResult("search_code", "q", "bm25", ranked, Funnel().then("lexical", len(ranked)))
    budget = replace(BudgetConfig.from_settings(BudgetSettings()), total_bytes=output_bytes)
    packed = fit(ranked, budget, 0.8, weakest=0.0)
    text = render_text(result, packed)
    ends = passage_ends(result, packed)
    assert len(ends) == len(packed.passages)
    if not ends:
        return
    fence = f"--- {answer_key(packed)}"
    assert text[ends[-1] :] == "\n" + sources_line(answer_key(packed), packed)  # never counted: read after all
    starts = [text.index(f"\n{fence}\n[1] "), *ends[:-1]]
    for number, (start, end, passage) in enumerate(zip(starts, ends, packed.passages, strict=True), start=1):
        assert text[start:].startswith(f"\n{fence}\n[{number}] ") and passage.text in text[start:end]


# -- on the committed fixtures, through the real output path --------------------------------------------------


QUESTION = "where do we refresh an expired auth token?"


def test_tokens_to_the_hit_are_the_header_and_every_passage_up_to_the_found_one_over_4(tmp_path: Path) -> None:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    workspace = Workspace(root, load_settings(LEXICAL))
    workspace.index("code").refresh()
    outcome = workspace.search(ranking_request("code", QUESTION, 10))
    workspace.close()
    text, shown = outcome.text, reading(outcome)
    first = shown.hits[0].chunk
    later = next(i for i, hit in enumerate(shown.hits) if hit.chunk.ref != first.ref)  # another file's first
    fence = answer_fence(text)
    first_end = text.index(f"\n{fence}\n[2] ")
    later_end = text.index(f"\n{fence}\n[{later + 2}] " if later + 1 < len(shown.hits) else f"\n{fence} · sources: ")
    assert text[:first_end].startswith("search_code · bm25 · funnel ")  # the header counts

    def tokens(label: str, level: str) -> float | None:
        query = Query("q", QUESTION, (Label.parse(label, "code"),))
        return score_query(query, shown.hits, level, 0.0, shown).tokens_to_hit

    # the answer is the first passage: the header and that passage
    assert tokens(f"{first.ref}:{first.start_line}-{first.end_line}", "passage") == first_end / 4
    assert tokens(first.ref, "file") == first_end / 4
    # a file first shown further down: everything before it is read too
    assert tokens(shown.hits[later].chunk.ref, "file") == later_end / 4
    assert tokens("web/nowhere.ts", "file") is None


def test_a_rung_s_token_figures_pool_its_queries_and_a_miss_costs_32000() -> None:
    chunk = Chunk("code", "a.py", 1, 9, "def f():\n    return 1", "python", "function", "", "f")
    shown = (Hit(chunk, 1.0),)
    found = Query("q1", "x", (Label.parse("a.py", "code"),))
    missed = Query("q2", "x", (Label.parse("b.py", "code"),))
    result = SearchResult("search_code", "x", "bm25", shown, Funnel().then("lexical", 1))
    budget = BudgetConfig.from_settings(BudgetSettings())
    text = render_text(result, fit(shown, budget, 1.0, weakest=0.0))
    read = reading(Outcome(result, Retrieved(shown, result.funnel, "bm25", confidence=1.0, weakest=0.0), budget))
    rung = RungResult("r", [score_query(q, shown, "file", 0.0, read) for q in (found, missed)])
    figures = rung.summary()
    assert {key: figures[key] for key, _ in TOKEN_BUDGETS} == dict.fromkeys((k for k, _ in TOKEN_BUDGETS), 0.5)
    read_to = text.index(f"\n{answer_fence(text)} · sources: ")  # the header and the passage, not the sources
    assert figures["expected_tokens"] == (read_to / 4 + 32_000) / 2
    # no text read (the baseline): no token figures at all
    assert "expected_tokens" not in RungResult("baseline", [score_query(found, shown, "file", 0.0)]).summary()
