"""Per-file evidence, and the merge of the file order with the passage order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.index.engine import FileGroups
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.retrieve.files import best_chunk_of, chunk_sums, merge_orders, relative, top_indices


def test_top_indices_keeps_the_best_positive_scores_best_first() -> None:
    scores = np.array([0.0, 3.0, 1.0, 5.0, 3.0, -1.0])
    assert top_indices(scores, 2) == [3, 1, 4]  # a tie at the cut keeps both
    assert top_indices(scores, 10) == [3, 1, 4, 2]
    assert top_indices(scores, 0) == []


def test_best_chunk_of_each_file() -> None:
    chunk_scores = np.array([1.0, 4.0, 2.0, 0.0, 3.0, 4.0, 0.0])
    # files: 0 holds slots 0, 1, 5; 1 holds 2, 3; 2 holds 4; 3 holds 6 (which does not score)
    groups = FileGroups(
        np.array([0, 0, 1, 1, 2, 0, 3], np.int32),
        ("a", "b", "c", "d"),
        np.array([0, 1, 5, 2, 3, 4, 6], np.int32),
        np.array([0, 3, 5, 6, 7], np.int64),
    )
    lexical = LexicalScores(chunk_scores, np.zeros(4), groups)
    assert best_chunk_of([0, 1, 3], lexical) == {0: 1, 1: 2}  # a tie goes to the lower slot
    assert best_chunk_of([], lexical) == {}


def test_chunk_sums_add_up_the_best_chunks_of_each_file() -> None:
    chunk_scores = np.array([1.0, 4.0, 2.0, 0.5, 3.0])
    file_of_slot = np.array([0, 0, 1, 1, 2], np.int32)
    # the three best chunks: 4 (file 0), 3 (file 2), 2 (file 1)
    assert chunk_sums(chunk_scores, file_of_slot, 3, 3).tolist() == [1.0, 0.5, 0.75]
    assert chunk_sums(chunk_scores, file_of_slot, 3, 0).tolist() == [0.0, 0.0, 0.0]
    assert relative(np.array([2.0, 1.0])).tolist() == [1.0, 0.5]


def test_the_file_order_leads_then_the_orders_alternate() -> None:
    by_file = ["a1", "b1", "c1", "a2", "d1"]
    by_passage = ["a2", "x1", "a1", "y1", "b1"]
    same = lambda item: item  # noqa: E731
    assert merge_orders(by_file, by_passage, 2, same) == ["a1", "b1", "a2", "c1", "x1", "d1", "y1"]
    assert merge_orders(by_file, by_passage, 0, same) == ["a2", "a1", "x1", "b1", "y1", "c1", "d1"]


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=15),
    st.lists(st.integers(0, 30), unique=True, max_size=15),
    st.integers(0, 5),
)
def test_merging_keeps_every_item_once_and_no_item_falls_far_behind_its_rank(by_file, by_passage, lead) -> None:
    merged = merge_orders(by_file, by_passage, lead, lambda item: item)
    assert sorted(merged) == sorted(set(by_file) | set(by_passage))
    assert merged[: min(lead, len(by_file))] == by_file[: min(lead, len(by_file))]
    position = {item: i for i, item in enumerate(merged)}
    # Turns: ``lead`` file turns, then passage, file, passage ... Each turn places one item, so the i-th
    # item of an order is placed no later than that order's (i + 1)-th turn.
    for i, item in enumerate(by_passage):
        assert position[item] <= lead + 2 * i
    for i, item in enumerate(by_file):
        assert position[item] <= (i if i < lead else lead + 2 * (i - lead) + 1)
