"""The token economy: the budget is never exceeded, the best hit is always there, each lever does what it says."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.budget import BudgetConfig, fit, relevances
from agentty_rag.budget.allocate import scaled_total, water_fill
from agentty_rag.budget.tokens import utf8_len
from agentty_rag.config import BudgetSettings, load_settings
from agentty_rag.types import Chunk, Hit

DEFAULT = BudgetConfig.from_settings(BudgetSettings())


def _hit(text: str, score: float, source: str = "docs") -> Hit:
    return Hit(Chunk(source, "a.md", 10, 10 + text.count("\n"), text, "markdown"), score)  # type: ignore[arg-type]


def _evidence(text: str) -> float:
    return float(text.count("token"))


texts = st.text(alphabet=st.sampled_from("ab token\n.é😀"), min_size=1, max_size=3000)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(texts, st.floats(0.01, 100), st.sampled_from(["docs", "code"])), min_size=1, max_size=50),
    st.integers(2048, 65536),
    st.floats(0, 1),
    st.floats(0, 4),
    st.floats(0, 1),
    st.booleans(),
)
def test_the_budget_is_never_exceeded_and_the_best_hit_is_always_kept(
    items, budget, floor, gamma, confidence, extractive
) -> None:
    items = sorted(items, key=lambda item: -item[1])
    hits = tuple(_hit(text, score, source) for text, score, source in items)
    config = BudgetConfig(budget, floor, gamma, 0.45, extractive)
    packed = fit(hits, config, confidence, _evidence)
    assert packed.passages[0].hit is hits[0]
    assert packed.used_bytes == sum(utf8_len(p.text) for p in packed.passages) <= packed.total_bytes <= budget
    assert [p.hit for p in packed.passages] == list(hits[: len(packed.passages)])  # never reordered
    for passage in packed.passages:
        passage.text.encode("utf-8")  # no split character


def test_relevance_floor_keeps_passages_at_or_above_the_fraction_and_always_the_best() -> None:
    hits = tuple(_hit(f"passage {i}", score) for i, score in enumerate([10.0, 8.0, 5.0, 3.0, 2.0]))
    kept = fit(hits, replace(DEFAULT, relevance_floor=0.5), 1.0, weakest=0.0)
    assert len(kept.passages) == 3 and kept.dropped_by_floor == 2  # 1.0, 0.8, 0.5 are kept; 0.3 and 0.2 are not
    assert len(fit(hits, replace(DEFAULT, relevance_floor=0.0), 1.0, weakest=0.0).passages) == 5
    assert len(fit(hits[:1], replace(DEFAULT, relevance_floor=1.0), 1.0).passages) == 1


def test_relevance_is_scaled_between_the_weakest_candidate_and_the_best() -> None:
    assert relevances([4.0, 3.0, 2.0], weakest=2.0) == [1.0, 0.5, 0.0]
    assert relevances([5.0, 5.0]) == [1.0, 1.0]


def test_confidence_ramps_the_total_linearly_from_its_floor() -> None:
    assert scaled_total(10_000, 0.0, 0.45) == 4500
    assert scaled_total(10_000, 0.5, 0.45) == 7250
    assert scaled_total(10_000, 1.0, 0.45) == 10_000
    assert scaled_total(10_000, 0.3, 1.0) == 10_000  # a floor of 1 switches scaling off


def test_gamma_shares_bytes_by_relevance_to_the_power_gamma() -> None:
    line = "token usage " * 5 + "\n"
    hits = tuple(_hit(line * 40, score) for score in (1.0, 1.0, 0.8, 0.5, 0.0))
    packed = fit(hits, replace(DEFAULT, relevance_floor=0.0, gamma=2.0, confidence_floor=1.0), 1.0, _evidence, 0.0)
    sizes = [utf8_len(p.text) for p in packed.passages]
    need = utf8_len(hits[0].chunk.text)
    assert sizes[0] == sizes[1] == need  # the two best hits are whole
    assert need * 0.64 * 0.9 <= sizes[2] <= need * 0.64  # relevance 0.8 -> 0.8 ** 2 of its length
    assert sizes[3] <= need * 0.25
    assert sizes[4] <= 240  # relevance 0 still gets a legible minimum
    flat = fit(hits, replace(DEFAULT, relevance_floor=0.0, gamma=0.0, confidence_floor=1.0), 1.0, _evidence, 0.0)
    assert all(utf8_len(p.text) == need for p in flat.passages)  # gamma 0: every passage deserves all of it


def test_water_filling_gives_what_short_passages_leave_to_the_others() -> None:
    assert water_fill([100, 5000, 5000], [1.0, 1.0, 1.0], 3000, 0) == [100, 1450, 1450]
    assert water_fill([5000, 5000], [3.0, 1.0], 4000, 0) == [3000, 1000]
    assert water_fill([5000, 5000, 5000], [1.0, 0.0, 0.0], 1000, 300) == [400, 300, 300]


@given(
    st.lists(st.integers(0, 5000), max_size=30),
    st.lists(st.floats(0, 3), min_size=30, max_size=30),
    st.integers(0, 70000),
    st.integers(0, 500),
)
def test_water_fill_never_exceeds_the_total_or_a_need(needs, weights, total, minimum) -> None:
    allowances = water_fill(needs, weights[: len(needs)], total, minimum)
    assert sum(allowances) <= total
    assert all(0 <= a <= n for a, n in zip(allowances, needs, strict=True))
    if minimum * len(needs) <= total:
        assert all(a >= min(n, minimum) for a, n in zip(allowances, needs, strict=True))


def test_each_lever_is_a_setting_with_its_default_and_clamp() -> None:
    settings = load_settings({})
    assert (settings.relevance_floor, settings.budget_gamma, settings.conf_budget_floor, settings.extractive) == (
        0.30,
        1.5,
        0.45,
        True,
    )
    assert settings.code_passage_bytes == 1200
    assert load_settings({"AGENTTY_RAG_CODE_PASSAGE_BYTES": "-5"}).code_passage_bytes == 0
    clamped = load_settings(
        {
            "AGENTTY_RAG_RELEVANCE_FLOOR": "2",
            "AGENTTY_RAG_BUDGET_GAMMA": "-1",
            "AGENTTY_RAG_CONF_BUDGET_FLOOR": "7",
            "AGENTTY_RAG_EXTRACTIVE": "0",
        }
    )
    assert (clamped.relevance_floor, clamped.budget_gamma, clamped.conf_budget_floor, clamped.extractive) == (
        1.0,
        0.0,
        1.0,
        False,
    )


def _code(text: str, score: float, start: int = 10) -> Hit:
    return Hit(Chunk("code", "src/a.py", start, start + text.count("\n"), text, "python", "function"), score)


def test_a_code_passage_shows_at_most_its_cap_and_the_ones_after_the_first_half_of_it() -> None:
    body = "\n".join(f"    step_{i} = token_source.refresh({i})" for i in range(120))
    hits = tuple(_code(f"def refresh_{n}(token):\n{body}", score) for n, score in enumerate([3.0, 2.9, 2.8]))
    config = replace(DEFAULT, code_passage_bytes=1200, relevance_floor=0.0)
    packed = fit(hits, config, 1.0, _evidence, weakest=0.0)
    sizes = [utf8_len(p.text) for p in packed.passages]
    assert sizes[0] <= 1200 and all(size <= 600 for size in sizes[1:]) and all(p.compressed for p in packed.passages)
    assert all(p.text.startswith("def refresh_") for p in packed.passages)  # the signature says what it is
    # No cap: the best passages show all they deserve; prose is never capped.
    uncapped = fit(hits, replace(config, code_passage_bytes=0), 1.0, _evidence, weakest=0.0)
    assert utf8_len(uncapped.passages[0].text) > 1200
    prose = tuple(_hit("token " * 400, score) for score in (3.0, 2.9))
    assert utf8_len(fit(prose, config, 1.0, _evidence, weakest=0.0).passages[0].text) > 1200


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts, st.floats(0.01, 100)), min_size=1, max_size=12), st.integers(0, 4000))
def test_no_code_passage_exceeds_its_cap_whatever_the_text(items, cap) -> None:
    items = sorted(items, key=lambda item: -item[1])
    hits = tuple(_code(text, score) for text, score in items)
    packed = fit(hits, replace(DEFAULT, code_passage_bytes=cap, relevance_floor=0.0), 1.0, _evidence)
    for rank, passage in enumerate(packed.passages):
        if cap:
            limit = max(cap if rank == 0 else cap // 2, 480)  # never below a legible code passage
            assert utf8_len(passage.text) <= limit
