from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.mmr import jaccard, mmr_order

scores = st.lists(st.floats(0.01, 10), min_size=1, max_size=25)


@given(scores)
def test_lambda_one_keeps_relevance_order(relevance: list[float]) -> None:
    order = mmr_order(relevance, lambda i, j: 1.0, 1.0)
    assert order == sorted(range(len(relevance)), key=lambda i: (-relevance[i], i))


@given(scores, st.floats(0, 1), st.integers(1, 30))
def test_output_is_a_permutation_subset_without_duplicates(relevance: list[float], lam: float, limit: int) -> None:
    order = mmr_order(relevance, lambda i, j: ((i * 7 + j * 3) % 10) / 10, lam, limit=limit)
    assert len(order) == min(limit, len(relevance)) and len(set(order)) == len(order)
    assert set(order) <= set(range(len(relevance)))


@given(scores, st.integers(1, 4), st.floats(0, 1))
def test_the_per_file_cap_holds_while_other_files_remain(relevance: list[float], cap: int, lam: float) -> None:
    groups = ["a.py" if i % 3 else "b.py" for i in range(len(relevance))]
    order = mmr_order(relevance, lambda i, j: 0.0, lam, groups, cap)
    counts: dict[str, int] = {}
    for position, index in enumerate(order):
        group = groups[index]
        others_left = any(groups[j] != group and counts.get(groups[j], 0) < cap for j in order[position:])
        if counts.get(group, 0) >= cap:
            assert not others_left, "a capped file took a slot while another file still had candidates"
        counts[group] = counts.get(group, 0) + 1


def test_diversity_moves_a_near_copy_down() -> None:
    sets = [frozenset({1, 2, 3}), frozenset({1, 2, 3}), frozenset({7, 8, 9})]
    order = mmr_order([1.0, 0.95, 0.9], lambda i, j: jaccard(sets[i], sets[j]), 0.5)
    assert order == [0, 2, 1]
    assert jaccard(frozenset(), frozenset()) == 0.0
