"""The SQLite lexical backend through the ``LexicalIndex`` protocol: scores over candidates are the scores over
every slot at those slots, a patch moves only the documents it names, a build and a patch of the same
documents score alike, and the registry names the backend."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.index.lexical.backends import BACKENDS, lexical_index
from agentty_rag.index.lexical.chunk_terms import FileLayout, FileTerms
from agentty_rag.index.lexical.inverted import Segment
from agentty_rag.index.lexical.protocol import FieldTerms, LexicalIndex, LexicalQuery
from agentty_rag.index.lexical.sqlite import SqliteLexical, read_segments, write_segments
from agentty_rag.index.storage.store import Store
from agentty_rag.index.storage.views import FileGroups
from tests.index.test_engine import _code

FIELDS = ("body", "title")
WEIGHTS = {"body": 1.0, "title": 0.5}
docs_strategy = st.lists(st.integers(0, 11), min_size=1, max_size=10)


def _terms(doc: list[int]) -> dict[str, FieldTerms]:
    ids, counts = np.unique(np.asarray(doc, np.int32), return_counts=True)
    half = len(ids) // 2
    return {
        "body": (ids.astype(np.int32), counts.astype(np.int32)),
        "title": (ids[:half].astype(np.int32), counts[:half].astype(np.int32)),
    }


def _patched(store: Store, docs: list[list[int]]) -> SqliteLexical:
    lexical = SqliteLexical(FIELDS, lambda: store)
    with store.transaction():
        lexical.patch(store, [], [(slot, _terms(doc)) for slot, doc in enumerate(docs)], 12, len(docs))
    return lexical


def _query(terms: list[int]) -> LexicalQuery:
    return LexicalQuery({term: 1.0 + term / 10 for term in terms}, WEIGHTS)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "lexical.ragdb")
    yield opened
    opened.close()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(docs_strategy, min_size=1, max_size=12), st.lists(st.integers(0, 11), min_size=1, max_size=4), st.data()
)
def test_scores_over_candidates_are_the_scores_over_every_slot_at_them(tmp_path_factory, docs, terms, data) -> None:
    store = Store(tmp_path_factory.mktemp("db") / "lexical.ragdb")
    lexical = _patched(store, docs)
    lexical.patch(store, data.draw(st.lists(st.integers(0, len(docs) - 1), max_size=3)), [], 12, len(docs))
    everything = lexical.score(_query(terms))
    # Any candidates: repeated, out of order, dead, beyond the last slot.
    candidates = np.asarray(data.draw(st.lists(st.integers(0, len(docs) + 2), max_size=15)), np.int32)
    among = lexical.score(_query(terms), candidates)
    expected = [float(everything[s]) if s < len(everything) else 0.0 for s in candidates.tolist()]
    assert among.tolist() == expected  # bit for bit: the same sums in the same order
    store.close()


def test_a_patch_changes_the_scores_of_the_documents_it_names_and_the_statistics_only(store: Store) -> None:
    docs = [[1, 2, 2], [2, 3], [4, 5], [1, 6, 6]]
    lexical = _patched(store, docs)
    query = _query([4, 5, 7])
    before = lexical.score(query)
    with store.transaction():
        compacted = lexical.patch(store, [1], [(4, _terms([8, 9]))], 12, 5)  # as long as the one it replaces
    after = lexical.score(query)
    assert not compacted  # a small delta stays a delta
    assert after[1] == 0.0 and lexical.n_live == 4 and lexical.live_slots().tolist() == [0, 2, 3, 4]
    # The query's terms are only in slot 2: its text and the statistics (as many documents, as long) held.
    assert after[2] == before[2] > 0
    assert not np.delete(after, 2).any()


def test_a_patched_index_scores_like_a_fresh_build_of_the_same_documents(store: Store, tmp_path: Path) -> None:
    docs = {"a": [1, 2, 2, 9], "b": [2, 3], "c": [4, 5, 1], "d": [1, 6, 6]}
    lexical = _patched(store, list(docs.values()))
    with store.transaction():
        lexical.patch(store, [1], [(4, _terms([2, 3, 3, 7]))], 12, 5)
    final = {"a": docs["a"], "c": docs["c"], "d": docs["d"], "b": [2, 3, 3, 7]}
    slots = {"a": 0, "c": 2, "d": 3, "b": 4}
    other = Store(tmp_path / "fresh.ragdb")
    fresh = SqliteLexical(FIELDS, lambda: other)
    counted = [
        {
            name: Counter({f"t{t}": n for t, n in zip(*(a.tolist() for a in terms), strict=True)})
            for name, terms in _terms(d).items()
        }
        for d in final.values()
    ]
    file_terms = FileTerms.of(counted)
    index_ids = np.asarray([int(term[1:]) for term in file_terms.terms], np.int32)
    build = fresh.builder()
    build.add(0, FileLayout(FIELDS, file_terms, index_ids, len(final)))
    with other.transaction():
        build.finish(other, 12, len(final))
    query = _query([1, 2, 3, 7])
    patched, built = lexical.score(query), fresh.score(query)
    for position, key in enumerate(final):
        assert patched[slots[key]] == pytest.approx(built[position], abs=1e-12)
    assert lexical.document_frequency("body", 2) == fresh.document_frequency("body", 2) == 2
    other.close()


def test_files_score_as_one_document_and_a_text_outside_scores_as_inside(store: Store) -> None:
    lexical = _patched(store, [[1, 2], [2, 3], [3, 3, 4]])
    groups = FileGroups(
        np.array([0, 0, 1], np.int32), ("a.py", "b.py"), np.array([0, 1, 2], np.int32), np.array([0, 2, 3], np.int64)
    )
    query = _query([2, 3])
    files = lexical.score_files(query, groups)
    assert files[0] > 0 and files[1] > 0
    body, title = _terms([3, 3, 4])["body"], _terms([3, 3, 4])["title"]
    counts = {
        "body": dict(zip(body[0].tolist(), body[1].tolist(), strict=True)),
        "title": dict(zip(title[0].tolist(), title[1].tolist(), strict=True)),
    }
    lengths = {"body": float(body[1].sum()), "title": float(title[1].sum())}
    assert lexical.score_outside((counts, lengths), query) == pytest.approx(float(lexical.score(query)[2]), abs=1e-12)
    assert lexical.score_file_outside(1, {2: (counts, lengths)}, query, groups) == pytest.approx(files[1], abs=1e-12)


def test_the_registry_builds_the_named_backend_and_refuses_an_unknown_one(store: Store, tmp_path: Path) -> None:
    config = _code(tmp_path).config
    made: LexicalIndex = lexical_index(config, lambda: store)
    assert isinstance(made, SqliteLexical) and made.field_names == config.field_names
    assert set(BACKENDS) == {"sqlite", "qdrant"}
    with pytest.raises(ValueError, match="unknown lexical backend 'nope'.*sqlite"):
        lexical_index(dataclasses.replace(config, lexical="nope"), lambda: store)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 200_000), st.sampled_from([1.0, 2.0, 70_000.0, 0.5])), max_size=8),
        max_size=6,
    ),
    st.lists(st.sampled_from([0.0, 3.0, 17.0, 0.25]), max_size=5),
)
def test_stored_segments_read_back_as_the_arrays_written(tmp_path_factory, terms, lengths) -> None:
    """Counts, gaps and frequencies past 16 bits, fractional ones, terms without postings: every array as it was."""
    store = Store(tmp_path_factory.mktemp("segments") / "segments.ragdb")
    postings = [sorted(dict(term).items()) for term in terms]  # each term's slots distinct and ascending
    counts = np.asarray([len(p) for p in postings], np.int64)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    slots = np.asarray([slot for p in postings for slot, _ in p], np.int32)
    tfs = np.asarray([tf for p in postings for _, tf in p], np.float32)
    segment = Segment(indptr, slots, tfs)
    slot_lengths = np.asarray(lengths, np.float64)
    with store.transaction():
        write_segments(store, {"body": segment}, {"body": slot_lengths})
    segments, read_lengths = read_segments(store, ("body",))
    store.close()
    got = segments["body"]
    assert got.indptr.tolist() == indptr.tolist() and got.slots.tolist() == slots.tolist()
    assert got.tfs.tolist() == tfs.tolist() and read_lengths["body"].tolist() == slot_lengths.tolist()
    assert got.slots.dtype == np.int32 and got.tfs.dtype == np.float32 and got.indptr.dtype == np.int64
