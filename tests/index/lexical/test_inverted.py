"""A patched index scores exactly like a fresh build of the same documents."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.index.lexical.groups import group_statistics, score_groups
from agentty_rag.index.lexical.inverted import Postings, Segment

FIELDS = ("body", "title")
docs_strategy = st.lists(st.integers(0, 15), min_size=0, max_size=12)


def _terms(doc: list[int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    ids, counts = np.unique(np.asarray(doc, np.int32), return_counts=True)
    half = len(ids) // 2
    return {
        "body": (ids.astype(np.int32), counts.astype(np.int32)),
        "title": (ids[:half].astype(np.int32), counts[:half].astype(np.int32)),
    }


def _fresh(docs: dict[str, list[int]]) -> tuple[Postings, dict[str, int]]:
    index = Postings(FIELDS)
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


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), docs_strategy), min_size=1, max_size=12),
    st.lists(st.integers(0, 15), min_size=1, max_size=4),
    st.dictionaries(st.integers(0, 15), st.floats(0.1, 3.0), max_size=4),
)
def test_a_group_scores_as_one_document_holding_all_its_chunks(chunks, query, term_weights) -> None:
    """Scoring groups of chunks (the files they come from) equals scoring each group merged into one document."""
    index = Postings(FIELDS)
    merged: dict[int, list[int]] = {}
    for slot, (group, doc) in enumerate(chunks):
        index.add(slot, _terms(doc))
        merged.setdefault(group, []).append(slot)
    group_of_slot = np.array([group for group, _ in chunks], np.int32)
    groups = sorted(merged)
    # The reference: one document per group, its field terms the sums of its chunks'.
    reference = Postings(FIELDS)
    for position, group in enumerate(groups):
        fields: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name in FIELDS:
            counts: dict[int, int] = {}
            for slot in merged[group]:
                ids, tfs = _terms(chunks[slot][1])[name]
                for term, tf in zip(ids.tolist(), tfs.tolist(), strict=True):
                    counts[term] = counts.get(term, 0) + tf
            keys = sorted(counts)
            fields[name] = (np.asarray(keys, np.int32), np.asarray([counts[t] for t in keys], np.int32))
        reference.add(position, fields)
    weights = {"body": 1.0, "title": 0.5}
    q = {"body": query, "title": query}
    by_group = score_groups(index, q, weights, group_statistics(index, group_of_slot, 5), term_weights)
    expected = reference.score(q, weights, term_weights)
    for position, group in enumerate(groups):
        assert abs(by_group[group] - expected[position]) < 1e-9
    assert not by_group[[g for g in range(5) if g not in merged]].any()


def test_a_file_wide_field_counts_once_per_group() -> None:
    index = Postings(("body", "path"))
    one = {
        "body": (np.array([1], np.int32), np.array([1], np.int32)),
        "path": (np.array([7], np.int32), np.array([1], np.int32)),
    }
    other = {
        "body": (np.array([2], np.int32), np.array([1], np.int32)),
        "path": (np.array([8], np.int32), np.array([1], np.int32)),
    }
    for slot in range(3):  # a file of three chunks, all with path term 7
        index.add(slot, one)
    index.add(3, other)  # a file of one chunk, path term 8
    group_of_slot = np.array([0, 0, 0, 1], np.int32)
    weights = {"path": 1.0}
    groups = group_statistics(index, group_of_slot, 2, frozenset({"path"}))
    wide = score_groups(index, {"path": [7]}, weights, groups)
    single = score_groups(index, {"path": [8]}, weights, groups)
    # Both files hold their path term once: the same score, however many chunks repeat it.
    assert wide[0] > 0 and abs(wide[0] - single[1]) < 1e-12
