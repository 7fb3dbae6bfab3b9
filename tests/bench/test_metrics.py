from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.bench.metrics import gains_from_matches, hit_at, ndcg_at, percentile, recall_at, reciprocal_rank


def test_hand_computed_values() -> None:
    matches = [[], [0], [], [1]]
    gains = gains_from_matches(matches)
    assert gains == [0, 1, 0, 1]
    assert reciprocal_rank(gains) == 0.5
    assert recall_at(matches, 2, 1) == 0.0 and recall_at(matches, 2, 2) == 0.5 and recall_at(matches, 2, 4) == 1.0
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert abs(ndcg_at(gains, 2, 10) - expected) < 1e-12


def test_hit_at_k_is_whether_anything_relevant_is_in_the_top_k() -> None:
    gains = gains_from_matches([[], [], [1], [0]])
    assert [hit_at(gains, k) for k in (1, 2, 3, 4)] == [0.0, 0.0, 1.0, 1.0]
    assert hit_at([], 10) == 0.0


def test_duplicates_in_a_ranking_earn_nothing() -> None:
    gains = gains_from_matches([[0], [0], [0]])
    assert gains == [1, 0, 0]
    assert ndcg_at(gains, 1, 10) == 1.0


def test_no_relevant_document() -> None:
    assert reciprocal_rank([0, 0]) == 0.0
    assert ndcg_at([0, 0], 0, 10) == 0.0
    assert recall_at([[], []], 0, 10) == 0.0


def test_one_hit_matching_two_relevant_items() -> None:
    matches = [[0, 1]]
    assert recall_at(matches, 2, 1) == 1.0
    assert gains_from_matches(matches) == [1]


def test_percentile_nearest_rank() -> None:
    assert percentile([5, 1, 3, 2, 4], 0.5) == 3
    assert percentile([5, 1, 3, 2, 4], 0.95) == 5
    assert percentile([], 0.5) == 0.0


rankings = st.lists(st.lists(st.integers(0, 4), max_size=2), max_size=15)


@given(rankings, st.integers(1, 5))
def test_ndcg_is_between_zero_and_one(matches: list[list[int]], n_relevant: int) -> None:
    matches = [[m for m in ms if m < n_relevant] for ms in matches]
    value = ndcg_at(gains_from_matches(matches), n_relevant, 10)
    assert 0.0 <= value <= 1.0 + 1e-12


@given(rankings, st.integers(1, 5))
def test_recall_never_falls_as_k_grows(matches: list[list[int]], n_relevant: int) -> None:
    matches = [[m for m in ms if m < n_relevant] for ms in matches]
    values = [recall_at(matches, n_relevant, k) for k in range(1, 16)]
    assert values == sorted(values)


@given(rankings, st.integers(1, 5), st.integers(1, 15))
def test_hit_is_at_least_recall_and_equals_it_for_one_relevant_item(
    matches: list[list[int]], n_relevant: int, k: int
) -> None:
    matches = [[m for m in ms if m < n_relevant] for ms in matches]
    gains = gains_from_matches(matches)
    assert recall_at(matches, n_relevant, k) <= hit_at(gains, k)
    single = [[m for m in ms if m == 0] for ms in matches]
    assert hit_at(gains_from_matches(single), k) == recall_at(single, 1, k)
