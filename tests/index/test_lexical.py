"""A patched index scores exactly like a fresh build of the same documents."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.index.lexical import LexicalIndex, Segment

FIELDS = ("body", "title")
docs_strategy = st.lists(st.integers(0, 15), min_size=0, max_size=12)


def _terms(doc: list[int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    ids, counts = np.unique(np.asarray(doc, np.int32), return_counts=True)
    half = len(ids) // 2
    return {
        "body": (ids.astype(np.int32), counts.astype(np.int32)),
        "title": (ids[:half].astype(np.int32), counts[:half].astype(np.int32)),
    }


def _fresh(docs: dict[str, list[int]]) -> tuple[LexicalIndex, dict[str, int]]:
    index = LexicalIndex(FIELDS)
    slots = {}
    for slot, (key, doc) in enumerate(sorted(docs.items())):
        index.add(slot, _terms(doc))
        slots[key] = slot
    index.compact(16)
    return index, slots


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefgh"), docs_strategy, min_size=1),
    st.lists(st.tuples(st.sampled_from("abcdefghij"), st.none() | docs_strategy), max_size=15),
    st.lists(st.integers(0, 15), min_size=1, max_size=4),
)
def test_incremental_updates_equal_a_full_rebuild(initial, edits, query) -> None:
    index, slots = _fresh(initial)
    next_slot = len(slots)
    current = dict(initial)
    for step, (key, doc) in enumerate(edits):
        if key in slots:
            index.remove([slots.pop(key)])
            current.pop(key)
        if doc is not None:
            index.add(next_slot, _terms(doc))
            slots[key] = next_slot
            current[key] = doc
            next_slot += 1
        if step % 4 == 3:
            index.compact(16)
    rebuilt, rebuilt_slots = _fresh(current)
    weights = {"body": 1.0, "title": 0.5}
    patched_scores = index.score({"body": query, "title": query}, weights)
    fresh_scores = rebuilt.score({"body": query, "title": query}, weights)
    for key in current:
        assert abs(patched_scores[slots[key]] - fresh_scores[rebuilt_slots[key]]) < 1e-9
    dead = np.ones(len(patched_scores), bool)
    dead[list(slots.values())] = False
    assert not patched_scores[dead].any()


def test_segment_build_groups_postings_by_term_sorted_by_slot() -> None:
    segment = Segment.build(
        np.array([2, 0, 2, 1], np.int32), np.array([5, 3, 1, 3], np.int32), np.array([1, 2, 3, 4], np.float32), 3
    )
    assert segment.indptr.tolist() == [0, 1, 2, 4]
    assert segment.postings(2)[0].tolist() == [1, 5]
    assert segment.postings(7)[0].tolist() == []
