from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.budget import MIN_PASSAGE_BYTES, fit, trim_to, utf8_len, water_fill
from agentty_rag.types import Chunk, Hit


def _hit(text: str, score: float, start: int = 10) -> Hit:
    return Hit(Chunk("docs", "a.md", start, start + text.count("\n"), text), score)


@given(st.lists(st.integers(0, 5000), max_size=30), st.integers(0, 70000))
def test_water_fill_never_exceeds_budget_or_need(needs: list[int], budget: int) -> None:
    allowances = water_fill(needs, budget)
    assert sum(allowances) <= budget
    assert all(0 <= a <= n for a, n in zip(allowances, needs, strict=True))
    if sum(needs) <= budget:
        assert allowances == needs


def test_water_fill_gives_what_short_passages_leave_to_the_others() -> None:
    assert water_fill([100, 5000, 5000], 3000) == [100, 1450, 1450]


@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=3000), st.floats(0.01, 100)), min_size=1, max_size=50),
    st.integers(2048, 65536),
)
def test_fit_keeps_the_best_hit_and_stays_within_budget(items: list[tuple[str, float]], budget: int) -> None:
    hits = tuple(_hit(text, score) for text, score in items)
    passages = fit(hits, budget)
    assert passages[0].hit is hits[0]
    assert sum(utf8_len(p.text) for p in passages) <= budget
    assert [p.hit for p in passages] == list(hits[: len(passages)])  # order is never changed


def test_trimming_keeps_whole_lines_and_never_splits_a_character() -> None:
    text = "first line\nsecond line\nthird line"
    assert trim_to(text, 25) == ("first line\n…", 1, True)
    emoji = "😀" * 100
    trimmed, lines, cut = trim_to(emoji, 50)
    assert cut and lines == 1 and utf8_len(trimmed) <= 50
    trimmed.encode("utf-8")  # valid text


def test_tail_hits_are_dropped_when_the_budget_cannot_give_each_a_minimum() -> None:
    hits = tuple(_hit("x" * 1000, 1.0 / (i + 1)) for i in range(50))
    passages = fit(hits, 2048)
    assert len(passages) == 2048 // MIN_PASSAGE_BYTES
    trimmed = passages[0]
    assert trimmed.trimmed and trimmed.start_line == 10 and trimmed.end_line == 10
